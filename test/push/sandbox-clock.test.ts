// A push after a pull decides which sessions it sends on the clock the pull ran on: SANDBOX_NOW against a sandbox
// whose school is built around that instant. The instant here is years before any run of the test, so a push window
// taken from the real date (60 days back, 365 ahead) holds none of the school's sessions: before the push took the
// configured clock, `rostercal sync --dry-run` planned nothing while its pull had stored the school.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph.ts';
import { runRostercal } from '../support/cli.ts';
import { outlookSyncEnv } from './outlook-sync-env.ts';

/** A term-time Friday years back: far from the push window of the real date of any run. */
const LONG_AGO = '2023-11-17T00:00:00.000Z';
const DAY = 86_400_000;

describe('rostercal sync pushes on the sandbox clock (SANDBOX_NOW)', () => {
  let sandbox: Sandbox;
  let fake: FakeGraph;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    [sandbox, fake] = await Promise.all([
      startSandbox({ seed: 9, scale: 'small', now: LONG_AGO }),
      startFakeGraph(),
    ]);
    dir = mkdtempSync(join(tmpdir(), 'rostercal-push-clock-'));
    env = outlookSyncEnv(dir, sandbox, fake, { SANDBOX_NOW: LONG_AGO });
  });
  afterAll(async () => {
    await fake?.close();
    await sandbox?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("plans the sessions in the window around the sandbox's now, the fortnight after it among them", async () => {
    const { code, stdout, stderr } = await runRostercal(['sync', '--dry-run'], env);
    expect(code, stderr).toBe(0);
    const planned = new Set([...stdout.matchAll(/\+ session (\d+)/g)].map((m) => Number(m[1])));
    expect(planned.size, stdout).toBeGreaterThan(0);
    const at = Date.parse(LONG_AGO);
    const byId = new Map(sandbox.school.sessions.map((s) => [s.id, s]));
    for (const id of planned) {
      const s = byId.get(id)!;
      expect(s.end > at - 60 * DAY && s.start < at + 365 * DAY, `session ${id}`).toBe(true);
    }
    expect([...planned].some((id) => byId.get(id)!.start < at + 14 * DAY && byId.get(id)!.end > at)).toBe(
      true,
    );
    expect(fake.stats.writes).toBe(0);
  });
});
