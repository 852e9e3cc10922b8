// Pushes of one target across processes sharing a PostgreSQL store: the target's turn is a job of its own pg-boss
// queue (store/fire-queue.ts, policy `singleton`), in place of the lease SQLite keeps (test/push/serialised.test.ts
// holds that). Two store handles stand for two replicas (each its own pg-boss and pools); a child process that
// takes the turn and is killed stands for a replica that dies mid-push.
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SchoolConfig } from '../../src/config.ts';
import { pushSchool } from '../../src/push/triggers.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import { type FakeGoogle, startFakeGoogle } from '../fakes/google-calendar.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { type Bench, pushRuns, pushThatWaits, startBench, withTeamsOnGoogle } from './harness.ts';

const TARGET = 'hill/teams';

describe('pushes of one target across replicas on PostgreSQL', () => {
  let db: TestDatabase;
  let bench: Bench;
  let fake: FakeGoogle;
  let school: SchoolConfig;
  let other: Store;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    [bench, fake] = await Promise.all([startBench({ databaseUrl: db.url, seed: 7 }), startFakeGoogle()]);
    school = withTeamsOnGoogle(bench, fake);
    other = await openStore({ databaseUrl: db.url });
  });
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await other?.close();
    await fake?.close();
    await bench?.close();
    await db?.drop();
  });

  it('waits while another replica holds the target, and pushes once it lets go', async () => {
    const held = await other.pushTurns!.takeTurn(TARGET, () => {});
    const before = await pushRuns(bench);
    const requestsBefore = fake.stats.requests;
    const p = pushThatWaits(bench, school, TARGET);
    await p.waiting;
    expect(p.done()).toBe(false);
    expect(await pushRuns(bench)).toBe(before);
    expect(fake.stats.requests).toBe(requestsBefore);
    await held.release();
    const [result] = await p.pushing;
    expect(result!.status).toBe('succeeded');
    expect(await pushRuns(bench)).toBe(before + 1);
  }, 60_000);

  it('two replicas asking for the target at once take turns: never two holders at a time', async () => {
    // The turns themselves: pushSchool's asks from one process meet in its own per-target queue first (and join).
    let holders = 0;
    let most = 0;
    const order: number[] = [];
    const asks = [bench.store, other, bench.store, other, bench.store, other].map(async (store, i) => {
      const turn = await store.pushTurns!.takeTurn(TARGET, () => {});
      holders++;
      most = Math.max(most, holders);
      order.push(i);
      await new Promise((r) => setTimeout(r, 150));
      holders--;
      await turn.release();
    });
    await Promise.all(asks);
    expect(most).toBe(1);
    expect(order.sort()).toEqual([0, 1, 2, 3, 4, 5]);
  }, 120_000);

  it('a replica killed holding the target gives it up when its beats stop, and the push runs', async () => {
    const child = spawn(process.execPath, ['test/push/fixtures/turn-holder.ts', db.url, TARGET], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d) => String(d).includes('holding') && resolve());
      child.once('exit', (code) => reject(new Error(`the holder exited (${code})`)));
    });
    const p = pushThatWaits(bench, school, TARGET);
    await p.waiting;
    child.kill('SIGKILL');
    const killedAt = Date.now();
    const [result] = await p.pushing;
    const tookMs = Date.now() - killedAt;
    expect(result!.status).toBe('succeeded');
    // pg-boss fails the dead holder's job once its heartbeat (45 s, as a pull lease outlives its owner) has lapsed
    // and its monitor (every 2 s) has seen it; our lease on one host took it at once (the process table).
    expect(tookMs).toBeGreaterThan(40_000);
    expect(tookMs).toBeLessThan(60_000);
    console.log(`push turn taken over ${(tookMs / 1000).toFixed(1)} s after its holder was killed`);
  }, 120_000);

  it("a push whose turn lapsed while it stalled writes none of the target's calendars or mappings", async () => {
    // pg-boss fails a stalled holder's turn once its beats lapse (45 s, the case above) and gives the turn to the
    // next push, which raises the target's fence as it takes it (seizePushLease): played here by that second step
    // alone, from the other replica, while the first push is held at Google's door.
    const stalled = { ...school, targets: school.targets.map((t) => ({ ...t, id: 'stalled' })) };
    const state = async () => ({
      calendars: await bench.store.push.listPushCalendars('hill', 'stalled'),
      mappings: await bench.store.push.listPushMappings('hill', 'stalled'),
    });
    const arrived = Promise.withResolvers<void>();
    const woken = Promise.withResolvers<void>();
    fake.knobs.holds = [{ match: /./, reached: () => arrived.resolve(), release: woken.promise }];
    const a = pushSchool({ store: bench.store, school: stalled, now: bench.now });
    await arrived.promise;
    fake.knobs.holds = [];
    const taken = await other.runs.seizePushLease(
      'hill/stalled',
      'elsewhere:1:abcdef',
      new Date().toISOString(),
    );
    const before = await state();
    woken.resolve();
    const [ended] = await a;
    expect(before.calendars).toEqual([]);
    expect(await state()).toEqual(before);
    expect(ended!.status).toBe('interrupted');
    expect(ended!.errors.join(' ')).toContain(
      `lost the push lease of hill/stalled (fence ${taken.fence - 1})`,
    );
    await other.runs.releasePushLease('hill/stalled', taken.token);
  }, 60_000);
});
