// The pull's run record (sync/pull/run-record.ts), in a real SQLite store: runs whose process died are closed as
// interrupted for good (ownerless ones only once old), whether a full pull ever completed, progress after each
// resource with the upstream's counts, and the end of a run that stopped; a store that refuses a line is logged,
// not thrown.
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processOwner } from '../../../src/jobs/heartbeat.ts';
import { createLogger } from '../../../src/log.ts';
import {
  closeInterruptedRuns,
  diffStats,
  recordProgress,
  recordRunStopped,
  runningHere,
} from '../../../src/sync/pull/run-record.ts';
import { newSchool } from '../../store/each-store.ts';
import { runEnd } from '../../store/fixtures.ts';
import { openTestStore, type TestStore } from '../helpers.ts';

const NOW = new Date('2026-11-23T12:00:00.000Z');
const hoursAgo = (h: number) => new Date(NOW.getTime() - h * 3_600_000).toISOString();
const counts = { sessions: { added: 3, changed: 1, deleted: 0, unchanged: 5, skipped: 0 } };
const upstream = { requests: 12, retries: 2, throttled: 1, errors: 0 };

/** A real logger writing into lines the test reads. */
function logger() {
  const out = new PassThrough();
  const lines: { level: string; msg: string }[] = [];
  out.on('data', (b: Buffer) => {
    for (const l of b.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
  });
  return { log: createLogger({ level: 'info', destination: out }), lines };
}

let ts: TestStore;
beforeAll(async () => {
  ts = await openTestStore('sqlite');
});
afterAll(() => ts?.cleanup());

describe("the pull's run record", () => {
  it('closes runs whose owner stopped and ownerless runs over two hours old as interrupted, keeping their counts', async () => {
    const s = newSchool();
    const runs = ts.store.runs;
    const dead = await runs.startRun({ schoolId: s, kind: 'full', at: hoursAgo(0.5), owner: 'gone:1:abc' });
    await runs.recordRunProgress(dead, { counts, upstreamRequests: 4, retries: 0, throttled: 0 });
    const old = await runs.startRun({ schoolId: s, kind: 'incremental', at: hoursAgo(3) });
    const young = await runs.startRun({ schoolId: s, kind: 'incremental', at: hoursAgo(1) });
    const { log, lines } = logger();
    await closeInterruptedRuns(ts.store, (await runs.pullOpening(s)).recent, s, NOW, log);
    const byId = new Map((await runs.listRuns(s)).map((r) => [r.id, r]));
    expect(byId.get(dead)).toMatchObject({
      status: 'interrupted',
      finishedAt: NOW.toISOString(),
      counts,
      upstreamRequests: 4,
      errors: ['interrupted: the process running it (gone:1:abc) stopped'],
    });
    expect(byId.get(old)).toMatchObject({
      status: 'interrupted',
      errors: ['interrupted: the process running it (unknown) stopped'],
    });
    expect(byId.get(young)).toMatchObject({ status: 'running', finishedAt: null });
    expect(lines.filter((l) => l.msg === 'closed a run whose process stopped')).toHaveLength(2);
    // Closed for good: a second pass finds nothing to close.
    await closeInterruptedRuns(ts.store, (await runs.pullOpening(s)).recent, s, NOW, log);
    expect(lines).toHaveLength(2);
  });

  it("closes a pull's run in this process's name that no pull of this process runs (its end refused by the store)", async () => {
    const s = newSchool();
    const runs = ts.store.runs;
    const own = processOwner().id;
    // This process, alive: only that it runs no such pull tells the left run over.
    await runs.beat(processOwner(), new Date().toISOString());
    const left = await runs.startRun({ schoolId: s, kind: 'incremental', at: hoursAgo(0.1), owner: own });
    const under = await runs.startRun({ schoolId: s, kind: 'incremental', at: hoursAgo(0.1), owner: own });
    const push = await runs.startRun({ schoolId: s, kind: 'push', at: hoursAgo(0.1), owner: own });
    const ended = runningHere(s, under);
    const { log, lines } = logger();
    await closeInterruptedRuns(ts.store, (await runs.pullOpening(s)).recent, s, NOW, log);
    const byId = new Map((await runs.listRuns(s)).map((r) => [r.id, r]));
    expect(byId.get(left)).toMatchObject({
      status: 'interrupted',
      errors: ['interrupted: it ended in this process while the store could not take its end'],
    });
    expect(byId.get(under)).toMatchObject({ status: 'running', finishedAt: null });
    expect(byId.get(push)).toMatchObject({ status: 'running', finishedAt: null });
    expect(lines.map((l) => l.msg)).toEqual(['closed a run that ended here before the store took its end']);
    ended();
  });

  it('reads whether a full pull completed (succeeded or suspicious), and a full-pull request, with its runs', async () => {
    const s = newSchool();
    const runs = ts.store.runs;
    const end = async (kind: 'full' | 'incremental', status: 'succeeded' | 'failed' | 'suspicious') =>
      runs.finishRun(
        await runs.startRun({ schoolId: s, kind, at: hoursAgo(1) }),
        runEnd(status, hoursAgo(0)),
      );
    const completed = async () => (await runs.pullOpening(s)).completedFull;
    expect(await runs.pullOpening(s)).toEqual({ recent: [], fullRequest: null, completedFull: false });
    await end('full', 'failed');
    await end('incremental', 'succeeded');
    expect(await completed()).toBe(false);
    await end('full', 'suspicious');
    expect(await completed()).toBe(true);
    await runs.requestFullPull(s, hoursAgo(0.5), 'replica-b');
    const opening = await runs.pullOpening(s);
    expect(opening.fullRequest).toEqual({ at: hoursAgo(0.5), by: 'replica-b' });
    expect(opening.recent.map((r) => [r.kind, r.status])).toEqual([
      ['full', 'suspicious'],
      ['incremental', 'succeeded'],
      ['full', 'failed'],
    ]);
  });

  it("records progress with the upstream's counts, and a stopped run's end with what it committed", async () => {
    const s = newSchool();
    const id = await ts.store.runs.startRun({ schoolId: s, kind: 'full', at: hoursAgo(0.1) });
    const { log } = logger();
    const progress = { counts, upstreamRequests: 0, retries: 0, throttled: 0 };
    await recordProgress(ts.store, id, progress, upstream, log);
    expect(progress).toEqual({ counts, upstreamRequests: 12, retries: 2, throttled: 1 });
    expect((await ts.store.runs.listRuns(s))[0]).toMatchObject({
      status: 'running',
      counts,
      upstreamRequests: 12,
      retries: 2,
      throttled: 1,
    });
    await recordRunStopped(ts.store, id, { status: 'failed', at: NOW, progress, error: 'disk full' }, log);
    expect((await ts.store.runs.listRuns(s))[0]).toMatchObject({
      status: 'failed',
      finishedAt: NOW.toISOString(),
      counts,
      upstreamRequests: 12,
      errors: ['failed: disk full'],
      warning: null,
    });
  });

  it('logs, and does not throw, when the store cannot take a progress line or a run end', async () => {
    const closed = await ts.reopen();
    await closed.close();
    const { log, lines } = logger();
    const progress = { counts, upstreamRequests: 0, retries: 0, throttled: 0 };
    await recordProgress(closed, 1, progress, upstream, log);
    await recordRunStopped(closed, 1, { status: 'interrupted', at: NOW, progress, error: 'SIGTERM' }, log);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['error', 'could not record the run’s progress'],
      ['error', 'could not record the interrupted run'],
    ]);
  });

  it('tells what a step cost the upstream from two readings of its counters', () => {
    expect(diffStats(upstream, { requests: 2, retries: 1, throttled: 1, errors: 0 })).toEqual({
      requests: 10,
      retries: 1,
      throttled: 0,
      errors: 0,
    });
  });
});
