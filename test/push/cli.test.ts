// `rostercal sync --dry-run`, as a person runs it: the pull, then the push plan printed, nothing written remotely.
// Then `rostercal sync` for real, and a second run that has nothing to do.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph.ts';
import { runRostercal } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { outlookSyncEnv } from './outlook-sync-env.ts';

describe('rostercal sync with push targets', () => {
  let sandbox: Sandbox;
  let fake: FakeGraph;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    [sandbox, fake] = await Promise.all([startWeekSandbox({ seed: 9, scale: 'small' }), startFakeGraph()]);
    dir = mkdtempSync(join(tmpdir(), 'rostercal-push-cli-'));
    env = outlookSyncEnv(dir, sandbox, fake);
  });
  afterAll(async () => {
    await fake?.close();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('--dry-run prints the plan and writes nothing remotely', async () => {
    const { stdout } = await runRostercal(['sync', '--dry-run'], env);
    expect(stdout).toMatch(/plan hill\/staff \(outlook\): \d+ to create, 0 to update, 0 to delete/);
    expect(stdout).toMatch(/\+ session \d+/);
    expect(fake.stats.writes).toBe(0);
    expect(fake.mailboxes().every((m) => m.calendars.size === 1)).toBe(true);
    expect(stdout).not.toContain(fake.token);
  });

  it('then pushes for real, and a second sync has nothing to push', async () => {
    const first = await runRostercal(['sync'], env);
    const created = Number(/push hill\/staff \(outlook\): (\d+) created/.exec(first.stdout)?.[1]);
    expect(created).toBeGreaterThan(0);
    expect(fake.stats.writes).toBe(created);
    const second = await runRostercal(['sync'], env);
    expect(second.stdout).toMatch(/push hill\/staff \(outlook\): 0 created, 0 updated, 0 deleted/);
    expect(fake.stats.writes).toBe(created);
  });
});
