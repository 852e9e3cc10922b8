// Issue 27, "never lose a full pull, never call a skip a success": three real replica processes on one PostgreSQL
// database, their fires driven by the test (as each replica's cron would fire them), the upstream behind a gate
// that holds requests so that a pull is provably running when the next fire comes. Every full fire that meets a
// running pull is executed once that pull ends, even when its replica dies while waiting or the pull it waited
// for dies; an incremental fire let pass is recorded and shown as skipped, with why; a job whose replica died
// reads as interrupted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { describeJob } from '../../src/sync/job-display.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { type Gate, startGate } from '../support/gate.ts';
import { is, killReplicas, type Replica, startReplica, winner } from '../support/replicas.ts';
import { openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

describe('full fires that meet a running pull, three replicas on PostgreSQL', () => {
  let sandbox: Sandbox;
  let gate: Gate;
  let ts: TestStore;
  const replicas: Replica[] = [];

  beforeAll(async () => {
    // The replicas pull on the real clock: a school of this week's shape stays inside their windows.
    sandbox = await startWeekSandbox({ seed: 5, scale: 'small' });
    gate = await startGate(sandbox.url);
    ts = await openTestStore('postgres');
    const first = await pullSchool({
      store: ts.store,
      client: testClient(sandbox),
      school: testSchool(sandbox),
      kind: 'full',
    });
    expect(first.status).toBe('succeeded');
  });
  afterAll(async () => {
    killReplicas(replicas);
    await gate?.stop();
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('runs every full fire, records skipped fires as skipped, and shows a dead replica’s job as interrupted', async () => {
    const env = {
      DATABASE_URL: ts.env.DATABASE_URL!,
      UPSTREAM_URL: gate.url,
      UPSTREAM_TOKEN: sandbox.token,
      LOG_LEVEL: 'warn',
    };
    const all = ['replica-a', 'replica-b', 'replica-c'].map((n) => startReplica(n, env));
    replicas.push(...all);
    await Promise.all(all.map((r) => r.next((l) => l.type === 'ready')));
    const alive = new Set(all);
    const live = () => [...alive];
    const fullRunsBefore = (await ts.store.runs.listRuns('hillcrest', { kind: 'full' })).length;
    const minute = (n: number) => new Date(Date.parse('2026-11-27T00:00:00Z') + n * 60_000).toISOString();

    /**
     * An incremental fire at `t` whose pull is held inside its first request (it holds the school), then the
     * full fire of the same minute: it reaches the pulling replica last (its clock a little behind), so another
     * replica wins it and must wait. Returns the holder and the full fire's winner, once that one waits.
     */
    const collide = async (t: string) => {
      gate.close();
      for (const r of live()) r.fire('incremental', t);
      const holder = await winner(live(), 'incremental', t);
      await holder.next(is('started', 'incremental', t));
      await gate.held();
      const others = live().filter((r) => r !== holder);
      for (const r of others) r.fire('full', t);
      const waiter = await winner(others, 'full', t);
      holder.fire('full', t);
      await holder.next(is('queued-elsewhere', 'full', t));
      await waiter.next(is('waiting', 'full', t));
      return { holder, waiter };
    };

    // Rounds 1–3: the waiting full pull runs as soon as the incremental one ends; an incremental fire that
    // comes meanwhile is let pass, and says so.
    for (let round = 0; round < 3; round++) {
      const t = minute(round * 3);
      const { holder, waiter } = await collide(t);
      const later = minute(round * 3 + 1);
      for (const r of live()) r.fire('incremental', later);
      const third = await winner(live(), 'incremental', later);
      const passed = await third.next(is('finished', 'incremental', later));
      expect(passed.outcome!.status).toBe('skipped');
      expect(passed.outcome!.error).toMatch(/a pull of hillcrest is already running|another pull/);
      if (round === 0) {
        // Shown as skipped, with why, while the incremental run it met is still going.
        const job = (await ts.store.runs.listJobStatus('hillcrest')).find((j) => j.job === 'incremental')!;
        expect(job.lastSkipReason).toMatch(/already running|another pull/);
        expect(describeJob(job)).toMatchObject({ result: 'running' });
        expect(describeJob(job).note).toMatch(/skipped: .*(already running|another pull)/);
      }
      gate.open();
      const held = await holder.next(is('finished', 'incremental', t));
      expect(held.outcome!.status).toBe('succeeded');
      const full = await waiter.next(is('finished', 'full', t));
      expect(full.outcome, JSON.stringify(waiter.lines)).toEqual({ status: 'succeeded', error: null });
      const pulled = waiter.lines.filter((l) => l.type === 'pulled').at(-1)!;
      expect(pulled).toMatchObject({ kind: 'full', requestedKind: 'full', status: 'succeeded' });
      expect(await ts.store.runs.fullPullRequest('hillcrest')).toBeNull();
    }
    const jobs = await ts.store.runs.listJobStatus('hillcrest');
    const fullJob = jobs.find((j) => j.job === 'full')!;
    expect(describeJob(fullJob)).toMatchObject({ result: 'succeeded' });

    // Round 4: the replica waiting to run the full pull dies. The request it wrote outlives it: the next pull of
    // any kind, on any replica, runs full.
    {
      const t = minute(9);
      const { holder, waiter } = await collide(t);
      expect(await ts.store.runs.fullPullRequest('hillcrest')).not.toBeNull();
      waiter.proc.kill('SIGKILL');
      await waiter.exit;
      alive.delete(waiter);
      gate.open();
      await holder.next(is('finished', 'incremental', t));
      const next = minute(10);
      for (const r of live()) r.fire('incremental', next);
      const runner = await winner(live(), 'incremental', next);
      const done = await runner.next(is('finished', 'incremental', next));
      expect(done.outcome!.status).toBe('succeeded');
      const pulled = runner.lines.filter((l) => l.type === 'pulled').at(-1)!;
      expect(pulled).toMatchObject({ kind: 'full', requestedKind: 'incremental', status: 'succeeded' });
      expect(pulled.upgradedBecause).toMatch(/full pull asked for at .* by replica-/);
      expect(await ts.store.runs.fullPullRequest('hillcrest')).toBeNull();
    }

    // Round 5: the replica holding the school dies mid-pull. The waiting full pull takes the school over and runs;
    // the dead replica's job reads as interrupted (status and /admin), not running until its next fire.
    {
      const t = minute(12);
      const { holder, waiter } = await collide(t);
      holder.proc.kill('SIGKILL');
      await holder.exit;
      alive.delete(holder);
      gate.open();
      const full = await waiter.next(is('finished', 'full', t));
      expect(full.outcome).toEqual({ status: 'succeeded', error: null });
      const job = (await ts.store.runs.listJobStatus('hillcrest')).find((j) => j.job === 'incremental')!;
      expect(job.state).toBe('interrupted');
      expect(describeJob(job)).toMatchObject({ result: 'interrupted' });
      expect(describeJob(job).note).toContain(job.owner!);
      const status = rostercal(['status'], schoolEnv(sandbox, ts.env));
      expect(await status.exit, status.output()).toBe(0);
      expect(status.output()).toMatch(/incremental\s+\S+ \S+ \S+\s+interrupted/);
    }

    // Five full fires, five full pulls recorded, none lost; no pull failed.
    const runs = await ts.store.runs.listRuns('hillcrest', { limit: 100 });
    expect(runs.filter((r) => r.kind === 'full').length - fullRunsBefore).toBe(5);
    expect(runs.filter((r) => r.status === 'failed')).toEqual([]);
    // No fire was called a success without running.
    const finished = all.flatMap((r) => r.lines).filter((l) => l.type === 'finished');
    for (const f of finished)
      if (f.outcome!.status === 'succeeded') expect(f.outcome!.error ?? '').not.toMatch(/skip/);
  }, 240_000);
});
