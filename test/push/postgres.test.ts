// The push bookkeeping on PostgreSQL (a database of its own, dropped afterwards): first push, unchanged rerun,
// an edit, and a second replica's view of the same mapping.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PushTargetConfig, parseTargets } from '../../src/config/push-targets.ts';
import { pushTarget } from '../../src/push/run.ts';
import { openStore } from '../../src/store/index.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph.ts';
import { trustCertificate } from '../fakes/tls.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { type Bench, startBench } from './harness.ts';

describe('push with the PostgreSQL store', () => {
  let db: TestDatabase;
  let bench: Bench;
  let fake: FakeGraph;
  let target: PushTargetConfig;

  beforeAll(async () => {
    db = await createTestDatabase();
    bench = await startBench({ databaseUrl: db.url, seed: 3 });
    fake = await startFakeGraph({ knobs: { batchItemLatencyMs: 1 } });
    trustCertificate(fake.cert);
    target = parseTargets(
      [
        {
          id: 'staff',
          provider: 'outlook',
          scope: 'staff',
          outlook: { baseUrl: fake.url, accessToken: fake.token },
        },
      ],
      'targets',
    )[0]!;
  });
  afterAll(async () => {
    await fake?.close();
    await bench?.close();
    await db?.drop();
  });

  it('pushes once, then writes nothing; another replica sees the same mappings and writes nothing either', async () => {
    const first = await pushTarget({ store: bench.store, school: bench.school, now: bench.now, target });
    expect(first.status).toBe('succeeded');
    expect(first.totals.created).toBeGreaterThan(0);
    expect(fake.stats.writes).toBe(first.totals.created);
    const mappings = await bench.store.push.listPushMappings('hill', 'staff');
    expect(mappings).toHaveLength(first.totals.created);
    expect(mappings.every((m) => m.contentHash.length === 32 && m.remoteEventId)).toBe(true);

    fake.resetStats();
    const replica = await openStore({ databaseUrl: db.url });
    try {
      const again = await pushTarget({ store: replica, school: bench.school, now: bench.now, target });
      expect(again.totals).toMatchObject({ created: 0, updated: 0, deleted: 0 });
      expect(fake.stats.writes).toBe(0);
      const runs = await replica.runs.listRuns('hill', { kind: 'push' });
      expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
      expect(runs[1]?.counts).toBeTypeOf('object');
    } finally {
      await replica.close();
    }
  });

  it('an upstream edit updates exactly the events showing it', async () => {
    const mappings = await bench.store.push.listPushMappings('hill', 'staff');
    const sessionId = mappings[0]!.sessionId;
    const shown = mappings.filter((m) => m.sessionId === sessionId).length;
    const email = (await bench.store.records.list('hill', 'staff')).find((s) => s.email)!.email!;
    await bench.client.updateSessions({
      email,
      sessions: [{ id: sessionId, notes: 'Kit check at 3 (pg test)' }],
    });
    await bench.pull();
    fake.resetStats();
    const s = await pushTarget({ store: bench.store, school: bench.school, now: bench.now, target });
    expect(s.totals).toMatchObject({ created: 0, updated: shown, deleted: 0 });
    expect(fake.stats.writes).toBe(shown);
  });
});
