// Every output tells the same truth about a session. The same fixtures — a home, an away and a neutral fixture, a
// cancelled one with its reason, one with a result, and a session across the hour daylight saving repeats — go
// through every surface: the team feed over HTTP, its landing page, a family page, /staff for the signed-in coach,
// the attendance and match-day PDFs (read back with PDF.js), `rostercal sessions` as a child process, and the
// Google and Outlook fakes after a push. Each says what calendar/'s decision (decideSession) says: the title in
// the school's wording (home, away or neither; the result), cancelled or not and why, and the school's wall clock.
//
// The fixtures are written through the sandbox's write endpoint (POST and PATCH /sessions); what the API cannot
// write (opponent, scores, result, a venue without an owner) the test writes into the sandbox's live school, as
// its generator would have. They sit on the night Sydney's clocks next go back, found from the real date, so the
// CLI (which lists from the real present) still has them ahead of it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideSession, loadProjectionContext, type SessionDecision } from '../../src/calendar/index.ts';
import { parseTargets } from '../../src/config/push-targets.ts';
import type { StaffUser } from '../../src/domain/types.ts';
import { staffAccess } from '../../src/identity/roles.ts';
import { SESSION_PROP } from '../../src/push/outlook/render.ts';
import { pushTarget } from '../../src/push/run.ts';
import { parseSessionTag } from '../../src/push/stable-ids.ts';
import { generateRoster } from '../../src/rosters/index.ts';
import { transitions } from '../../src/util/time-zone.ts';
import type { RunningServer } from '../../src/web/server.ts';
import { type FakeGoogle, startFakeGoogle } from '../fakes/google-calendar.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph.ts';
import { trustCertificate } from '../fakes/tls.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';
import { parseBoth } from '../feeds/parse.ts';
import {
  browse,
  CookieJar,
  type StaffSite,
  signIn,
  staffSiteFor,
  type TestIdp,
} from '../identity/harness.ts';
import { rostercal } from '../support/cli.ts';
import { pdfText } from '../support/pdf.ts';

const SCHOOL = 'hill';
const ZONE = 'Australia/Sydney';
const HOUR = 3_600_000;
const PUBLIC = 'https://cal.example.org';
const REASON = 'The oval is waterlogged after the storm.';

// The instant Sydney's clocks next go back (03:00 AEDT → 02:00 AEST), at least two days from now.
const BACK = transitions(ZONE, Date.now() + 2 * 24 * HOUR, Date.now() + 400 * 24 * HOUR).find(
  (t) => t.toMin < t.fromMin,
)!.atMs;
const at = (ms: number) => new Date(BACK + ms).toISOString();

type Kind = 'home' | 'away' | 'neutral' | 'cancelled' | 'result' | 'dst';
interface Fixture {
  kind: Kind;
  team: 'a' | 'b';
  start: string;
  end: string;
}
const FIXTURES: Fixture[] = [
  { kind: 'home', team: 'a', start: at(-5 * HOUR), end: at(-4 * HOUR) },
  { kind: 'away', team: 'a', start: at(-4 * HOUR), end: at(-3 * HOUR) },
  { kind: 'neutral', team: 'a', start: at(-3 * HOUR), end: at(-2 * HOUR) },
  { kind: 'cancelled', team: 'b', start: at(-5 * HOUR), end: at(-4 * HOUR) },
  { kind: 'result', team: 'b', start: at(-4 * HOUR), end: at(-3 * HOUR) },
  // 02:30 AEDT to 02:30 AEST: both ends in the repeated hour.
  { kind: 'dst', team: 'b', start: at(-HOUR / 2), end: at(HOUR / 2) },
];

let h: Harness;
let server: RunningServer;
let idp: TestIdp;
let site: StaffSite;
let google: FakeGoogle;
let graph: FakeGraph;
let coach: StaffUser;
const teams = { a: 0, b: 0 };
const ids = new Map<Kind, number>();
const guardian = new Map<Kind, SessionDecision>();
const staff = new Map<Kind, SessionDecision>();
const local = (url: string) => url.replace(PUBLIC, server.url);

beforeAll(async () => {
  // The school's day is the evening before the clocks go back.
  h = await startHarness({ now: at(-8 * HOUR) });
  const all = await h.store.records.list(SCHOOL, 'teams');
  const people = (await h.store.records.list(SCHOOL, 'staff')).filter((s) => s.email && !s.frozen);
  coach = people.find((s) => !s.isAdmin && !s.isManager && staffAccess(s, all).assignedTeamIds.size >= 2)!;
  expect(coach, 'a coach with two teams').toBeDefined();
  [teams.a, teams.b] = [...staffAccess(coach, all).assignedTeamIds].sort((x, y) => x - y) as [number, number];
  const school = h.sandbox.school;
  const homeVenue = school.locations.find((l) => l.ownerId === school.organisation.id && !l.archived)!;
  const awayVenue = school.locations.find((l) => l.ownerId !== school.organisation.id)!;
  const admin = school.users.find((u) => u.isAdmin && !u.frozen)!;
  for (const f of FIXTURES) {
    const team = all.find((t) => t.id === teams[f.team])!;
    const [made] = await h.client.createSessions({
      email: admin.email,
      sessions: [
        {
          title: f.kind === 'dst' ? `${team.name} night training` : `${team.name} fixture`,
          activityId: team.activity.id,
          startDateTime: f.start,
          endDateTime: f.end,
          teamIds: [team.id],
          staffIds: [coach.id],
          ...(f.kind === 'neutral'
            ? { locationName: 'Olympic Park Hockey Centre' }
            : f.kind === 'dst'
              ? {}
              : { locationId: f.kind === 'away' ? awayVenue.id : homeVenue.id }),
          ...(f.kind === 'cancelled' ? { studentParentNotes: `This fixture is cancelled. ${REASON}` } : {}),
        },
      ],
    });
    ids.set(f.kind, made!.id);
  }
  const patched = await fetch(`${h.sandbox.url}/sessions`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${h.sandbox.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email: admin.email, sessions: [{ id: ids.get('cancelled'), cancelled: true }] }),
  });
  expect(patched.status).toBe(200);
  // What the write API cannot set, written into the live school as the generator would have.
  for (const f of FIXTURES) {
    if (f.kind === 'dst') continue;
    const s = school.sessions.find((x) => x.id === ids.get(f.kind))!;
    s.scored = true;
    s.opponent = f.kind === 'away' ? 'St Mary’s College' : 'Riverside Grammar';
    if (f.kind === 'result') Object.assign(s, { organisationScore: 3, opponentScore: 1, result: 'W' });
    if (f.kind === 'neutral') school.locations.find((l) => l.id === s.locationId)!.ownerId = -1;
    s.updatedAt = Date.parse(h.sandbox.now()) + 1000;
  }
  await h.pull('full');
  const ctx = await loadProjectionContext(h.store, SCHOOL);
  for (const f of FIXTURES) {
    const s = (await h.store.records.get(SCHOOL, 'sessions', ids.get(f.kind)!))!;
    guardian.set(f.kind, decideSession(s, ctx, 'guardian', { scope: 'team', id: teams[f.team] }));
    staff.set(f.kind, decideSession(s, ctx, 'staff', { scope: 'team', id: teams[f.team] }));
  }
  server = await h.serve({ publicUrl: PUBLIC });
  ({ idp, site } = await staffSiteFor(h, [coach], { now: () => new Date(h.sandbox.now()) }));
  [google, graph] = await Promise.all([
    startFakeGoogle(),
    startFakeGraph({
      apps: [{ tenant: 'hill-tenant', clientId: 'rostercal-app', clientSecret: 'graph-secret' }],
      mailboxes: [coach.email!.toLowerCase()],
    }),
  ]);
  trustCertificate(graph.cert);
}, 240_000);

afterAll(async () => {
  await site?.close();
  await idp?.close();
  await google?.close();
  await graph?.close();
  await h?.close();
});

describe('the decision itself', () => {
  it('is what the fixtures are', () => {
    expect(guardian.get('home')!.where).toBe('home');
    expect(guardian.get('away')!.where).toBe('away');
    expect(guardian.get('neutral')!.where).toBeNull();
    expect(guardian.get('neutral')!.fixture).toBe(true);
    expect(guardian.get('cancelled')!).toMatchObject({ cancelled: true, cancellationReason: REASON });
    expect(guardian.get('result')!.result).toBe('Won 3–1');
    expect(guardian.get('result')!.title).toContain('Won 3–1');
    expect(guardian.get('dst')!.time).toBe('02:30 AEDT–02:30 AEST');
    // Sunday in Sydney (AEDT, +11 at its start), Saturday in UTC.
    const dst = guardian.get('dst')!;
    expect(dst.date).toBe(new Date(Date.parse(dst.start) + 11 * HOUR).toISOString().slice(0, 10));
    expect(dst.date).not.toBe(dst.start.slice(0, 10));
    expect(guardian.get('home')!.time).toBe('22:00–23:00');
    for (const d of guardian.values()) expect(d.title).toBe(staff.get(kindOf(d.sessionId))!.title);
  });
});

/** The configuration `rostercal` reads from the environment, for the harness's store and sandbox. */
const cliEnv = () => ({
  DATA_DIR: h.dir,
  SCHOOL_ID: SCHOOL,
  SCHOOL_NAME: h.school.name,
  SCHOOL_TZ: ZONE,
  UPSTREAM_URL: h.sandbox.url,
  UPSTREAM_TOKEN: h.sandbox.token,
});

function kindOf(id: number): Kind {
  return [...ids].find(([, v]) => v === id)![0];
}

/** The page's text with tags out and entities decoded. */
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)))
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, ' ')
    .trim();

/** The `<li …data-session="ID"…>` element of a page, as text. */
function itemOf(html: string, id: number): string {
  const i = html.search(new RegExp(`<li[^>]*data-session="${id}"`));
  expect(i, `session ${id} on the page`).toBeGreaterThan(-1);
  let depth = 0;
  const re = /<(\/?)li\b[^>]*>/g;
  re.lastIndex = i;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    depth += m[1] ? -1 : 1;
    if (depth === 0) return text(html.slice(i, m.index));
  }
  return text(html.slice(i));
}

/** What a page's item says of a session, checked against the decision. */
function expectItemSays(item: string, d: SessionDecision, where: string): void {
  expect(item, where).toContain(d.title);
  expect(item, where).toContain(d.time);
  if (d.cancellationReason) expect(item, where).toContain(d.cancellationReason);
  expect(/cancelled/i.test(item), `${where}: says cancelled`).toBe(d.cancelled);
}

describe('every surface says what the decision says', () => {
  it('team feeds over HTTP: SUMMARY, STATUS, instants, the reason in DESCRIPTION', async () => {
    for (const t of ['a', 'b'] as const) {
      const token = (await h.tokens.ensure(SCHOOL, 'team', teams[t])).token!;
      const res = await fetch(`${server.url}/feeds/${token}.ics`);
      expect(res.status).toBe(200);
      const events = parseBoth(await res.text()).events;
      for (const f of FIXTURES.filter((x) => x.team === t)) {
        const d = guardian.get(f.kind)!;
        const e = events.find((x) => x.uid.startsWith(`session-${d.sessionId}-`));
        expect(e, f.kind).toBeDefined();
        expect(e!.summary, f.kind).toBe(d.title);
        expect(new Date(e!.start).toISOString(), f.kind).toBe(d.start);
        expect(new Date(e!.end).toISOString(), f.kind).toBe(d.end);
        expect(e!.status === 'CANCELLED', f.kind).toBe(d.cancelled);
        if (d.cancellationReason) expect(e!.description, f.kind).toContain(d.cancellationReason);
      }
    }
  });

  it('landing pages and a family page', async () => {
    const tokens = {
      a: (await h.tokens.ensure(SCHOOL, 'team', teams.a)).token!,
      b: (await h.tokens.ensure(SCHOOL, 'team', teams.b)).token!,
    };
    for (const t of ['a', 'b'] as const) {
      const page = await (await fetch(`${server.url}/feeds/${tokens[t]}`)).text();
      for (const f of FIXTURES.filter((x) => x.team === t))
        expectItemSays(itemOf(page, ids.get(f.kind)!), guardian.get(f.kind)!, `landing ${f.kind}`);
    }
    const made = await fetch(`${server.url}/family`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ from: tokens.a, links: `${PUBLIC}/feeds/${tokens.b}` }),
    });
    expect(made.status).toBe(303);
    const family = await (await fetch(local(made.headers.get('location')!))).text();
    for (const f of FIXTURES)
      expectItemSays(itemOf(family, ids.get(f.kind)!), guardian.get(f.kind)!, `family ${f.kind}`);
  });

  it('/staff for the signed-in coach', async () => {
    const jar = new CookieJar();
    await signIn(jar, site.url, String(coach.id));
    const page = await browse(jar, `${site.url}/staff`);
    expect(page.res.status).toBe(200);
    for (const f of FIXTURES) {
      const d = staff.get(f.kind)!;
      expectItemSays(itemOf(page.body, ids.get(f.kind)!), d, `/staff ${f.kind}`);
      // The one-tap sheets are labelled with the decision's times too (in a repeated hour "02:30" alone is two instants).
      const items =
        page.body.match(new RegExp(`<li data-session="${ids.get(f.kind)!}">[\\s\\S]*?</li>`, 'g')) ?? [];
      const labels = items.flatMap((li) =>
        // The label's words, whatever spans hold them (the day and time are kept on one line by one).
        [...li.matchAll(/>(?:Attendance|Match-day) sheet · ([\s\S]*?)<\/a>/g)].map((m) =>
          m[1]!.replace(/<[^>]*>/g, ''),
        ),
      );
      if (d.cancelled) expect(labels, `/staff ${f.kind}: no sheet`).toEqual([]);
      else {
        expect(labels.length, `/staff ${f.kind}: sheets offered`).toBeGreaterThan(0);
        for (const label of labels) expect(label, `/staff ${f.kind} sheet label`).toContain(d.time);
      }
    }
  });

  it('attendance and match-day sheets, read back with PDF.js', async () => {
    for (const f of FIXTURES) {
      const d = staff.get(f.kind)!;
      for (const template of f.kind === 'dst'
        ? ['attendance-sheet']
        : ['attendance-sheet', 'match-day-sheet']) {
        const roster = await generateRoster(h.store, {
          schoolId: SCHOOL,
          teamId: teams[f.team],
          sessionId: d.sessionId,
          template,
          now: new Date(h.sandbox.now()),
        });
        const said = (await pdfText(roster.pdf)).replace(/\s+/g, ' ');
        const where = `${template} ${f.kind}`;
        expect(said, where).toContain(d.title);
        expect(said, where).toContain(d.time);
        if (d.cancellationReason) expect(said, where).toContain(d.cancellationReason);
        expect(/cancelled/i.test(said), `${where}: says cancelled`).toBe(d.cancelled);
      }
    }
  });

  it('`rostercal sessions`, the real CLI', async () => {
    const env = cliEnv();
    for (const t of ['a', 'b'] as const) {
      const child = rostercal(['sessions', '--team', String(teams[t]), '--days', '400', '--json'], env);
      expect(await child.exit, child.output()).toBe(0);
      const rows = JSON.parse(child.stdout()).sessions as Record<string, unknown>[];
      for (const f of FIXTURES.filter((x) => x.team === t)) {
        const d = staff.get(f.kind)!;
        const row = rows.find((r) => r.id === d.sessionId);
        expect(row, f.kind).toBeDefined();
        expect(row, f.kind).toMatchObject({
          title: d.title,
          time: d.time,
          status: d.state,
          where: d.where,
          result: d.result,
          cancellationReason: d.cancellationReason,
        });
      }
      // The text form says the same.
      const plain = rostercal(['sessions', '--team', String(teams[t]), '--days', '400'], env);
      expect(await plain.exit, plain.output()).toBe(0);
      for (const f of FIXTURES.filter((x) => x.team === t)) {
        const d = staff.get(f.kind)!;
        const line = plain
          .stdout()
          .split('\n')
          .find((l) => l.startsWith(`${d.sessionId} `))!;
        expect(line, f.kind).toContain(d.title);
        expect(line, f.kind).toContain(d.time);
        if (d.cancellationReason) expect(line, f.kind).toContain(d.cancellationReason);
      }
    }
  });

  it('`rostercal roster` names the sheet’s session by the school’s date and times', async () => {
    // 02:30 AEDT on Sunday is Saturday in UTC: a date cut from the instant names the wrong day.
    const d = staff.get('dst')!;
    const out = `${h.dir}/dst-sheet.pdf`;
    const child = rostercal(
      ['roster', '--team', String(teams.b), '--session', String(d.sessionId), '-o', out],
      cliEnv(),
    );
    expect(await child.exit, child.output()).toBe(0);
    expect(child.stderr()).toContain(`session ${d.sessionId} on ${d.date} ${d.time}`);
  });

  it('Google (team calendars) and Outlook (the coach’s own) after a push', async () => {
    const now = () => new Date(h.sandbox.now());
    const [googleTarget, outlookTarget] = parseTargets(
      [
        {
          id: 'teams',
          provider: 'google',
          scope: 'team',
          google: { rootUrl: google.url, auth: { accessToken: google.token }, writesPerSecond: 2000 },
        },
        {
          id: 'staff-outlook',
          provider: 'outlook',
          scope: 'staff',
          outlook: {
            baseUrl: graph.url,
            authorityHost: graph.authorityHost,
            tenantId: 'hill-tenant',
            clientId: 'rostercal-app',
            clientSecret: 'env:TEST_GRAPH_SECRET',
          },
        },
      ],
      'schools[0].targets',
      { TEST_GRAPH_SECRET: 'graph-secret' },
    ) as [Parameters<typeof pushTarget>[0]['target'], Parameters<typeof pushTarget>[0]['target']];
    for (const target of [googleTarget, outlookTarget]) {
      const s = await pushTarget({ store: h.store, school: h.school, target, now });
      expect(s.status, JSON.stringify(s.errors ?? s)).toBe('succeeded');
    }
    const googleEvents = google.calendars().flatMap((c) => google.liveEvents(c.id));
    for (const f of FIXTURES) {
      const d = guardian.get(f.kind)!;
      const e = googleEvents.find(
        (x) => parseSessionTag(x.extendedProperties?.private?.rostercalSession)?.sessionId === d.sessionId,
      );
      expect(e, `google ${f.kind}`).toBeDefined();
      expect(e!.summary, `google ${f.kind}`).toBe(d.title);
      expect(new Date(e!.start.dateTime!).toISOString()).toBe(d.start);
      expect(new Date(e!.end.dateTime!).toISOString()).toBe(d.end);
      expect(e!.start.timeZone).toBe(ZONE);
      expect(e!.transparency === 'transparent', `google ${f.kind} frees the time`).toBe(d.cancelled);
      if (d.cancellationReason) expect(e!.description).toContain(d.cancellationReason);
    }
    const mailbox = graph.mailbox(coach.email!.toLowerCase())!;
    const outlookEvents = [...mailbox.calendars.values()].flatMap((c) => graph.events(mailbox.upn, c.name));
    for (const f of FIXTURES) {
      // The coach's own calendar: the staff decision, with no team in scope.
      const s = (await h.store.records.get(SCHOOL, 'sessions', ids.get(f.kind)!))!;
      const d = decideSession(s, await loadProjectionContext(h.store, SCHOOL), 'staff', {
        scope: 'staff',
        id: coach.id,
      });
      const e = outlookEvents.find(
        (x) =>
          parseSessionTag(x.singleValueExtendedProperties.find((p) => p.id === SESSION_PROP)?.value)
            ?.sessionId === d.sessionId,
      );
      expect(e, `outlook ${f.kind}`).toBeDefined();
      expect(e!.subject, `outlook ${f.kind}`).toBe(d.title);
      expect(new Date(`${e!.start.dateTime.replace(/Z?$/, 'Z')}`).toISOString()).toBe(d.start);
      expect(new Date(`${e!.end.dateTime.replace(/Z?$/, 'Z')}`).toISOString()).toBe(d.end);
      expect(e!.showAs === 'free', `outlook ${f.kind} frees the time`).toBe(d.cancelled);
      if (d.cancellationReason) expect(e!.body?.content).toContain(d.cancellationReason);
    }
  });
});
