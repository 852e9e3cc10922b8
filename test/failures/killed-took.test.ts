// A pull killed mid-run (kill -9) has no end of its own: a later pull closes its record, at its own time. The
// listings said it "took" from its start to that close (an outside tester), a number nobody measured. From outside:
// `rostercal sync` killed, a later `sync`, then `rostercal status`: the killed run's "took" says it is unknown.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';

let sandbox: Sandbox;
let dir: string;
beforeAll(async () => {
  sandbox = await startWeekSandbox({ seed: 11, scale: 'small', latencyMs: 60 });
  dir = await mkdtemp(path.join(tmpdir(), 'rostercal-killed-took-'));
});
afterAll(async () => {
  await sandbox?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a killed pull', () => {
  it("reads 'took: unknown' in status, never the time until a later pull closed it", async () => {
    const env = schoolEnv(sandbox, { DATA_DIR: dir });
    const first = rostercal(['sync'], env);
    await first.waitFor(/students: page 1 of/);
    first.proc.kill('SIGKILL');
    await first.exit;
    // The gap a wrong "took" would add: the later pull closes the run at its own start.
    await new Promise((r) => setTimeout(r, 4_000));
    const second = rostercal(['sync'], env);
    expect(await second.exit, second.output()).toBe(0);
    const status = rostercal(['status'], env);
    expect(await status.exit, status.output()).toBe(0);
    const row = status
      .stdout()
      .split('\n')
      .find((l) => /^\s*#1\s/.test(l));
    expect(row, status.stdout()).toMatch(/#1\s+full\s+interrupted\s+.+\s+unknown\s+\d+/);
  }, 120_000);
});
