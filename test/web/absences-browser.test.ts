// "Can't make it" (issue 30) through the whole service as `rostercal serve` runs it, against the sandbox over HTTP:
// a parent on a phone (390 px, real Chromium) reports from the child's page, sees it, undoes it; the emulator holds
// exactly one absence, then none; the coach's /staff and attendance sheet (read back with PDF.js) show it at once
// and after a pull; a retried report makes no second absence; the limits, a rotated link, CSRF, team and staff
// links, a token that may not write (403) and an upstream that fails each behave as the issue asks; the audit log
// (and `rostercal audit`) holds every act; nothing of it reaches a team feed or another child's page.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { familyReportOf } from '../../src/domain/family-absence.ts';
import type { Id } from '../../src/domain/types.ts';
import { FeedTokens, loadFeedSecret } from '../../src/feeds/tokens.ts';
import { hashSessionId } from '../../src/identity/staff-sessions.ts';
import { type RunningService, startService } from '../../src/running-service.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import type { FeedScope } from '../../src/store/types.ts';
import type { UpstreamClient } from '../../src/upstream/api.ts';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import { type Browser, launchBrowser, type Page } from '../support/browser.ts';
import { runRostercal } from '../support/cli.ts';
import { TEST_NOW } from '../support/clock.ts';
import { pdfText } from '../support/pdf.ts';
import { expectPhoneFriendly } from '../support/phone.ts';
import { freePort } from '../support/ports.ts';
import { requestFrom } from '../support/proxy.ts';
import { until, untilValue } from '../support/until.ts';

const ADMIN = 'test-admin-token-absences-91c2';
const REASON = 'dentist appointment';

/** In front of the sandbox for the school that writes: passes everything, or fails absence writes on demand. */
interface Gate {
  url: string;
  mode: 'pass' | 'fail-500' | 'down';
  close(): Promise<void>;
}

async function gate(target: string): Promise<Gate> {
  const to = new URL(target);
  const g = { mode: 'pass' } as Gate;
  const server: Server = createServer((req, res) => {
    const write = req.method !== 'GET' && (req.url ?? '').startsWith('/pre-explained-absences');
    if (write && g.mode === 'fail-500') {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
      return;
    }
    if (write && g.mode === 'down') {
      req.socket.destroy();
      return;
    }
    const onward = httpRequest(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    onward.on('error', () => res.writeHead(502).end());
    req.pipe(onward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  g.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  g.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return g;
}

let sandbox: Sandbox;
let upstream: UpstreamClient;
let proxy: Gate;
let service: RunningService;
let tokens: FeedTokens;
let browser: Browser;
let dir: string;
let configFile: string;
let base: string;

beforeAll(async () => {
  // serve runs on the real clock: the school is built around this week and the sandbox stamps its writes (the
  // families' absences) on the real time, as the product's pull cursors are.
  // The school and serve's clock at TEST_NOW, in term: a school built around the real week has no sessions to
  // report in the NSW summer break (about 20 December to early February of every year).
  sandbox = await startSandbox({ seed: 3, scale: 'small', now: TEST_NOW });
  upstream = createUpstreamClient({ baseUrl: sandbox.url, token: sandbox.token });
  proxy = await gate(sandbox.url);
  dir = mkdtempSync(path.join(tmpdir(), 'rostercal-absences-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const raw = {
    dataDir: dir,
    publicUrl: base,
    schools: [
      {
        id: 'hill',
        name: 'Hillcrest College',
        upstream: { url: proxy.url, token: sandbox.token },
        timeZone: sandbox.school.timeZone,
        families: { reportAbsences: true, reportsPerChildPerDay: 3, actsPerAddressPerHour: 8 },
      },
      {
        // The same school through a token that may only read: its writes answer 403.
        id: 'ro',
        name: 'Read-only College',
        upstream: { url: sandbox.url, token: sandbox.readonlyToken },
        timeZone: sandbox.school.timeZone,
        families: { reportAbsences: true },
      },
      {
        id: 'off',
        name: 'Not-turned-on College',
        upstream: { url: sandbox.url, token: sandbox.token },
        timeZone: sandbox.school.timeZone,
      },
    ],
  };
  configFile = path.join(dir, 'config.json');
  writeFileSync(configFile, JSON.stringify(raw));
  const config = {
    ...parseConfig(raw),
    sandboxNow: TEST_NOW,
    publicUrl: base,
    source: { kind: 'file' as const, path: configFile },
  };
  service = await startService({ config, port, host: '127.0.0.1', adminToken: ADMIN });
  await service.initialPulls;
  tokens = new FeedTokens(service.store, loadFeedSecret({ dataDir: dir, create: false }));
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
  await proxy?.close();
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Students of a school with at least `n` upcoming, not cancelled sessions, each used by one test only. */
const taken = new Set<Id>();
async function student(school = 'hill', n = 2): Promise<{ id: Id; firstName: string; sessions: Id[] }> {
  // Upcoming on the school's clock (serve's and the sandbox's, from TEST_NOW).
  const now = Date.parse(sandbox.now());
  for (const s of await service.store.records.list(school, 'students')) {
    if (taken.has(s.id)) continue;
    const sessions = (
      await service.store.records.listSessions(school, {
        studentId: s.id,
        from: new Date(now + 3_600_000).toISOString(),
        to: new Date(now + 14 * 86_400_000).toISOString(),
      })
    ).filter((x) => !x.cancelled && x.teams.length > 0);
    if (sessions.length < n) continue;
    taken.add(s.id);
    // The earliest first: the one its page lists.
    sessions.sort((x, y) => x.start.localeCompare(y.start));
    return { id: s.id, firstName: s.firstName, sessions: sessions.map((x) => x.id) };
  }
  throw new Error('no student with upcoming sessions left');
}

async function pageOf(scope: FeedScope, id: Id, school = 'hill'): Promise<string> {
  const issued = await tokens.ensure(school, scope, id);
  return `${base}/feeds/${issued.token}`;
}

/** A child of the school not used by another test, and the address of its page. */
async function childPage(
  school = 'hill',
): Promise<{ child: Awaited<ReturnType<typeof student>>; url: string }> {
  const child = await student(school);
  return { child, url: await pageOf('student', child.id, school) };
}

/** A refusal: its status, its words, and nothing written upstream for the child. */
async function expectRefused(
  r: { status: number; body: string },
  status: number,
  words: string,
  studentId: Id,
): Promise<void> {
  expect(r.status).toBe(status);
  expect(r.body).toContain(words);
  expect(await reportedUpstream(studentId)).toHaveLength(0);
}

/** The sandbox's absences of a student that a calendar page reported. */
async function reportedUpstream(studentId: Id): Promise<{ id: Id; reason: string; start: string }[]> {
  const out: { id: Id; reason: string; start: string }[] = [];
  for await (const page of upstream.preExplainedAbsences({ studentIds: [studentId] }))
    for (const a of page.records) if (familyReportOf(a)) out.push(a);
  return out;
}

/** The sessions a page offers "Can't make it?" for, in its order. */
function offered(html: string): string[] {
  return [...html.matchAll(/name="session" value="(\d+)"/g)].map((m) => m[1]!);
}

/** A page read and a form posted as a browser would, from a chosen client address (127.0.0.x). */
async function formOf(from: string, url: string): Promise<{ cookie: string; csrf: string; html: string }> {
  const res = await requestFrom(from, url);
  expect(res.status).toBe(200);
  const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const cookie = set.map((c) => c.split(';')[0]!).find((c) => c.startsWith('rostercal_form=')) ?? '';
  const csrf = /name="csrf" value="([^"]+)"/.exec(res.body)?.[1] ?? '';
  return { cookie, csrf, html: res.body };
}

async function post(
  from: string,
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; location: string; body: string }> {
  const res = await requestFrom(from, url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, location: String(res.headers.location ?? ''), body: res.body };
}

/**
 * The coach's "My teams" (a signed-in coach of the team: a staff session as sign-in would store it), and what its
 * "Today and next" says of a session: how many absences are reported for it (null: not listed there).
 */
async function coachSees(teamId: Id, sessionId: Id): Promise<number | null> {
  const team = (await service.store.records.get('hill', 'teams', teamId))!;
  const coach = (await service.store.records.get('hill', 'staff', team.staff[0]!.id))!;
  const id = randomBytes(32).toString('base64url');
  const now = Date.now();
  await service.store.access.createStaffSession({
    idHash: hashSessionId(id),
    email: coach.email ?? '',
    issuer: 'https://idp.test',
    subject: `coach-${coach.id}`,
    displayName: coach.firstName,
    createdAt: new Date(now).toISOString(),
    lastSeenAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 3_600_000).toISOString(),
    revokedAt: null,
    clientAddress: null,
    userAgent: null,
  });
  const res = await fetch(`${base}/staff`, { headers: { cookie: `rostercal_session=${id}` } });
  expect(res.status).toBe(200);
  const html = await res.text();
  const row = html.split(`<li data-session="${sessionId}">`)[1]?.split('</li>')[0];
  if (row === undefined) return null;
  if (row.includes('no absences reported')) return 0;
  return Number(/(\d+) absences? reported/.exec(row)?.[1]);
}

/** The page's form filled for its first offered session, posted from that address. */
async function reportOn(
  from: string,
  url: string,
  studentId: Id,
): Promise<{ status: number; location: string; body: string }> {
  const form = await formOf(from, url);
  const fields = { csrf: form.csrf, session: offered(form.html)[0]!, student: String(studentId) };
  return post(from, `${url}/absences`, fields, { cookie: form.cookie });
}

async function sheet(teamId: Id, sessionId: Id): Promise<string> {
  const res = await fetch(
    `${base}/rosters/teams/${teamId}.pdf?template=attendance-sheet&session=${sessionId}&school=hill`,
    { headers: { authorization: `Bearer ${ADMIN}` } },
  );
  expect(res.status).toBe(200);
  // A wrapped cell's lines stay together in pdfText's blocks: one space for each line break reads the cell.
  return (await pdfText(new Uint8Array(await res.arrayBuffer()))).replace(/\s+/g, ' ');
}

async function phone(): Promise<Page> {
  const ctx = await browser.newContext({
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
    deviceScaleFactor: 2,
  });
  // Deadlines, not measures (the test prints how long a report took): on a loaded 2-core machine, beside two
  // whole suites, a report's upstream and store writes once took over Playwright's default 30 s.
  ctx.setDefaultTimeout(90_000);
  return ctx.newPage();
}

describe('a parent on a phone', () => {
  it('reports from the child’s page, sees it, and the coach’s sheet shows it; then undoes it', async () => {
    const { child, url } = await childPage();
    const page = await phone();
    await page.goto(url);
    await expectPhoneFriendly(page);
    const event = page.locator('li.event', { has: page.locator('details.absence') }).first();
    const sessionId = Number(await event.getAttribute('data-session'));
    const session = (await service.store.records.get('hill', 'sessions', sessionId))!;
    const teamId = session.teams[0]!.id;
    const awayBefore = await coachSees(teamId, sessionId);
    expect(awayBefore, 'the session is in the coach\u2019s "Today and next"').not.toBeNull();

    // Two taps: "Can't make it?", then confirm (a reason typed on the way).
    await event.locator('summary', { hasText: 'Can’t make it?' }).tap();
    await expectPhoneFriendly(page);
    await event.locator('input[name="reason"]').fill(REASON);
    const tapped = performance.now();
    await Promise.all([
      page.waitForURL(/done=reported/),
      event.locator('button', { hasText: 'Confirm' }).tap(),
    ]);
    const reported = page.locator(`#session-${sessionId} .reported`);
    await expect(reported.textContent()).resolves.toMatch(/^Reported: .+, /);
    // What happened is said where the page lands (the session's own block), not above the list, out of sight.
    const said = page.locator(`#session-${sessionId} p.absence-done`);
    await expect(said.textContent()).resolves.toContain('Reported');
    await expect(
      page.evaluate<boolean>(
        `document.querySelector('#session-${sessionId} p.absence-done').getBoundingClientRect().bottom <= innerHeight`,
      ),
    ).resolves.toBe(true);
    await expect(page.locator('p.absence-done').count()).resolves.toBe(1);
    await expectPhoneFriendly(page);
    await page.screenshot({ path: `${process.env.SCREENSHOT_DIR ?? '/tmp'}/absence-reported.png` });

    // The emulator holds exactly one, for the session's times, marked as the family's.
    const held = await reportedUpstream(child.id);
    expect(held).toHaveLength(1);
    expect(held[0]!.reason).toContain(REASON);
    expect(held[0]!.start).toBe(session.start);

    // The coach: the sheet marks the child at once (the upstream's answer went to the store)…
    const text = await sheet(teamId, sessionId);
    const atOnceMs = performance.now() - tapped;
    expect(text).toContain(`Family reported: ${REASON}`);
    // …and so does the next pull (the record it brings is the same), with /staff counting it.
    const pullStarted = performance.now();
    // The schedule's own pull (every 30 s) may be running: this one is let pass then, and asked again once the
    // scheduler no longer says so (a deadline, not a measure).
    const pulled = await untilValue(
      'an incremental pull not let pass',
      async () => {
        const r = await service.scheduler.runNow('hill', 'incremental');
        return r.status === 'skipped' ? undefined : r;
      },
      120_000,
      250,
    );
    const pullMs = performance.now() - pullStarted;
    expect(pulled.status).toBe('succeeded');
    expect(await sheet(teamId, sessionId)).toContain(`Family reported: ${REASON}`);
    expect(await coachSees(teamId, sessionId)).toBe(awayBefore! + 1);
    console.info(
      `tap → coach's sheet: ${Math.round(atOnceMs)} ms (store written with the upstream's answer); an incremental pull took ${Math.round(pullMs)} ms, so by the default schedule (every 30 s) at most ~${Math.round(30 + pullMs / 1000)} s`,
    );

    // Undo, from the same page.
    await Promise.all([
      page.waitForURL(/done=withdrawn/),
      reported.locator('button', { hasText: 'Undo' }).tap(),
    ]);
    await expect(page.locator(`#session-${sessionId} .reported`).count()).resolves.toBe(0);
    await expect(page.locator(`#session-${sessionId} details.absence`).count()).resolves.toBe(1);
    expect(await reportedUpstream(child.id)).toHaveLength(0);
    expect(await sheet(teamId, sessionId)).not.toContain('Family reported');
    await page.context().close();

    const acts = await service.store.access.listAudit({ actor: undefined, schoolId: 'hill', limit: 50 });
    const mine = acts.filter((a) => a.detail?.startsWith(`student ${child.id}:`));
    // Each act is audited before it is sent (with its reservation) and once it is answered.
    expect(mine.map((a) => a.action).sort()).toEqual([
      'absence-report',
      'absence-report',
      'absence-undo',
      'absence-undo',
    ]);
    expect(mine.map((a) => a.detail).sort()).toEqual([
      expect.stringMatching(/: reported \(absence \d+\)$/),
      expect.stringMatching(/: sending$/),
      expect.stringMatching(/: undoing \(absence \d+\) \(absence \d+\)$|: undoing \(absence \d+\)$/),
      expect.stringMatching(/: withdrawn \(absence \d+\)$/),
    ]);
    for (const a of mine) {
      expect(a.actor).toMatch(/^child link [0-9a-f]{12}$/);
      expect(a.sessionId).toBe(sessionId);
      expect(a.clientAddress).toMatch(/127\.0\.0\.1/);
      expect(url).not.toContain(a.actor.slice(-12));
    }
  }, 300_000);

  it('reports for one child of a family page, naming the child', async () => {
    const [a, b] = [await student(), await student()];
    const made = await fetch(`${base}/family`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        from: (await pageOf('student', a.id)).split('/').at(-1)!,
        links: await pageOf('student', b.id),
      }).toString(),
      redirect: 'manual',
    });
    expect(made.status).toBe(303);
    const familyUrl = made.headers.get('location')!;
    const page = await phone();
    await page.goto(familyUrl);
    await expectPhoneFriendly(page);
    const event = page.locator('li.event', { has: page.locator('details.absence') }).first();
    const sessionId = Number(await event.getAttribute('data-session'));
    await event.locator('summary').tap();
    const choices = event.locator('input[name="student"][type="radio"]');
    const label = (await choices.count()) > 1 ? a.firstName : null;
    if (label) await event.locator('label.choice', { hasText: label }).tap();
    await Promise.all([
      page.waitForURL(/done=reported/),
      event.locator('button', { hasText: 'Confirm' }).tap(),
    ]);
    const line = (await page.locator(`#session-${sessionId} .reported`).first().textContent()) ?? '';
    expect(line).toMatch(/^Reported for .+: /);
    const total = (await reportedUpstream(a.id)).length + (await reportedUpstream(b.id)).length;
    expect(total).toBe(1);
    await Promise.all([
      page.waitForURL(/done=withdrawn/),
      page.locator(`#session-${sessionId} .reported button`).first().tap(),
    ]);
    expect((await reportedUpstream(a.id)).length + (await reportedUpstream(b.id)).length).toBe(0);
    await page.context().close();
  }, 300_000);
});

describe('what a report covers', () => {
  it('names, before the family confirms, the child’s other session at the same time; both coaches see it', async () => {
    // Tried from outside: "Can't make it?" on Tennis also showed "Reported" on Rowing at the same time, and the
    // Rowing coach's sheet read "Family reported", while the page had asked about Tennis alone. An absence is the
    // session's time: the confirmation now names the other session, and the page says which report covers it.
    const teams = await service.store.records.list('hill', 'teams');
    const now = Date.parse(sandbox.now());
    let found: { child: Id; first: Id; other: Id } | null = null;
    for (const t of teams)
      for (const m of t.students) {
        if (taken.has(m.studentId) || found) continue;
        const other = teams.find((u) => u.id !== t.id && u.students.some((x) => x.studentId === m.studentId));
        const first = (
          await service.store.records.listSessions('hill', {
            studentId: m.studentId,
            from: new Date(now + 86_400_000).toISOString(),
            to: new Date(now + 14 * 86_400_000).toISOString(),
          })
        )
          // A bye offers nothing to report (issue 42): which sessions are byes follows the date the test runs.
          .filter((x) => !x.cancelled && !x.bye && x.teams.length > 0)
          .sort((x, y) => x.start.localeCompare(y.start))[0];
        if (other && first) found = { child: m.studentId, first: first.id, other: other.id };
      }
    expect(found, 'a child in two teams with an upcoming session').not.toBeNull();
    const { child, first, other } = found!;
    taken.add(child);
    const session = (await service.store.records.get('hill', 'sessions', first))!;
    const coach = sandbox.school.users.find((u) => !u.frozen)!;
    const [made] = await upstream.createSessions({
      email: coach.email,
      sessions: [
        {
          title: 'Clash practice',
          activityId: session.activity.id,
          startDateTime: session.start,
          endDateTime: session.end,
          teamIds: [other],
        },
      ],
    });
    const clash = made!.id;
    await untilValue(
      'a pull that brings the new session',
      async () => {
        const r = await service.scheduler.runNow('hill', 'incremental');
        return r.status !== 'skipped' && (await service.store.records.get('hill', 'sessions', clash))
          ? r
          : undefined;
      },
      120_000,
      250,
    );
    const url = await pageOf('student', child);
    const page = await phone();
    await page.goto(url);
    const event = page.locator(`#session-${first}`);
    await event.locator('summary', { hasText: 'Can’t make it?' }).tap();
    const covers = (await event.locator('p.covers').textContent()) ?? '';
    expect(covers).toContain('Clash practice');
    expect(covers).toContain('at the same time');
    await expectPhoneFriendly(page);
    await page.screenshot({ path: `${process.env.SCREENSHOT_DIR ?? '/tmp'}/absence-clash.png` });
    await Promise.all([
      page.waitForURL(/done=reported/),
      event.locator('button', { hasText: 'Confirm' }).tap(),
    ]);
    const line = (await page.locator(`#session-${clash} .reported`).textContent()) ?? '';
    expect(line).toContain('covered by the absence reported for');
    expect(line).toContain(session.title.slice(0, 10));
    await expectPhoneFriendly(page);
    // Each team's coach sees it on the sheet of their own session.
    expect(await sheet(session.teams[0]!.id, first)).toContain('Family reported');
    expect(await sheet(other, clash)).toContain('Family reported');
    expect(await reportedUpstream(child)).toHaveLength(1);
    await page.context().close();
  }, 300_000);
});

describe('the safety rules', () => {
  it('a retried report never makes two absences, however it is retried', async () => {
    const { child, url } = await childPage();
    const form = await formOf('127.0.0.2', url);
    const fields = {
      csrf: form.csrf,
      session: offered(form.html)[0]!,
      student: String(child.id),
      reason: '',
    };
    const headers = { cookie: form.cookie };
    // A double tap (two at once), then a reload of the result.
    const answers = await Promise.all([
      post('127.0.0.2', `${url}/absences`, fields, headers),
      post('127.0.0.2', `${url}/absences`, fields, headers),
    ]);
    answers.push(await post('127.0.0.2', `${url}/absences`, fields, headers));
    for (const r of answers) expect(r.status).toBe(303);
    expect(await reportedUpstream(child.id)).toHaveLength(1);
    const audit = await service.store.access.listAudit({
      action: 'absence-report',
      schoolId: 'hill',
      limit: 50,
    });
    const details = audit.filter((r) => r.detail?.startsWith(`student ${child.id}:`)).map((r) => r.detail);
    expect(details.filter((d) => d?.includes(': reported'))).toHaveLength(1);
    // The tap that came while the first was being sent (answered once it was: "already reported", not "pending"),
    // and the reload ("already reported").
    expect(details.filter((d) => d?.includes(': already '))).toHaveLength(2);
    expect(details.filter((d) => d?.includes('already reported'))).toHaveLength(2);
  });

  it('limits reports per child and acts per address, with a clear message', async () => {
    const [b, c] = [await student('hill', 1), await student('hill', 1)];
    const from = '127.0.0.4';
    const act = async (who: { id: Id; sessions: Id[] }, what: 'report' | 'undo') => {
      const url = await pageOf('student', who.id);
      if (what === 'report') return reportOn(from, url, who.id);
      const form = await formOf(from, url);
      const absence = /data-absence="(\d+)"/.exec(form.html)![1]!;
      return post(from, `${url}/absences/undo`, { csrf: form.csrf, absence }, { cookie: form.cookie });
    };
    // Undone reports do not count against the child's limit (3 standing): report-undo cycles are bounded by the
    // address's 8 acts an hour, which every replica counts in the store.
    for (const step of ['report', 'undo', 'report', 'undo', 'report', 'undo', 'report'] as const)
      expect((await act(b, step)).status).toBe(303);
    // The address has used 7 of its 8 acts; another child's link from it gets one more.
    expect((await act(c, 'report')).status).toBe(303);
    const refused429 = await act(c, 'undo');
    expect(refused429.status).toBe(429);
    expect(refused429.body).toContain('Too many absence reports from this connection');
    expect(await reportedUpstream(c.id)).toHaveLength(1);
    const refused = await service.store.access.listAudit({
      action: 'absence-refused',
      schoolId: 'hill',
      limit: 50,
    });
    expect(refused.map((r) => r.detail)).toEqual(
      expect.arrayContaining([expect.stringContaining('undo refused (per-address limit)')]),
    );
  });

  it('the per-child limit holds whichever link reports, a repeat uses none of it, and every refusal is audited', async () => {
    // Tried from outside: a new family link (anyone holding the child's link can make one) started a fresh
    // allowance; a reload of a report already made used one of the day's three; refusals left no trace.
    const d = await student('hill', 4);
    const url = await pageOf('student', d.id);
    let n = 0;
    const from = () => `127.0.1.${++n}`; // one address per act: only the per-child limit is under test
    const form = await formOf(from(), url);
    const sessions = offered(form.html);
    expect(sessions.length).toBeGreaterThanOrEqual(4);
    const send = (target: string, fields: Record<string, string>) =>
      post(from(), target, { csrf: form.csrf, student: String(d.id), ...fields }, { cookie: form.cookie });
    expect((await send(`${url}/absences`, { session: sessions[0]! })).status).toBe(303);
    expect((await send(`${url}/absences`, { session: sessions[0]! })).status).toBe(303); // a reload
    expect((await send(`${url}/absences`, { session: sessions[1]! })).status).toBe(303);
    expect((await send(`${url}/absences`, { session: sessions[2]! })).status).toBe(303);
    expect(await reportedUpstream(d.id)).toHaveLength(3);
    // A repeat after the limit is still answered as what it is.
    const again = await send(`${url}/absences`, { session: sessions[0]! });
    expect(again.status).toBe(303);
    expect(again.location).toContain('done=reported');
    // A family page made now from the child's link starts no new allowance.
    const made = await fetch(`${base}/family`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        from: url.split('/').at(-1)!,
        // The child's own team beside it: the family page then lists the child's next sessions.
        links: await pageOf(
          'team',
          (await service.store.records.get('hill', 'sessions', Number(sessions[3])))!.teams[0]!.id,
        ),
      }).toString(),
      redirect: 'manual',
    });
    expect(made.status).toBe(303);
    const familyUrl = new URL(made.headers.get('location')!, base).toString();
    const family = await formOf(from(), familyUrl);
    const next = offered(family.html).find(
      (x) => d.sessions.map(String).includes(x) && !sessions.slice(0, 3).includes(x),
    );
    expect(next, 'a session of the child the family page offers').toBeDefined();
    const over = await post(
      from(),
      `${familyUrl}/absences`,
      { csrf: family.csrf, student: String(d.id), session: next! },
      { cookie: family.cookie },
    );
    expect(over.status).toBe(429);
    expect(over.body).toContain(`3 absences have been reported for`);
    expect(await reportedUpstream(d.id)).toHaveLength(3);

    // Probing from a link leaves a trace: another child, a session not on the page, an absence not its own, a bad form.
    const other = await student();
    expect((await send(`${url}/absences`, { session: sessions[0]!, student: String(other.id) })).status).toBe(
      403,
    );
    expect((await send(`${url}/absences`, { session: '999999999' })).status).toBe(400);
    expect((await send(`${url}/absences/undo`, { absence: '999999999' })).status).toBe(404);
    const forged = await post(from(), `${url}/absences`, {
      csrf: 'x',
      session: sessions[0]!,
      student: String(d.id),
    });
    expect(forged.status).toBe(403);
    const refused = (
      await service.store.access.listAudit({ action: 'absence-refused', schoolId: 'hill', limit: 500 })
    )
      .map((r) => r.detail ?? '')
      .filter(
        (x) =>
          x.includes(`student ${other.id} is not on this link`) ||
          x.startsWith(`student ${d.id}:`) ||
          x.includes('999999999') ||
          x.includes('the form'),
      );
    expect(refused).toEqual(
      expect.arrayContaining([
        expect.stringContaining('per-child limit'),
        expect.stringContaining(`student ${other.id} is not on this link`),
        expect.stringContaining('session 999999999 not on the page'),
        expect.stringContaining('absence 999999999 not reported through this link'),
        expect.stringContaining('report refused (the form:'),
      ]),
    );
  }, 120_000);

  it('refuses a form without its CSRF token, from another site, or with another browser’s cookie', async () => {
    const { child, url } = await childPage();
    const form = await formOf('127.0.0.5', url);
    const other = await formOf('127.0.0.5', await pageOf('student', (await student()).id));
    const fields = { csrf: form.csrf, session: offered(form.html)[0]!, student: String(child.id) };
    const cases: [Record<string, string>, Record<string, string>][] = [
      [{ ...fields, csrf: '' }, { cookie: form.cookie }],
      [fields, {}],
      [fields, { cookie: other.cookie }],
      [fields, { cookie: form.cookie, origin: 'https://evil.example' }],
      [fields, { cookie: form.cookie, 'sec-fetch-site': 'cross-site' }],
    ];
    for (const [body, headers] of cases) {
      const r = await post('127.0.0.5', `${url}/absences`, body, headers);
      await expectRefused(r, 403, 'This form has expired or did not come from the calendar page', child.id);
    }
  });

  it('a rotated link can no longer report or undo, and the new link cannot undo what the old one reported', async () => {
    const { child, url } = await childPage();
    const form = await formOf('127.0.0.6', url);
    const headers = { cookie: form.cookie };
    const fields = { csrf: form.csrf, session: offered(form.html)[0]!, student: String(child.id) };
    expect((await post('127.0.0.6', `${url}/absences`, fields, headers)).status).toBe(303);
    const absence = /data-absence="(\d+)"/.exec((await formOf('127.0.0.6', url)).html)![1]!;

    const rotated = await runRostercal(['feeds', 'rotate', 'student', String(child.id), '--school', 'hill'], {
      ROSTERCAL_CONFIG: configFile,
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    const report = await post('127.0.0.6', `${url}/absences`, fields, headers);
    const undo = await post('127.0.0.6', `${url}/absences/undo`, { csrf: form.csrf, absence }, headers);
    expect(report.status).toBe(404);
    expect(undo.status).toBe(404);
    // The absence it reported stands (the school's to deal with); the new link cannot undo it either.
    expect(await reportedUpstream(child.id)).toHaveLength(1);
    const fresh = await pageOf('student', child.id);
    expect(fresh).not.toBe(url);
    const newForm = await formOf('127.0.0.6', fresh);
    expect(newForm.html).toContain('Reported: ');
    expect(newForm.html).not.toMatch(/absences\/undo/);
    const stolen = await post(
      '127.0.0.6',
      `${fresh}/absences/undo`,
      { csrf: newForm.csrf, absence },
      { cookie: newForm.cookie },
    );
    expect(stolen.status).toBe(404);
    expect(await reportedUpstream(child.id)).toHaveLength(1);
  });

  it('team, activity and staff links offer nothing and cannot report', async () => {
    const child = await student();
    const session = (await service.store.records.get('hill', 'sessions', child.sessions[0]!))!;
    const team = session.teams[0]!.id;
    const staffId = session.staff[0]?.id ?? (await service.store.records.list('hill', 'staff'))[0]!.id;
    const activity = session.activity.id;
    for (const [scope, id] of [
      ['team', team],
      ['activity', activity],
      ['staff', staffId],
    ] as const) {
      const url = await pageOf(scope, id);
      const form = await formOf('127.0.0.7', url);
      expect(form.html).not.toContain('Can’t make it');
      expect(form.cookie).toBe('');
      const r = await post(
        '127.0.0.7',
        `${url}/absences`,
        { csrf: 'x'.repeat(32), session: String(session.id), student: String(child.id) },
        { cookie: `rostercal_form=${'x'.repeat(32)}` },
      );
      await expectRefused(r, 403, 'only from a child’s own calendar page or a family page', child.id);
    }
  });

  it('a write answered 500 or cut is "not confirmed", never "nothing was reported"; then settled as not made', async () => {
    // The proxy answers these writes itself, so none is applied: rostercal cannot know that (a 5xx or a cut may
    // come after the upstream saved it), says so, and reads the child's absences back until it does know.
    const children: {
      child: Awaited<ReturnType<typeof student>>;
      url: string;
      block: (html: string) => string;
    }[] = [];
    for (const mode of ['fail-500', 'down'] as const) {
      const { child, url } = await childPage();
      const sessionId = offered((await formOf('127.0.0.8', url)).html)[0]!;
      const block = (html: string) => html.split(`id="session-${sessionId}"`)[1]?.split('</li>')[0] ?? '';
      children.push({ child, url, block });
      proxy.mode = mode;
      try {
        const r = await reportOn('127.0.0.8', url, child.id);
        expect(r.status).toBe(303);
        expect(r.location).toContain('done=unconfirmed');
      } finally {
        proxy.mode = 'pass';
      }
      const page = await formOf('127.0.0.8', url);
      expect(page.html).toContain('could not confirm');
      expect(page.html).not.toContain('nothing was reported');
      expect(block(page.html)).not.toContain('Can’t make it?');
    }
    for (const { child, url, block } of children) {
      await until(
        'the page offering the report again',
        async () => block((await formOf('127.0.0.8', url)).html).includes('Can’t make it?'),
        60_000,
        1_000,
      );
      expect(await reportedUpstream(child.id)).toHaveLength(0);
      const stored = await service.store.records.listAbsences('hill', { studentIds: [child.id] });
      expect(stored.filter((a) => familyReportOf(a))).toHaveLength(0);
    }
  }, 120_000);

  it('a token that may not write (403): the page says so, then hides the option; /admin and status say why', async () => {
    const { child, url } = await childPage('ro');
    expect((await formOf('127.0.0.9', url)).html).toContain('Can’t make it?');
    const r = await reportOn('127.0.0.9', url, child.id);
    await expectRefused(r, 502, 'does not let this calendar record absences', child.id);
    expect((await formOf('127.0.0.9', url)).html).not.toContain('Can’t make it?');

    const admin = await (
      await fetch(`${base}/admin`, { headers: { authorization: `Bearer ${ADMIN}` } })
    ).text();
    const line = /<p id="absences-ro"[^>]*>([\s\S]*?)<\/p>/.exec(admin)?.[1] ?? '';
    expect(line).toContain('403');
    expect(line).toContain('may not write pre-explained absences');
    expect(/<p id="absences-off"[^>]*>([\s\S]*?)<\/p>/.exec(admin)?.[1]).toContain('families.reportAbsences');
    const status = await runRostercal(['status', '--school', 'ro'], { ROSTERCAL_CONFIG: configFile });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/families reporting absences: .*403.*may not write pre-explained absences/);
  });

  it('a school that did not turn it on offers nothing', async () => {
    const child = await student('off');
    const form = await formOf('127.0.0.10', await pageOf('student', child.id, 'off'));
    expect(form.html).not.toContain('Can’t make it');
  });

  it('nothing about an absence reaches the team’s feed or another child’s page', async () => {
    const { child, url } = await childPage();
    const form = await formOf('127.0.0.11', url);
    const secret = 'grandma visiting';
    const sessionId = Number(offered(form.html)[0]);
    const r = await post(
      '127.0.0.11',
      `${url}/absences`,
      { csrf: form.csrf, session: String(sessionId), student: String(child.id), reason: secret },
      { cookie: form.cookie },
    );
    expect(r.status).toBe(303);
    const session = (await service.store.records.get('hill', 'sessions', sessionId))!;
    const team = (await service.store.records.get('hill', 'teams', session.teams[0]!.id))!;
    const teamUrl = await pageOf('team', team.id);
    const mate = team.students.find((s) => s.studentId !== child.id)!;
    const mateUrl = await pageOf('student', mate.studentId);
    await service.scheduler.runNow('hill', 'incremental');
    for (const u of [teamUrl, `${teamUrl}.ics`, mateUrl, `${mateUrl}.ics`]) {
      const text = await (await fetch(u)).text();
      expect(text).not.toContain(secret);
      expect(text).not.toContain('Reported');
      expect(text).not.toContain('rostercal ');
    }
    // The child's own page shows that it was reported, never the words.
    const own = await (await fetch(url)).text();
    expect(own).toContain('Reported: ');
    expect(own).not.toContain(secret);
  });

  it('the audit log holds every act, in /admin/audit and `rostercal audit`', async () => {
    const records = await service.store.access.listAudit({ schoolId: 'hill', limit: 500 });
    const acts = records.filter((r) => r.action.startsWith('absence-'));
    expect(acts.length).toBeGreaterThanOrEqual(10);
    const page = await (
      await fetch(`${base}/admin/audit`, { headers: { authorization: `Bearer ${ADMIN}` } })
    ).text();
    // In the records' rows (the action filter lists every action's name as well).
    expect(page).toContain('data-label="what"><span class="nowrap">absence-report<');
    expect(page).toContain('data-label="what"><span class="nowrap">absence-undo<');
    // Each family act names the child as staff know them (issue 44): staff-only, so the name is allowed here.
    const rows = page.split('<tr>').filter((row) => /nowrap">absence-/.test(row));
    expect(rows.length).toBeGreaterThanOrEqual(10);
    for (const row of rows) {
      const ids = /class="detail">students? (\d+(?:, \d+)*):/.exec(row)?.[1]?.split(', ');
      expect(ids, row).toBeDefined();
      for (const id of ids!) {
        const kid = await service.store.records.get('hill', 'students', Number(id));
        expect(row).toContain(`child ${kid!.firstName} ${kid!.lastName} <span class="muted">(student ${id})`);
      }
    }
    const cli = await runRostercal(['audit', '--school', 'hill', '--json'], { ROSTERCAL_CONFIG: configFile });
    expect(cli.code, cli.stderr).toBe(0);
    const listed = JSON.parse(cli.stdout) as { action: string; actor: string }[];
    expect(listed.filter((r) => r.action.startsWith('absence-')).length).toBe(acts.length);
    // A link is named by its id, never by its token.
    for (const r of listed) expect(r.actor).not.toMatch(/[A-Za-z0-9_-]{32}/);
    const all = `${cli.stdout}${JSON.stringify(records)}`;
    for (const t of await service.store.links.listFeedTokens('hill')) expect(all).not.toContain(t.tokenHash);
  });
});
