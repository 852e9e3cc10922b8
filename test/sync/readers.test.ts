// Readers never wait on a pull: while `rostercal sync --full` downloads from a slow upstream, `rostercal status`
// and `rostercal feeds list` (other processes on the same SQLite file) answer promptly. The pull downloads a
// resource whole before it opens the short transaction that writes it, so no lock is held across network waits.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

function rostercal(args: string[], env: Record<string, string>) {
  const proc = spawn(process.execPath, ['bin/rostercal.js', ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const listeners: (() => void)[] = [];
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const l of listeners) l();
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);
  const exit = once(proc, 'exit').then(([code]) => code as number | null);
  return {
    proc,
    exit,
    output: () => out,
    waitFor: (pattern: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const check = () => pattern.test(out) && resolve();
        listeners.push(check);
        check();
        exit.then(() => reject(new Error(`exited without ${pattern}:\n${out}`)));
      }),
  };
}

async function timed(args: string[], env: Record<string, string>) {
  const t0 = performance.now();
  const child = rostercal(args, env);
  const code = await child.exit;
  return { code, ms: performance.now() - t0, output: child.output() };
}

describe('readers during a pull from a slow upstream', () => {
  let sandbox: Sandbox;
  let ts: TestStore;
  let env: Record<string, string>;
  beforeAll(async () => {
    // 1.5 s per request: the full pull spends its time waiting on the network, resource after resource.
    sandbox = await startSandbox({ seed: 11, scale: 'small', latencyMs: 1500 });
    ts = await openTestStore('sqlite');
    env = {
      UPSTREAM_URL: sandbox.url,
      UPSTREAM_TOKEN: sandbox.token,
      SCHOOL_TZ: 'Australia/Sydney',
      SCHOOL_ID: 'hillcrest',
      SCHOOL_NAME: 'Hillcrest College',
      FEED_SECRET: 'readers-test-feed-secret-0123456789abcdef',
      ...(ts.env as Record<string, string>),
    };
    // A first pull so the store has a school and feeds to list.
    const first = await pullSchool({
      store: ts.store,
      client: testClient(sandbox),
      school: testSchool(sandbox),
      kind: 'full',
    });
    expect(first.errors).toEqual([]);
    await ts.store.close();
    // A FEED_SECRET of the operator's own vouches for nothing until they say the database is current.
    expect(await rostercal(['feeds', 'accept-store'], env).exit).toBe(0);
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('`rostercal status` and `feeds list` answer while `sync --full` waits on the upstream', async () => {
    // The baseline: how long each takes with nothing else running (process start included; the machine is shared).
    const idleStatus = await timed(['status'], env);
    expect(idleStatus.code).toBe(0);
    const idleList = await timed(['feeds', 'list'], env);
    expect(idleList.code).toBe(0);

    const sync = rostercal(['sync', '--full'], env);
    const t0 = performance.now();
    // Early in the pull: a dozen slow requests (15 s and more) still to come.
    await sync.waitFor(/activities: page 1 of \d+/);
    const [status, list] = await Promise.all([timed(['status'], env), timed(['feeds', 'list'], env)]);
    const stillRunning = sync.proc.exitCode === null;
    expect(await sync.exit).toBe(0);
    const syncMs = performance.now() - t0;

    // The readers finished while the pull was still downloading, in about their idle time (twice that and more: both run at once on a shared machine).
    console.log(
      `idle: status ${idleStatus.ms.toFixed(0)} ms, feeds list ${idleList.ms.toFixed(0)} ms; during the pull: ${status.ms.toFixed(0)} ms, ${list.ms.toFixed(0)} ms; pull ${syncMs.toFixed(0)} ms`,
    );
    expect(stillRunning).toBe(true);
    expect(status.ms).toBeLessThan(2 * idleStatus.ms + 3000);
    expect(list.ms).toBeLessThan(2 * idleList.ms + 3000);
    expect(syncMs).toBeGreaterThan(Math.max(status.ms, list.ms));
    expect(status.code).toBe(0);
    expect(status.output).toMatch(/running/);
    expect(list.code).toBe(0);
    expect(list.output).toContain('/feeds/');
  });
});
