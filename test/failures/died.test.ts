// Runs that died: a run belongs to a process that beats in the store; once that process is gone the run reads
// as interrupted everywhere (status, the admin page, the banner), and `serve` restarted after an interrupted
// start-up pull pulls again.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import { OWNER_SILENT_MS } from '../../src/store/liveness.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { freePort } from '../support/ports.ts';
import { DIALECTS, openTestStore, type TestStore } from '../sync/helpers.ts';

describe('a pull killed with SIGKILL (rostercal sync, rostercal status)', () => {
  let sandbox: Sandbox;
  let ts: TestStore;
  beforeAll(async () => {
    sandbox = await startWeekSandbox({ seed: 11, scale: 'small', latencyMs: 60 });
    ts = await openTestStore('sqlite');
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('reads as interrupted at once, and the next pull is not refused by its lease', async () => {
    const env = schoolEnv(sandbox, ts.env);
    const child = rostercal(['sync', '--full'], env);
    await child.waitFor(/students: page 1 of \d+/);
    child.proc.kill('SIGKILL');
    await child.exit;

    const status = rostercal(['status'], env);
    expect(await status.exit).toBe(0);
    expect(status.output()).toMatch(/#1\s+full\s+interrupted/);

    const again = rostercal(['sync'], env);
    expect(await again.exit, again.output()).toBe(0);
    const runs = await ts.store.runs.listRuns('hillcrest');
    expect(runs.map((r) => [r.id, r.status])).toEqual([
      [2, 'succeeded'],
      [1, 'interrupted'],
    ]);
    expect(runs[1]!.errors.join(' ')).toMatch(/interrupted: the process running it \(.+\) stopped/);
  });
});

describe.each(DIALECTS)('run owners on another machine (%s)', (dialect) => {
  let ts: TestStore;
  beforeAll(async () => {
    ts = await openTestStore(dialect);
    await ts.store.records.upsertSchool({ id: 'hillcrest', name: 'Hillcrest', timeZone: 'Australia/Sydney' });
  });
  afterAll(async () => {
    await ts?.cleanup();
  });

  it('a run is running while its owner beats, interrupted once it has been silent for under a minute', async () => {
    expect(OWNER_SILENT_MS).toBeLessThan(60_000);
    const owner = {
      id: 'replica-b:41:abc123',
      host: 'replica-b',
      pid: 41,
      startedAt: new Date().toISOString(),
    };
    await ts.store.runs.beat(owner, new Date().toISOString());
    const id = await ts.store.runs.startRun({
      schoolId: 'hillcrest',
      kind: 'full',
      at: new Date().toISOString(),
      owner: owner.id,
    });
    const statusOf = async () => (await ts.store.runs.listRuns('hillcrest')).find((r) => r.id === id)!.status;
    expect(await statusOf()).toBe('running');
    // Its lease is respected while it beats…
    const lease = await ts.store.runs.acquirePullLease('hillcrest', owner.id, new Date().toISOString());
    expect(lease.acquired).toBe(true);
    const refused = await ts.store.runs.acquirePullLease(
      'hillcrest',
      'here:1:def456',
      new Date().toISOString(),
    );
    expect(refused).toMatchObject({ acquired: false, holder: { owner: owner.id } });

    // …and after OWNER_SILENT_MS without a beat, the run reads as interrupted and the lease can be taken.
    await ts.store.runs.beat(owner, new Date(Date.now() - OWNER_SILENT_MS - 1000).toISOString());
    expect(await statusOf()).toBe('interrupted');
    const taken = await ts.store.runs.acquirePullLease(
      'hillcrest',
      'here:1:def456',
      new Date().toISOString(),
    );
    expect(taken.acquired).toBe(true);
  });
});

describe('rostercal serve killed during its start-up pull', () => {
  let sandbox: Sandbox;
  let dir: string;
  beforeAll(async () => {
    sandbox = await startWeekSandbox({ seed: 11, scale: 'small', latencyMs: 60 });
    dir = await mkdtemp(path.join(tmpdir(), 'rostercal-died-'));
  });
  afterAll(async () => {
    await sandbox?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('pulls again when restarted, and the killed run reads as interrupted', async () => {
    const port = await freePort();
    const env = { ...schoolEnv(sandbox, { DATA_DIR: dir }), PORT: String(port), LOG_LEVEL: 'info' };
    const first = rostercal(['serve'], env);
    await first.waitFor(/"msg":"pull started"/);
    first.proc.kill('SIGKILL');
    await first.exit;

    const second = rostercal(['serve'], env);
    try {
      await second.waitFor(/"msg":"pull started"/, 30_000);
      await second.waitFor(/rostercal is serving/, 60_000);
      expect(second.output()).toMatch(/hillcrest: last pull succeeded \(full/);
      const store = await openStore({ dataDir: dir });
      try {
        const runs = await store.runs.listRuns('hillcrest');
        // Fires that came during the start-up pull queue one incremental pull behind it (background-sync.ts):
        // by now it may have begun. The killed run and the restart's full pull are the two first.
        expect(runs.filter((r) => r.id <= 2).map((r) => [r.id, r.kind, r.status])).toEqual([
          [2, 'full', 'succeeded'],
          [1, 'full', 'interrupted'],
        ]);
        expect(runs.filter((r) => r.id > 2).map((r) => r.kind)).not.toContain('full');
      } finally {
        await store.close();
      }
    } finally {
      second.proc.kill('SIGTERM');
      await second.exit;
    }
  });
});
