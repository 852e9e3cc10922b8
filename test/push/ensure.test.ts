// The second push stage (push/ensure.ts), after a real gather on a store filled by a real pull from the sandbox,
// against the fake Google Calendar over HTTP: a dry run remembers nothing; a first run creates
// each team's calendar and remembers it as reconciled at the run's start (it holds nothing); a second run finds
// the same calendars and creates none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProjectionContext, projectSession } from '../../src/calendar/index.ts';
import type { PushTargetConfig } from '../../src/config/push-targets.ts';
import { syncWindow } from '../../src/jobs/window.ts';
import { ensureCalendars } from '../../src/push/ensure.ts';
import { gather } from '../../src/push/gather.ts';
import type { PushProvider } from '../../src/push/provider.ts';
import { createProvider } from '../../src/push/providers.ts';
import { type FakeGoogle, startFakeGoogle } from '../fakes/google-calendar.ts';
import { googleTeamTarget } from './google-stage.ts';
import { type Bench, startBench } from './harness.ts';
import { SCHOOL } from './stage-calendars.ts';

let bench: Bench;
let fake: FakeGoogle;
let target: PushTargetConfig;
let provider: PushProvider;
beforeAll(async () => {
  [bench, fake] = await Promise.all([startBench(), startFakeGoogle()]);
  target = googleTeamTarget(fake);
  provider = await createProvider(SCHOOL, target);
}, 120_000);
afterAll(async () => {
  await fake?.close();
  await bench?.close();
});

async function ensure(dryRun: boolean) {
  const startedAt = bench.now().toISOString();
  const notes: string[] = [];
  const gathered = await gather({
    store: bench.store,
    school: { id: SCHOOL, name: 'Hill School', timeZone: bench.school.timeZone },
    target,
    window: syncWindow(bench.now(), target.window),
    now: startedAt,
    context: await loadProjectionContext(bench.store, SCHOOL),
    project: projectSession,
    provider,
    dryRun,
    note: (m) => notes.push(m),
  });
  const reached: string[] = [];
  const ensured = await ensureCalendars(
    {
      store: bench.store,
      schoolId: SCHOOL,
      targetId: target.id,
      provider,
      dryRun,
      startedAt,
      note: (m) => notes.push(m),
      reached: (o) => reached.push(`${o.key}:${o.state}`),
    },
    gathered,
  );
  return { ensured, notes, reached, startedAt };
}

const stored = () => bench.store.push.listPushCalendars(SCHOOL, target.id);

describe('ensuring the calendars of a push (in order: dry run, first run, second run)', () => {
  it('a dry run remembers no calendar', async () => {
    const { ensured } = await ensure(true);
    expect(ensured.length).toBeGreaterThan(1);
    // It says what it would create, but writes nothing of it to the store.
    expect(await stored()).toEqual([]);
  });

  let first: Map<string, string>;
  it('a first run creates every calendar and remembers it as reconciled at its start', async () => {
    const { ensured, reached, startedAt } = await ensure(false);
    expect(ensured.every((c) => c.fresh && c.outcome.state === 'created')).toBe(true);
    expect(reached).toEqual(ensured.map((c) => `${c.spec.key}:created`));
    const saved = await stored();
    expect(saved.map((s) => s.calendarKey).sort()).toEqual(ensured.map((c) => c.spec.key).sort());
    for (const s of saved) expect(s.lastReconciledAt).toBe(startedAt);
    first = new Map(saved.map((s) => [s.calendarKey, s.remoteCalendarId]));
  });

  it('a second run finds the same calendars and creates none', async () => {
    const { ensured } = await ensure(false);
    expect(ensured.some((c) => c.fresh)).toBe(false);
    expect(ensured.every((c) => c.outcome.state === 'ok' && c.ref)).toBe(true);
    const saved = await stored();
    expect(new Map(saved.map((s) => [s.calendarKey, s.remoteCalendarId]))).toEqual(first);
  });
});
