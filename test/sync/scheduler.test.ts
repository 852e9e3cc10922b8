// Two real replica processes on one PostgreSQL database with a schedule firing every second: each fire runs
// exactly once across both, and when one replica dies the other keeps running the jobs.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

interface FireLine {
  type: 'claimed' | 'not-elected' | 'started' | 'waiting' | 'finished' | 'skipped' | 'ready';
  at: string;
  job: string;
  fireTime: string | null;
  owner: string;
  outcome?: { status: string; error?: string | null };
  reason?: string;
}

interface Replica {
  name: string;
  proc: ChildProcess;
  lines: FireLine[];
  ready: Promise<void>;
  exit: Promise<unknown>;
}

function replica(name: string, env: Record<string, string>): Replica {
  const proc = spawn(process.execPath, ['test/sync/fixtures/replica.ts'], {
    env: { ...process.env, ...env, REPLICA_NAME: name },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: FireLine[] = [];
  let buffer = '';
  let stderr = '';
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  proc.stdout!.on('data', (d: Buffer) => {
    buffer += d.toString();
    let nl = buffer.indexOf('\n');
    while (nl >= 0) {
      const line = JSON.parse(buffer.slice(0, nl)) as FireLine;
      buffer = buffer.slice(nl + 1);
      if (line.type === 'ready') markReady();
      else lines.push(line);
      nl = buffer.indexOf('\n');
    }
  });
  proc.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exit = once(proc, 'exit');
  exit.then(() => markReady());
  proc.on('exit', (code, signal) => {
    if (code && code !== 0) console.error(`replica ${name} exited ${code} ${signal}: ${stderr}`);
  });
  return { name, proc, lines, ready, exit };
}

/** Polls `check` (what the replicas have printed so far) until it holds; fails after `ms`. */
async function until(what: string, check: () => boolean, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('scheduler with two replicas on PostgreSQL', () => {
  let sandbox: Sandbox;
  let ts: TestStore;
  const replicas: Replica[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 5, scale: 'small' });
    ts = await openTestStore('postgres');
    // The first pull of a school is full: do it here so the every-second incremental fires are cheap.
    const first = await pullSchool({
      store: ts.store,
      client: testClient(sandbox),
      school: testSchool(sandbox),
      kind: 'full',
    });
    expect(first.status).toBe('succeeded');
  });
  afterAll(async () => {
    for (const r of replicas)
      if (r.proc.exitCode === null && r.proc.signalCode === null) r.proc.kill('SIGKILL');
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('runs each fire once across replicas, and the survivor carries on alone', async () => {
    const env = {
      DATABASE_URL: ts.env.DATABASE_URL!,
      UPSTREAM_URL: sandbox.url,
      UPSTREAM_TOKEN: sandbox.token,
      INCREMENTAL_CRON: '* * * * * *',
      FULL_CRON: '*/4 * * * * *',
      LOG_LEVEL: 'warn',
    };
    const a = replica('replica-a', env);
    const b = replica('replica-b', env);
    replicas.push(a, b);
    await Promise.all([a.ready, b.ready]);
    // Ordered by what the replicas report, not by fixed sleeps a loaded machine can outlast: both elect fires,
    // then one dies and the other is seen carrying on alone.
    const claimed = (lines: FireLine[], job: string, after = 0) =>
      lines.filter(
        (l) => l.type === 'claimed' && l.job === job && l.fireTime !== null && Date.parse(l.fireTime) > after,
      ).length;
    await until('both replicas electing fires', () => {
      const both = [...a.lines, ...b.lines];
      return (
        claimed(both, 'incremental') >= 5 &&
        claimed(both, 'full') >= 1 &&
        both.some((l) => l.type === 'not-elected')
      );
    });
    a.proc.kill('SIGKILL');
    await a.exit;
    const killedAt = Date.now();
    await until(
      'the survivor firing alone',
      () =>
        claimed(b.lines, 'incremental', killedAt + 1000) >= 3 &&
        claimed(b.lines, 'full', killedAt + 1000) >= 1,
    );
    const stoppedAt = Date.now();
    b.proc.kill('SIGTERM');
    await b.exit;

    const all = [...a.lines, ...b.lines];
    const claims = all.filter((l) => l.type === 'claimed');
    // Exactly once: no (job, fire time) was claimed by two replicas, or twice by one.
    const keys = claims.map((c) => `${c.job}@${c.fireTime}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(claims.filter((c) => c.job === 'incremental').length).toBeGreaterThanOrEqual(8);
    expect(claims.filter((c) => c.job === 'full').length).toBeGreaterThanOrEqual(2);
    // While both lived, both asked for the same fires: the loser of each was told so.
    const lost = all.filter((l) => l.type === 'not-elected');
    expect(lost.length).toBeGreaterThan(0);
    for (const l of lost) expect(keys).toContain(`${l.job}@${l.fireTime}`);

    // Every finished run is recorded once in the store; only a run cut short by the kill may lack a finish.
    // (A full fire whose pull another one ran records no run of its own: it says `done by full pull #N`.)
    const finishedPulls = all.filter(
      (l) =>
        l.type === 'finished' && l.outcome?.status !== 'skipped' && !l.outcome?.error?.startsWith('done by'),
    );
    const runs = await ts.store.listRuns('hillcrest', { limit: 500 });
    const recorded = runs.length - 1; // the initial full pull
    expect(recorded).toBeGreaterThanOrEqual(finishedPulls.length);
    expect(recorded).toBeLessThanOrEqual(finishedPulls.length + 1);
    expect(runs.filter((r) => r.status === 'failed')).toEqual([]);

    // The survivor kept firing after the other died: incremental fires each second, and full ones.
    const afterKill = b.lines.filter(
      (l) => l.type === 'claimed' && l.fireTime !== null && Date.parse(l.fireTime) > killedAt + 1000,
    );
    // (A loaded machine makes a pull outlast a one-second schedule: noOverlap then lets a fire pass.)
    const story = JSON.stringify(b.lines.filter((l) => Date.parse(l.at) > killedAt));
    expect(afterKill.filter((l) => l.job === 'incremental').length, story).toBeGreaterThanOrEqual(2);
    expect(afterKill.filter((l) => l.job === 'full').length, story).toBeGreaterThanOrEqual(1);
    // The dead replica took part in the elections while it lived. Which replica wins a fire is first come, first
    // served: a replica whose timer fires a millisecond earlier can win every one, now that a pull no longer holds
    // the winner's event loop (it used to lose the next fires while busy), so winning one is not required.
    expect(a.lines.some((l) => l.type === 'claimed' || l.type === 'not-elected')).toBe(true);

    // Job status is in the store for `rostercal status` and the admin pages: each job's is the survivor's last
    // finished run. That run succeeded, unless the SIGTERM that stopped the survivor cut it short (a fire each
    // second makes that likely): then it reads as interrupted, which is what `status` should say.
    const jobs = await ts.store.listJobStatus('hillcrest');
    expect(jobs.map((j) => j.job).sort()).toEqual(['full', 'incremental']);
    for (const j of jobs) {
      // A fire let pass is recorded as skipped beside the job's last run, which it leaves as it was.
      // The job's record is written by whichever replica finished it last: the survivor, unless each of its own
      // fires of this job was let pass or done by another's pull (a full fire met by a pull turned full).
      const last = [...a.lines, ...b.lines]
        .filter((l) => l.type === 'finished' && l.job === j.job && l.outcome?.status !== 'skipped')
        .sort((x, y) => Date.parse(x.at) - Date.parse(y.at))
        .at(-1);
      expect(last, j.job).toBeDefined();
      expect(j.lastStatus, j.job).toBe(last!.outcome!.status);
      if (j.lastStatus !== 'succeeded') {
        expect(j.lastStatus, j.job).toBe('interrupted');
        expect(Date.parse(last!.at), j.job).toBeGreaterThanOrEqual(stoppedAt);
      }
      expect(j.lastFinishedAt).not.toBeNull();
      expect(j.nextRunAt).not.toBeNull();
    }
  }, 200_000);
});
