// Readers never wait on a pull: while `rostercal sync --full` waits on an upstream that has stopped answering,
// `rostercal status` and `rostercal feeds list` (other processes on the same SQLite file) answer. The pull downloads a
// resource whole before it opens the short transaction that writes it, so no lock is held across network waits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { rostercal } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

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
    // 1.5 s per request: the full pull is still early in its downloads when the test holds the upstream (below).
    // The CLI pulls on the real clock: a school of this week's shape.
    sandbox = await startWeekSandbox({ seed: 11, scale: 'small', latencyMs: 1500 });
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
    const sync = rostercal(['sync', '--full'], env);
    // Early in the pull (earlier resources written, a dozen slow requests to come), the upstream stops answering:
    // the pull waits on the network for as long as the test says. A reader that waited on the pull (a lock held
    // across a download) would never finish; one that does not finishes, however long the machine takes.
    await sync.waitFor(/activities: page 1 of \d+/);
    const held = sandbox.hold();
    const waiting = await Promise.race([held.arrived(1).then(() => true), sync.exit.then(() => false)]);
    expect(waiting, `the pull ended before the upstream was held:\n${sync.output()}`).toBe(true);
    let status: Awaited<ReturnType<typeof timed>>;
    let list: Awaited<ReturnType<typeof timed>>;
    try {
      [status, list] = await Promise.all([timed(['status'], env), timed(['feeds', 'list'], env)]);
      expect(sync.proc.exitCode, 'the held pull is still running').toBeNull();
    } finally {
      held.release();
    }
    expect(await sync.exit, sync.output()).toBe(0);
    // For the reader of the log only: no bound on them (they include process start-up on a shared machine).
    console.log(
      `while the pull was held: status ${status.ms.toFixed(0)} ms, feeds list ${list.ms.toFixed(0)} ms`,
    );
    expect(status.code, status.output).toBe(0);
    expect(status.output).toMatch(/running/);
    expect(list.code, list.output).toBe(0);
    expect(list.output).toContain('/feeds/');
  });
});
