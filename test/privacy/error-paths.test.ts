// Upstream words through every path that answers with something other than a calendar (issue 42): a team, an
// activity, a session's title, a venue, a child's and a coach's name holding terminal attacks (ESC/CSI/OSC
// sequences, BEL, C1 controls, bidi overrides, line separators) reach the admin pages and their JSON, the coach's
// session page, a roster refusal that quotes the session ("is not a fixture"), the family's refusal pages and the
// 429 pages; none of them carries a raw control or bidi character, as a browser or a terminal reads them. (What
// the CLI prints of the same text: hostile-output.test.ts.) Every error a browser meets there is a page in its
// layout; a calendar app asking for the .ics still gets a line of text. A report on a bye says it is a bye.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FamilyAbsences } from '../../src/families/absences.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';
import {
  browse,
  CookieJar,
  type StaffSite,
  signIn,
  staffSiteFor,
  type TestIdp,
} from '../identity/harness.ts';

const ATTACK =
  '\r\nFORGED \u001b[31mRED\u001b[0m\u001b[2J\u001b]0;title\u0007 \u202Eevil\u202C \u2066iso\u2069 \u0085NEL\u009b31mCSI \u2028LS\u2029PS\u200F\u061C';
const hostile = (name: string) => `${name}${ATTACK}`;
/** Raw control characters other than LF and tab, and bidi controls / line separators. */
const RAW =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point.
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;
const ADMIN = 'admin-token-error-paths-0123456789abcdef';
const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

let h: Harness;
let idp: TestIdp;
let site: StaffSite;
const jar = new CookieJar();
let teamId: number;
let sessionId: number;
let byeId: number;
let studentToken: string;
let studentId: number;

beforeAll(async () => {
  h = await startHarness();
  const s = h.sandbox.school;
  const now = Date.parse(h.sandbox.now());
  const coming = (teamId: number) =>
    s.sessions
      .filter(
        (x) =>
          x.start > now + 86_400_000 && !x.cancelled && x.teamIds.length === 1 && x.teamIds[0] === teamId,
      )
      .sort((a, b) => a.start - b.start);
  // A team with a coach, its first coming session of its own (its title goes into a refusal) and another of its
  // sessions that a child's page lists (the next few of all the child's teams), to be made a bye.
  const pick = async () => {
    for (const team of s.teams) {
      if (team.hidden) continue;
      if (
        !team.staff.some((a) => s.users.find((u) => u.id === a.userId && u.email && !u.frozen && !u.isAdmin))
      )
        continue;
      const session = coming(team.id).find((x) => !x.scored && x.locationId !== null);
      if (!session) continue;
      for (const member of s.memberships.filter((m) => m.teamId === team.id)) {
        const listed = (await h.feeds.get('hill', 'student', member.studentId))?.upcoming ?? [];
        const shown = new Set(listed.filter((e) => e.status !== 'cancelled').map((e) => e.sessionId));
        if (!shown.has(session.id)) continue;
        const bye = coming(team.id).find((x) => x !== session && shown.has(x.id));
        if (bye) return { team, session, member, bye };
      }
    }
    throw new Error('no team, session, child and second session as the test needs in the generated school');
  };
  const { team, session, member, bye } = await pick();
  teamId = team.id;
  sessionId = session!.id;
  byeId = bye!.id;
  team.name = hostile('Open Netball');
  session!.title = hostile('Round 1');
  Object.assign(bye!, { bye: true, scored: true, studentParentNotes: 'No game this week (bye).' });
  s.activities.find((a) => a.id === team.activityId)!.name = hostile('Netball');
  s.locations.find((l) => l.id === session!.locationId)!.name = hostile('Court 3');
  const student = s.students.find((x) => x.id === member.studentId)!;
  student.firstName = hostile('Ava');
  const coach = s.users.find((u) => team.staff.some((a) => a.userId === u.id) && u.email && !u.frozen)!;
  coach.lastName = hostile('Coach');
  // The edits above are the sandbox's data as it is; an update through its API stamps both sessions as changed.
  const actor = s.users.find((u) => !u.frozen && u.isAdmin)!.email!;
  await h.client.updateSessions({
    email: actor,
    sessions: [session!, bye!].map((x) => ({ id: x.id, studentParentNotes: x.studentParentNotes ?? '' })),
  });
  await h.pull('full');
  studentId = student.id;
  studentToken = (await h.tokens.ensure('hill', 'student', student.id)).token!;

  const absences = new FamilyAbsences({
    store: h.store,
    schools: [{ ...h.school, families: { ...h.school.families, reportAbsences: true } }],
    clientFor: () => h.client,
    now: () => new Date(h.sandbox.now()),
  });
  ({ idp, site } = await staffSiteFor(h, [coach], { adminToken: ADMIN, absences }));
  await signIn(jar, site.url, String(coach.id));
}, 300_000);

afterAll(async () => {
  await site?.close();
  await idp?.close();
  await h?.close();
});

function expectClean(what: string, text: string): void {
  const raw = RAW.exec(text);
  expect(
    raw,
    `${what}: raw U+${raw?.[0].codePointAt(0)?.toString(16).padStart(4, '0')} in ${JSON.stringify(text.slice(Math.max(0, (raw?.index ?? 0) - 60), (raw?.index ?? 0) + 30))}`,
  ).toBeNull();
}

/** A page in one of the layouts: a language, a title, one h1, a main landmark, the phone's viewport. */
function expectPage(what: string, res: Response, body: string): void {
  expect(res.headers.get('content-type'), what).toMatch(/^text\/html/);
  expect(body, what).toMatch(/^<!doctype html>\s*<html lang="en">/);
  expect(body, what).toMatch(/<title>[^<]+<\/title>/);
  expect(body, what).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
  expect(body.match(/<h1[ >]/g)?.length, what).toBe(1);
  expect(body.match(/<main[ >]/g)?.length, what).toBe(1);
}

const admin = (path: string, accept = HTML) =>
  fetch(`${site.url}${path}`, { headers: { authorization: `Bearer ${ADMIN}`, accept } });

describe('upstream words on every path that is not a calendar (issue 42)', () => {
  it('the coach’s session page and a roster refusal quoting the session’s title, as a page and as text', async () => {
    const page = await browse(jar, `${site.url}/staff/teams/${teamId}/sessions/${sessionId}?school=hill`);
    expect(page.res.status).toBe(200);
    expect(page.body).toContain('FORGED');
    expectClean('session page', page.body);
    const staff = await browse(jar, `${site.url}/staff`);
    expectClean('My teams', staff.body);
    const refusal = `/rosters/teams/${teamId}.pdf?school=hill&session=${sessionId}&template=match-day-sheet`;
    const asPage = await browse(jar, `${site.url}${refusal}`, { headers: { accept: HTML } });
    expect(asPage.res.status, asPage.body).toBe(400);
    expect(asPage.body, asPage.body).toMatch(/Round 1.*is not a fixture/s);
    expectPage('not a fixture', asPage.res, asPage.body);
    expectClean('not a fixture (page)', asPage.body);
    const asText = await browse(jar, `${site.url}${refusal}`, { headers: { accept: '*/*' } });
    expect(asText.res.status).toBe(400);
    expect(asText.body).toMatch(/Round 1.*is not a fixture/s);
    expectClean('not a fixture (text)', asText.body);
  });

  it('admin pages and the audit log, as pages and as JSON', async () => {
    for (const path of ['/admin', '/admin/audit', '/admin/sessions', `/admin/audit?team=${teamId}`]) {
      const res = await admin(path);
      const body = await res.text();
      expect(res.status, path).toBe(200);
      expectClean(path, body);
    }
    const json = await admin('/admin/audit?format=json', 'application/json');
    const text = await json.text();
    expect(text).toContain('is not a fixture');
    expectClean('/admin/audit?format=json', text);
    // The same record, intact: JSON escapes what it does not print raw.
    const { records } = JSON.parse(text) as { records: { detail: string | null }[] };
    expect(records.some((r) => r.detail?.includes(ATTACK))).toBe(true);
  });

  it('the family’s refusal pages: a session not on the page, and a bye (nothing to attend)', async () => {
    const url = `${site.url}/feeds/${studentToken}`;
    const page = await fetch(url, { headers: { accept: HTML } });
    const html = await page.text();
    expectClean('child page', html);
    expect(html).toContain('Ava');
    // The bye is on the child's page, as "no game", without "Can't make it?".
    expect(html).toContain(`data-session="${byeId}"`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const cookie = page.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const report = (session: number) =>
      fetch(`${url}/absences`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          accept: HTML,
          cookie,
          'content-type': 'application/x-www-form-urlencoded',
          origin: site.url,
        },
        body: new URLSearchParams({ csrf, student: String(studentId), session: String(session) }).toString(),
      });
    const notOn = await report(999_999_999);
    const notOnBody = await notOn.text();
    expect(notOn.status).toBe(400);
    expect(notOnBody).toMatch(/That session is not on Ava\s[^<]*calendar/);
    expectPage('not on the page', notOn, notOnBody);
    expectClean('not on the page', notOnBody);
    const bye = await report(byeId);
    const byeBody = await bye.text();
    expect(bye.status, byeBody).toBe(409);
    expectPage('a bye', bye, byeBody);
    expect(byeBody).toMatch(/\bbye\b/i);
    expect(byeBody).toMatch(/nothing to attend/);
    expect(byeBody).not.toMatch(/not on .* calendar/);
    const audit = await h.store.access.listAudit({ action: 'absence-refused', schoolId: 'hill' });
    expect(audit.map((r) => r.detail)).toEqual(
      expect.arrayContaining([expect.stringContaining(`session ${byeId} is a bye`)]),
    );
  });
});

describe('every error a browser meets is a page; a calendar app still gets text (issue 42)', () => {
  const cases: { what: string; path: string; init?: RequestInit; status: number }[] = [
    { what: 'a malformed escape in a feed path', path: '/feeds/%ZZ', status: 400 },
    {
      what: 'a malformed escape after a feed token',
      path: `/feeds/${'A'.repeat(32)}%E0%A4.ics`,
      status: 400,
    },
    { what: 'a malformed escape in a family path', path: '/family/%ZZ', status: 400 },
    { what: 'a malformed escape in a roster path', path: '/rosters/teams/%E0%A4.pdf', status: 400 },
    { what: 'a malformed escape in a staff path', path: '/staff/teams/%E0%A4/sessions/1', status: 400 },
    {
      what: 'a family-link form as JSON',
      path: '/family',
      init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
      status: 415,
    },
    {
      what: 'a sign-in form as JSON',
      path: '/admin/login',
      init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
      status: 415,
    },
    {
      what: 'a family-link form in a charset not read',
      path: '/family',
      init: {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded; charset=klingon' },
        body: 'links=x',
      },
      status: 415,
    },
  ];

  it.each(cases)('$what: $status, a page for a browser', async ({ path, init, status }) => {
    const headers = { ...((init?.headers as Record<string, string>) ?? {}), accept: HTML };
    const res = await fetch(`${site.url}${path}`, { ...init, headers, redirect: 'manual' });
    const body = await res.text();
    expect(res.status, body).toBe(status);
    expectPage(path, res, body);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  it('a calendar app (Accept */* or text/calendar) gets a line of text for the same mistakes', async () => {
    for (const accept of ['*/*', 'text/calendar']) {
      const res = await fetch(`${site.url}/feeds/${'A'.repeat(32)}%E0%A4.ics`, { headers: { accept } });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await res.text()).not.toContain('<');
    }
  });

  it('429: too many unknown links is a page for a browser (family and feed paths), text for a calendar app', async () => {
    let last: Response | null = null;
    for (let i = 0; i < 80; i++) {
      last = await fetch(`${site.url}/family/${String(i).padStart(32, 'Z')}`, { headers: { accept: HTML } });
      if (last.status === 429) break;
      await last.arrayBuffer();
    }
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expectPage('429 family', last!, await last!.text());
    const feed = await fetch(`${site.url}/feeds/${'Y'.repeat(32)}`, { headers: { accept: HTML } });
    expect(feed.status).toBe(429);
    const feedBody = await feed.text();
    expectPage('429 feed', feed, feedBody);
    expect(feedBody).toMatch(/Hillcrest College/);
    const app = await fetch(`${site.url}/feeds/${'Y'.repeat(32)}.ics`, { headers: { accept: '*/*' } });
    expect(app.status).toBe(429);
    expect(app.headers.get('content-type')).toMatch(/^text\/plain/);
  });
});
