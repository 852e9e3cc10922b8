// A pull's resources in turn (sync/pull/run-resources.ts), from the sandbox over HTTP into a real SQLite store: a
// full run writes every resource and finishes its run record with the counts; a token refused on the first
// resource leaves the rest not attempted and the run failed; outputs that cannot be stored fail the run.
import { describe, expect, it } from 'vitest';
import type { PullKind } from '../../../src/jobs/pull-summary.ts';
import { runResources } from '../../../src/sync/pull/run-resources.ts';
import { newSchool } from '../../store/each-store.ts';
import { testClient } from '../helpers.ts';
import { lineLogger, stageSchool, stageWorld } from './stage-context.ts';

const world = stageWorld();

async function run(
  schoolId: string,
  kind: PullKind,
  opts: { token?: string; storeOutputs?: () => Promise<void> } = {},
) {
  const school = stageSchool(schoolId, world.sandbox);
  const client = testClient(
    { url: world.sandbox.url, token: opts.token ?? world.sandbox.token },
    { maxRetries: 0 },
  );
  const startedAt = new Date(world.sandbox.now());
  const runId = await world.store.runs.startRun({ schoolId, kind, at: startedAt.toISOString() });
  const progress = { counts: {}, upstreamRequests: 0, retries: 0, throttled: 0 };
  const { log } = lineLogger();
  const summary = await runResources(
    {
      store: world.store,
      client,
      school,
      kind,
      ...(opts.storeOutputs ? { storeOutputs: opts.storeOutputs } : {}),
    },
    {
      runId,
      kind,
      upgradedBecause: null,
      startedAt,
      now: () => new Date(world.sandbox.now()),
      onProgress: () => {},
      log,
      progress,
    },
  );
  const record = (await world.store.runs.listRuns(schoolId)).find((r) => r.id === runId)!;
  return { summary, record };
}

describe("a pull's resources in turn", () => {
  it('writes every resource and finishes the run with its counts; unchanged, the cursors still move', async () => {
    const school = newSchool();
    const { summary, record } = await run(school, 'full');
    expect(summary.status).toBe('succeeded');
    expect(summary.resources.every((r) => r.status === 'ok')).toBe(true);
    const staff = (await world.store.records.liveIds(school, 'staff')).length;
    expect(summary.counts.staff).toMatchObject({ added: staff });
    expect(record).toMatchObject({ status: 'succeeded', counts: summary.counts });

    const cursorsBefore = await world.store.records.cursors(school);
    world.sandbox.setNow(new Date(Date.parse(world.sandbox.now()) + 60_000).toISOString());
    const again = await run(school, 'incremental');
    expect(again.summary.status).toBe('succeeded');
    const cursorsAfter = await world.store.records.cursors(school);
    // Nothing changed, so no resource wrote: the cursors went in the one statement at the run's end.
    expect(cursorsAfter.get('updatedAfter:sessions')).not.toBe(cursorsBefore.get('updatedAfter:sessions'));
    expect(Date.parse(cursorsAfter.get('updatedAfter:sessions')!)).toBeGreaterThan(
      Date.parse(cursorsBefore.get('updatedAfter:sessions')!),
    );
  });

  it('after a refused token attempts nothing more, and fails the run', async () => {
    const { summary, record } = await run(newSchool(), 'full', { token: 'not-the-token' });
    expect(summary.status).toBe('failed');
    const [first, ...rest] = summary.resources;
    expect(first!.status).toBe('failed');
    expect(rest.length).toBeGreaterThan(0);
    // Each names the refusal, not a stop.
    for (const r of rest)
      expect(r).toMatchObject({ status: 'skipped', error: `not attempted: ${first!.error}` });
    expect(record.status).toBe('failed');
  });

  it('fails a run whose outputs cannot be stored', async () => {
    const { summary, record } = await run(newSchool(), 'full', {
      storeOutputs: async () => {
        throw new Error('disk full');
      },
    });
    expect(summary.status).toBe('failed');
    expect(record).toMatchObject({ status: 'failed' });
    expect(record.errors).toContain('disk full');
  });
});
