// Issue 32 through `/admin`: POST /admin/feeds/rotate to a real `rostercal serve` child pushing to the Google
// fake. The old live calendar loses its public rule at once; the rotation starts a push of the target at once (no
// pull or push fire comes round during the test: both schedules are a year away), which makes the new calendar,
// fills it with every event once, offers it on the landing page and deletes the old one; `rostercal status`
// says the rotation is pending until then. Audited with both calendar ids; the pages tell the admin that families
// must add the live calendar again. Only team calendars of the public target ever carry the public rule, not the
// staff or student calendars pushed beside them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import { type FakeGoogle, startFakeGoogle } from '../fakes/google-calendar.ts';
import { type Child, rostercal, runRostercal, writeSchoolConfig } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import {
  teamCalendars as calendarsOf,
  fakeGoogleSettings,
  isPublic,
  liveTargets,
  sessionsOf as sessionsIn,
} from '../support/live-google.ts';
import { freePort } from '../support/ports.ts';
import { until } from '../support/until.ts';

const ADMIN_TOKEN = 'admin-rotation-test-admin-token-0123456789abcdef';
const ANDROID =
  'Mozilla/5.0 (Linux; Android 15; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36';

let sandbox: Sandbox;
let fake: FakeGoogle;
let dir: string;
let env: Record<string, string>;
let serve: Child;
let base: string;
let teamA: number;
let teamB: number;

async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore({ dataDir: join(dir, 'data') });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** Push runs of the target that have ended. */
const pushesDone = (target: string) =>
  withStore(async (s) =>
    (await s.runs.listRuns('hill', { kind: 'push', limit: 100 })).filter(
      (r) => r.target === target && r.status !== 'running',
    ),
  );

/** The calendar id a family's landing page offers (the "updates within minutes" button), or null. */
async function offeredOn(page: string): Promise<string | null> {
  const res = await fetch(`${base}/feeds/${page}`, { headers: { 'User-Agent': ANDROID } });
  const html = await res.text();
  expect(res.status).toBe(200);
  const live = /href="([^"]+)" data-kind="google-live"/.exec(html);
  return live ? new URL(live[1]!.replaceAll('&amp;', '&')).searchParams.get('cid') : null;
}

const admin = (path: string, init: RequestInit = {}) =>
  fetch(`${base}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, ...(init.headers as Record<string, string>) },
  });

const teamCalendars = (team: number) => calendarsOf(fake, 'hill', 'live', team);
const sessionsOf = (id: string) => sessionsIn(fake, id);

beforeAll(async () => {
  [sandbox, fake] = await Promise.all([startWeekSandbox({ seed: 9, scale: 'small' }), startFakeGoogle()]);
  [teamA, teamB] = sandbox.school.teams.map((t) => t.id) as [number, number];
  const students = sandbox.school.students.slice(0, 3).map((s) => s.id);
  dir = mkdtempSync(join(tmpdir(), 'rostercal-admin-rotation-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const config = writeSchoolConfig(
    dir,
    sandbox.url,
    [
      ...liveTargets(fake, [teamA, teamB]),
      // Pushed beside it, in the same account: never public.
      {
        id: 'kids',
        provider: 'google',
        scope: 'student',
        ids: students,
        google: fakeGoogleSettings(fake),
      },
    ],
    {
      extra: { port, publicUrl: base },
      // No fire comes round while the test runs: only the first pull and the rotation push.
      school: { schedules: { incremental: '0 3 1 1 *', full: '0 3 1 1 *' } },
    },
  );
  env = { ROSTERCAL_CONFIG: config, HILL_TOKEN: sandbox.token, GOOGLE_TOKEN: fake.token, ADMIN_TOKEN };
  serve = rostercal(['serve'], env);
  await serve.waitFor(/Stop with Ctrl-C/, 120_000);
}, 180_000);

afterAll(async () => {
  serve?.proc.kill('SIGTERM');
  await serve?.exit;
  await fake?.close();
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('rotating a team link through /admin on serve replaces its live Google calendar', () => {
  it('closes the old calendar at once, pushes the new one at once, and says so', async () => {
    // serve's first pull pushed every target.
    await until(
      'the first push of each target',
      async () =>
        (await Promise.all(['live', 'coaches', 'kids'].map(pushesDone))).every((d) => d.length === 1),
      120_000,
    );
    const [old] = teamCalendars(teamA);
    expect(old && isPublic(old)).toBe(true);
    const sessions = sessionsOf(old!.id);
    expect(sessions.length).toBeGreaterThan(0);
    const [other] = teamCalendars(teamB);
    const staffAndStudents = fake.calendars().filter(
      (c) =>
        !teamCalendars(teamA)
          .concat(teamCalendars(teamB))
          .some((t) => t.id === c.id),
    );
    expect(staffAndStudents.length).toBeGreaterThan(1);

    // The admin asks first: the page says what happens to families of the live calendar.
    const query = new URLSearchParams({ school: 'hill', scope: 'team', id: String(teamA) });
    const ask = await admin(`/admin/feeds/rotate?${query}`);
    const askPage = await ask.text();
    expect(ask.status, askPage).toBe(200);
    expect(askPage).toContain('Families using the live Google calendar must add it again');

    // The push the rotation starts waits at Google's door until the test has looked: a barrier, not a sleep.
    let release: () => void = () => {};
    let reached: () => void = () => {};
    const pushArrived = new Promise<void>((r) => {
      reached = r;
    });
    fake.knobs.holds = [
      {
        // Every request but the rotation's own (the old calendar's public rule, removed before the answer).
        match: /^(?!DELETE \/calendar\/v3\/calendars\/[^/]+\/acl\/)/,
        reached: () => reached(),
        release: new Promise<void>((r) => {
          release = r;
        }),
      },
    ];
    const runsBefore = (await pushesDone('live')).length;
    let rotated: Response;
    try {
      rotated = await admin('/admin/feeds/rotate', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: query.toString(),
      });
      const page = await rotated.text();
      expect(rotated.status, page).toBe(200);
      expect(page).toContain('has stopped working');
      expect(page).toContain('Families who added the live Google calendar must add it again');
      expect(page).toContain('(started now)');
      const fresh = /\/feeds\/([\w-]{32})"/.exec(page)?.[1];
      expect(fresh).toBeDefined();

      // At once: the old calendar is no longer public, nor offered; no other team's calendar changed.
      expect(isPublic(fake.calendar(old!.id)!)).toBe(false);
      expect(await offeredOn(fresh!)).toBeNull();
      expect(isPublic(fake.calendar(other!.id)!)).toBe(true);
      // The push is under way (it reached Google) and the rotation is pending, as `status` says.
      await Promise.race([
        pushArrived,
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error('no push of the target started after the rotation')), 60_000),
        ),
      ]);
      const status = await runRostercal(['status'], env);
      expect(status.stdout, status.stderr).toMatch(
        new RegExp(`live Google calendar of team:${teamA} \\(target live\\): rotation pending`),
      );
      release();

      await until('the rotation push', async () => (await pushesDone('live')).length > runsBefore, 120_000);
      // The old calendar is gone; the new one holds every event once and is what the page offers.
      expect(fake.calendar(old!.id)).toBeUndefined();
      const cals = teamCalendars(teamA);
      expect(cals.map((c) => ({ gen: c.gen, public: isPublic(c) }))).toEqual([{ gen: 2, public: true }]);
      const now = cals[0]!;
      expect(sessionsOf(now.id)).toEqual(sessions);
      expect(await offeredOn(fresh!)).toBe(now.id);
      const oldUids = new Set([...old!.events.values()].map((e) => e.iCalUID));
      expect(fake.liveEvents(now.id).filter((e) => oldUids.has(e.iCalUID))).toEqual([]);
      expect((await runRostercal(['status'], env)).stdout).not.toMatch(/rotation pending/);

      // Audited with both calendar ids: the admin's rotation names the old one, the push the old and the new.
      const audit = await withStore((s) => s.access.listAudit({ action: 'feed-rotate' }));
      expect(
        audit.some((a) => a.detail?.includes(`live Google calendar ${old!.id} (live) no longer public`)),
      ).toBe(true);
      expect(audit.some((a) => a.detail?.includes(`${old!.id} deleted, replaced by ${now.id}`))).toBe(true);
    } finally {
      release();
      fake.knobs.holds = [];
    }

    // Public: exactly the two team calendars of the public target; the staff and student calendars never.
    expect(
      fake
        .calendars()
        .filter(isPublic)
        .map((c) => c.id)
        .sort(),
    ).toEqual([teamCalendars(teamA)[0]!.id, other!.id].sort());
    for (const c of staffAndStudents)
      expect(
        c.acl.some((r) => r.id === 'default'),
        c.summary,
      ).toBe(false);
  }, 240_000);
});
