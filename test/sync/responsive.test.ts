// A pull shares its process with the web server in `rostercal serve`: while it reads and writes a school, the
// event loop must keep turning, or every feed request waits for the pull. Before, a full pull of a school into
// SQLite held the loop for ~600 ms at a stretch (a page's records prepared in one go, bulk statements awaited as
// microtasks, and the WAL checkpoint inside the sessions' commit); a district's, ~0.9 s.
// The sandbox runs as its own process here, as an upstream does, so its page building is not counted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pullSchool } from '../../src/sync/pull.ts';
import { type Child, rostercal } from '../support/cli.ts';
import { TEST_NOW } from '../support/clock.ts';
import { freePort } from '../support/ports.ts';
import { openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

/**
 * The longest stretch the pull may keep this thread busy between two turns of the event loop, in CPU time of this
 * thread: what the product does, not how long the machine's other processes kept it waiting (a wall-clock gap on a
 * loaded 2-core machine says as much about them). The stretches seen before were ~600 ms.
 */
const MAX_STALL_MS = 300;

describe('the event loop during a pull', () => {
  let sandbox: Child;
  let upstream: { url: string; token: string };
  let ts: TestStore;

  beforeAll(async () => {
    const port = await freePort();
    sandbox = rostercal(
      ['sandbox', '--port', String(port), '--scale', 'school', '--seed', '7', '--now', TEST_NOW],
      {},
    );
    await sandbox.waitFor(/listening on/, 60_000);
    upstream = { url: `http://127.0.0.1:${port}`, token: 'sandbox-token' };
    // As `serve` opens it: its checkpoints on a worker thread.
    ts = await openTestStore('sqlite', { checkpointsOffThread: true });
  }, 90_000);
  afterAll(async () => {
    sandbox?.proc.kill('SIGTERM');
    await sandbox?.exit;
    await ts?.cleanup();
  });

  it(`never stalls for more than ${MAX_STALL_MS} ms while a school is pulled into SQLite`, async () => {
    const cpuMs = () => {
      const u = process.threadCpuUsage();
      return (u.user + u.system) / 1000;
    };
    let last = performance.now();
    let lastCpu = cpuMs();
    let worst = 0;
    let worstWall = 0;
    let turns = 0;
    const probe = setInterval(() => {
      const now = performance.now();
      const cpu = cpuMs();
      worst = Math.max(worst, cpu - lastCpu);
      worstWall = Math.max(worstWall, now - last);
      last = now;
      lastCpu = cpu;
      turns++;
    }, 5);
    try {
      const summary = await pullSchool({
        store: ts.store,
        client: testClient(upstream),
        school: testSchool(upstream),
        kind: 'full',
        now: () => new Date(TEST_NOW),
      });
      expect(summary.status).toBe('succeeded');
      expect(summary.counts.sessions?.added).toBeGreaterThan(3_000);
    } finally {
      clearInterval(probe);
    }
    console.log(
      `longest stretch between turns of the event loop during the pull: ${worst.toFixed(0)} ms of this thread's CPU (${worstWall.toFixed(0)} ms of wall time)`,
    );
    // The probe ran throughout (a probe that never fired would measure nothing).
    expect(turns).toBeGreaterThan(10);
    expect(worst).toBeLessThan(MAX_STALL_MS);
  }, 120_000);
});
