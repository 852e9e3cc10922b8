// Issue 32: rotating a team's link also replaces its public Google calendar (`calendars.familiesMayAdd`).
// Through the real CLI (`rostercal sync`, `rostercal feeds rotate`) against the Google fake: the old calendar
// stops being public at once and is no longer offered, the next push makes a new one with every event exactly
// once (new event ids: no iCalUID shared with the old one) and deletes the old one; a crash between the steps, a
// lost database and Google throttling each end with exactly one public calendar for the team.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseTargets } from '../../src/config/push-targets.ts';
import { liveGoogleCalendars } from '../../src/push/family-calendars.ts';
import { pendingRotations } from '../../src/push/live-rotation.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import { type FakeGoogle, type FakeGoogleCalendar, startFakeGoogle } from '../fakes/google-calendar.ts';
import { rostercal, runCli, writeSchoolConfig } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import {
  teamCalendars as calendarsOf,
  isPublic,
  liveTargets,
  sessionsOf as sessionsIn,
} from '../support/live-google.ts';

let sandbox: Sandbox;
let fake: FakeGoogle;
let dir: string;
let env: Record<string, string>;
let rawTargets: unknown[];
let teamA: number;
let teamB: number;

const cli = (args: string[]) => runCli(args, env);

async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore({ dataDir: join(dir, 'data') });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** The calendar id the team's landing page offers ("Add to Google Calendar — updates within minutes"). */
function offered(team: number): Promise<string | null> {
  const targets = parseTargets(rawTargets, 'schools[0].targets', env);
  return withStore((store) => liveGoogleCalendars(store, [{ id: 'hill', targets }])('hill', 'team', team));
}

/** The team has exactly one calendar, public, holding `sessions` each once, offered on its page. */
async function expectOnePublic(team: number, sessions: string[]): Promise<FakeGoogleCalendar> {
  const cals = teamCalendars(team);
  expect(cals.map((c) => ({ gen: c.gen, public: isPublic(c) }))).toHaveLength(1);
  const cal = cals[0]!;
  expect(isPublic(cal)).toBe(true);
  expect(sessionsOf(cal.id)).toEqual(sessions);
  expect(new Set(sessionsOf(cal.id)).size).toBe(sessions.length);
  expect(await offered(team)).toBe(cal.id);
  return cal;
}

const teamCalendars = (team: number) => calendarsOf(fake, 'hill', 'live', team);
const sessionsOf = (id: string) => sessionsIn(fake, id);

beforeAll(async () => {
  [sandbox, fake] = await Promise.all([startWeekSandbox({ seed: 9, scale: 'small' }), startFakeGoogle()]);
  const teams = sandbox.school.teams;
  teamA = teams[0]!.id;
  teamB = teams[1]!.id;
});
afterAll(async () => {
  await fake?.close();
  await sandbox?.close();
});

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rostercal-live-rotation-'));
  fake.knobs.faults = [];
  for (const c of fake.calendars()) fake.deleteCalendar(c.id);
  rawTargets = liveTargets(fake, [teamA, teamB]);
  const config = writeSchoolConfig(dir, sandbox.url, rawTargets);
  env = {
    ROSTERCAL_CONFIG: config,
    HILL_TOKEN: sandbox.token,
    GOOGLE_TOKEN: fake.token,
    PUBLIC_URL: 'https://cal.example.org',
  };
  return () => rmSync(dir, { recursive: true, force: true });
});

/** A first sync: the team's public calendar, its events, and the other team's calendar. */
async function firstSync(issued = true) {
  const r = await cli(['sync']);
  expect(r.code, r.out).toBe(0);
  const [old] = teamCalendars(teamA);
  expect(old && isPublic(old)).toBe(true);
  const sessions = sessionsOf(old!.id);
  expect(sessions.length).toBeGreaterThan(0);
  const [other] = teamCalendars(teamB);
  // The links were sent to families (tokens issued): a rotation makes version 2.
  if (issued) expect((await cli(['feeds', 'list'])).code).toBe(0);
  return { old: old!, sessions, other: other! };
}

/** Only team and activity calendars of the public target ever carry the public rule. */
function expectNoOtherPublic(): void {
  for (const c of fake.calendars())
    if (isPublic(c))
      expect(c.description ?? '', c.summary).toMatch(/\[rostercal hill\/live\/team:\d+( g\d+)?\]/);
}

// Each test runs four to six CLI children: about 40 s on a loaded two-core machine, past the suite's 60 s default at
// times, and 160-183 s at load 27; a test cut short leaves its child writing into the next one's fake. Their limits
// are deadlines (6 min), not measures.
describe('rotating a feed replaces its live Google calendar', () => {
  it('the old calendar stops being public at once and is gone after the next push; the page offers the new one', async () => {
    // Never sent: the rotation keeps feed version 1, yet the calendar is replaced.
    const { old, sessions, other } = await firstSync(false);
    expect(await offered(teamA)).toBe(old.id);

    const rotated = await cli(['feeds', 'rotate', 'team', String(teamA)]);
    expect(rotated.code, rotated.out).toBe(0);
    expect(rotated.out).toContain(`live Google calendar (live): ${old.id} is no longer public`);
    expect(rotated.out).toContain('families who added the live Google calendar must add it again');
    // At once: not public, not offered; still there (families' copies go quiet, as a rotated feed does).
    expect(isPublic(fake.calendar(old.id)!)).toBe(false);
    expect(await offered(teamA)).toBeNull();
    expect(await withStore((s) => pendingRotations(s, 'hill', 'live'))).toEqual([`team:${teamA}`]);

    const next = await cli(['sync']);
    expect(next.code, next.out).toBe(0);
    expect(fake.calendar(old.id)).toBeUndefined();
    const now = await expectOnePublic(teamA, sessions);
    expect(now.id).not.toBe(old.id);
    expect(teamCalendars(teamA)[0]!.gen).toBe(2);
    // A family holding both calendars never sees one event twice: no iCalUID is shared.
    const oldUids = new Set([...old.events.values()].map((e) => e.iCalUID));
    expect(fake.liveEvents(now.id).filter((e) => oldUids.has(e.iCalUID))).toEqual([]);
    // The other team's calendar is untouched.
    expect(teamCalendars(teamB).map((c) => c.id)).toEqual([other.id]);
    expect(isPublic(fake.calendar(other.id)!)).toBe(true);
    expect(await withStore((s) => pendingRotations(s, 'hill', 'live'))).toEqual([]);
    // Audited with both calendar ids.
    const audit = await withStore((s) => s.access.listAudit({ action: 'feed-rotate' }));
    expect(audit.map((a) => a.detail).join('\n')).toContain(old.id);
    expect(audit.some((a) => a.detail?.includes(`${old.id} deleted, replaced by ${now.id}`))).toBe(true);
    expectNoOtherPublic();

    // A third sync has nothing to replace.
    fake.resetStats();
    expect((await cli(['sync'])).code).toBe(0);
    expect(fake.stats.byOperation['POST calendars.insert'] ?? 0).toBe(0);
    expect(fake.stats.byOperation['DELETE calendars.delete'] ?? 0).toBe(0);
    await expectOnePublic(teamA, sessions);
  }, 360_000);

  it('a rotation while Google answers 403/429 closes the old calendar on the next push; status says it is pending', async () => {
    const { old, sessions } = await firstSync();
    // Google throttles longer than the CLI's backoff: the rotation cannot reach it.
    fake.knobs.faults = [
      { match: /acl/, status: 429, rate: 0.5 },
      { match: /acl/, status: 403, reason: 'rateLimitExceeded' },
    ];
    const rotated = await cli(['feeds', 'rotate', 'team', String(teamA)]);
    expect(rotated.code, rotated.out).toBe(0);
    expect(rotated.out).toContain(`${old.id} could not be closed now`);
    expect(await offered(teamA)).toBeNull();
    const status = await cli(['status']);
    expect(status.out).toMatch(/live Google calendar.*pending/i);

    // A throttle that clears within the push's retries.
    fake.knobs.faults = [
      { match: /acl|calendars/, status: 429, limit: 3 },
      { match: /calendars/, status: 403, reason: 'userRateLimitExceeded', limit: 2 },
    ];
    const next = await cli(['sync']);
    expect(next.code, next.out).toBe(0);
    expect(fake.calendar(old.id)).toBeUndefined();
    await expectOnePublic(teamA, sessions);
    expect((await cli(['status'])).out).not.toMatch(/live Google calendar.*pending/i);
    expectNoOtherPublic();
  }, 360_000);

  it('a lost database: the old calendar is recognised by its marker and closed, not adopted', async () => {
    const { old, sessions } = await firstSync();
    // Google unreachable at rotation: the old calendar stays public.
    fake.knobs.faults = [{ match: /acl/, status: 503 }];
    expect((await cli(['feeds', 'rotate', 'team', String(teamA)])).code).toBe(0);
    fake.knobs.faults = [];
    expect(isPublic(fake.calendar(old.id)!)).toBe(true);
    // The database is lost; the feed secret and the rotation record survive.
    for (const f of ['rostercal.sqlite', 'rostercal.sqlite-wal', 'rostercal.sqlite-shm'])
      rmSync(join(dir, 'data', f), { force: true });
    const next = await cli(['sync']);
    expect(next.code, next.out).toBe(0);
    expect(fake.calendar(old.id)).toBeUndefined();
    const now = await expectOnePublic(teamA, sessions);
    expect(now.id).not.toBe(old.id);
    expectNoOtherPublic();
  }, 360_000);

  it('a crash between creating the new calendar and deleting the old: the next push finishes the job', async () => {
    const { old, sessions } = await firstSync();
    expect((await cli(['feeds', 'rotate', 'team', String(teamA)])).code).toBe(0);
    // The push is killed when it asks Google to delete the old calendar, the new one made and filled: a barrier at
    // Google's door orders the crash, not a poll racing the push. The delete, let go once the child is dead, is
    // answered 500, so the old calendar stays as a crash leaves it.
    let release: () => void = () => {};
    const deleting = new Promise<void>((reached) => {
      fake.knobs.holds = [
        {
          match: /^DELETE \/calendar\/v3\/calendars\/[^/]+$/,
          reached: () => reached(),
          release: new Promise<void>((r) => {
            release = r;
          }),
        },
      ];
    });
    fake.knobs.faults = [{ match: /^DELETE \/calendar\/v3\/calendars\/[^/]+$/, status: 500 }];
    const child = rostercal(['sync'], env);
    try {
      await Promise.race([
        deleting,
        child.ended.then(() => {
          throw new Error(`sync ended without deleting a calendar:\n${child.output()}`);
        }),
      ]);
      child.proc.kill('SIGKILL');
      await child.ended;
    } finally {
      release();
      fake.knobs.holds = [];
      fake.knobs.faults = [];
    }
    const between = teamCalendars(teamA);
    expect(between).toHaveLength(2);
    // Never two public calendars for the team, even mid-way.
    expect(between.filter(isPublic).length).toBeLessThanOrEqual(1);
    expect(isPublic(fake.calendar(old.id)!)).toBe(false);

    const next = await cli(['sync']);
    expect(next.code, next.out).toBe(0);
    expect(fake.calendar(old.id)).toBeUndefined();
    await expectOnePublic(teamA, sessions);
    expectNoOtherPublic();
  }, 360_000);
});
