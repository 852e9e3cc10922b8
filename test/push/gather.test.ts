// The first push stage (push/gather.ts), on a store filled by a real pull from the sandbox: one calendar per
// member of the target's scope, what it should show (the projection of its sessions, rendered by the real Google
// provider) and what we believe we wrote; a calendar resting after a quota refusal gathers nothing; one whose member
// left the scope but holds our events is handed on as retired, to have them removed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProjectionContext, projectSession } from '../../src/calendar/index.ts';
import type { PushTargetConfig } from '../../src/config/push-targets.ts';
import { syncWindow } from '../../src/jobs/window.ts';
import { type GatherInput, gather } from '../../src/push/gather.ts';
import type { PushProvider } from '../../src/push/provider.ts';
import { createProvider } from '../../src/push/providers.ts';
import { type FakeGoogle, startFakeGoogle } from '../fakes/google-calendar.ts';
import { googleTeamTarget } from './google-stage.ts';
import { type Bench, expectedCalendars, startBench } from './harness.ts';
import { mapping, SCHOOL, TARGET } from './stage-calendars.ts';

let bench: Bench;
let fake: FakeGoogle;
let target: PushTargetConfig;
let provider: PushProvider;
let teamIds: number[];
beforeAll(async () => {
  [bench, fake] = await Promise.all([startBench(), startFakeGoogle()]);
  target = googleTeamTarget(fake);
  provider = await createProvider(SCHOOL, target);
  teamIds = (await bench.store.records.list(SCHOOL, 'teams')).map((t) => t.id);
}, 120_000);
afterAll(async () => {
  await fake?.close();
  await bench?.close();
});

async function gathered(over: Partial<GatherInput> = {}) {
  const notes: string[] = [];
  const calendars = await gather({
    store: bench.store,
    school: { id: SCHOOL, name: 'Hill School', timeZone: bench.school.timeZone },
    target,
    window: syncWindow(bench.now(), target.window),
    now: bench.now().toISOString(),
    context: await loadProjectionContext(bench.store, SCHOOL),
    project: projectSession,
    provider,
    dryRun: false,
    note: (m) => notes.push(m),
    ...over,
  });
  return { calendars, notes };
}

describe('gathering the calendars of a push', () => {
  it("one calendar per team, showing the projection of the team's sessions, rendered for Google", async () => {
    const { calendars, notes } = await gathered();
    const want = await expectedCalendars(bench, SCHOOL, target, teamIds);
    expect(teamIds.length).toBeGreaterThan(1);
    expect(calendars.map((c) => c.spec.key).sort()).toEqual([...want.keys()].sort());
    for (const c of calendars) {
      const titles = new Map([...c.desired].map(([id, d]) => [id, d.event.title]));
      expect(titles).toEqual(want.get(c.spec.key));
      expect(c.outcome).toMatchObject({ key: c.spec.key, state: 'ok', remoteCalendarId: null });
      expect(c.outcome).not.toHaveProperty('ops');
      expect(c.spec).toMatchObject({ timeZone: bench.school.timeZone, owner: null, remoteCalendarId: null });
      expect(c.spec.description).toContain(c.spec.marker);
      for (const d of c.desired.values())
        expect(d.identity).toEqual({
          schoolId: SCHOOL,
          target: TARGET,
          calendarKey: c.spec.key,
          sessionId: d.sessionId,
        });
    }
    expect([...want.values()].reduce((n, m) => n + m.size, 0)).toBeGreaterThan(10);
    expect(notes).toEqual([]);
    // A dry run's outcomes collect the operations it would make.
    expect((await gathered({ dryRun: true })).calendars.every((c) => c.outcome.ops?.length === 0)).toBe(true);
  });

  it('rests a paused calendar until its time, keeps its stored id, and names a wanted member not in the store', async () => {
    const [paused, resumed] = teamIds.map((id) => `team:${id}`);
    const now = bench.now().toISOString();
    const later = new Date(bench.now().getTime() + 600_000).toISOString();
    const stored = (calendarKey: string, pausedUntil: string) => ({
      schoolId: SCHOOL,
      target: TARGET,
      calendarKey,
      remoteCalendarId: `cal-${calendarKey}`,
      pausedUntil,
      lastReconciledAt: null,
    });
    await bench.store.push.savePushCalendar(stored(paused!, later));
    await bench.store.push.savePushCalendar(stored(resumed!, now));
    const { calendars, notes } = await gathered({
      target: { ...target, ids: [...teamIds.slice(0, 2), 999_999] },
    });
    expect(calendars.map((c) => c.spec.key)).toEqual([paused, resumed]);
    const [p, r] = calendars;
    expect(p!.outcome).toMatchObject({ state: 'paused', note: `paused until ${later}` });
    expect(p!.desired.size).toBe(0);
    expect(r!.outcome.state).toBe('ok');
    expect(r!.spec.remoteCalendarId).toBe(`cal-${resumed}`);
    expect(notes).toEqual(['team 999999 is not in the store (or no longer active)']);
  });

  it('hands on a calendar whose member left the scope as retired, with its mappings, when it holds our events', async () => {
    const gone = 'team:888888';
    await bench.store.push.savePushCalendar({
      schoolId: SCHOOL,
      target: TARGET,
      calendarKey: gone,
      remoteCalendarId: 'coach@hill.example|cal-gone',
      pausedUntil: null,
      lastReconciledAt: null,
    });
    // Stored but never written into: nothing to remove, not handed on.
    await bench.store.push.savePushCalendar({
      schoolId: SCHOOL,
      target: TARGET,
      calendarKey: 'team:777777',
      remoteCalendarId: 'cal-empty',
      pausedUntil: null,
      lastReconciledAt: null,
    });
    // Our events in a current team's (stored) calendar stay its own; mappings without a stored calendar have
    // nowhere to go.
    const current = `team:${teamIds[1]}`;
    await bench.store.push.upsertPushMappings([
      mapping(gone, 5),
      mapping(current, 6),
      mapping('team:666666', 7),
    ]);
    const { calendars } = await gathered();
    const retired = calendars.filter((c) => c.outcome.state === 'retired');
    expect(retired).toHaveLength(1);
    expect(retired[0]).toMatchObject({
      spec: { key: gone, owner: 'coach@hill.example', remoteCalendarId: 'cal-gone' },
      ref: { key: gone, remoteCalendarId: 'cal-gone', owner: 'coach@hill.example' },
      outcome: { remoteCalendarId: 'coach@hill.example|cal-gone' },
    });
    expect([...retired[0]!.mappings.keys()]).toEqual([5]);
    expect(calendars.some((c) => c.spec.key === 'team:777777')).toBe(false);
    expect(calendars.some((c) => c.spec.key === 'team:666666')).toBe(false);
    expect([...calendars.find((c) => c.spec.key === current)!.mappings.keys()]).toEqual([6]);
  });
});
