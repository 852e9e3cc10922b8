// Runs from start to finish, every school's last pull, push and pull leases and full-pull requests, on SQLite and
// PostgreSQL (moved here from store/contract.ts, where they ran for both dialects too; job status
// stays there beside the cursors).
import { expect, it } from 'vitest';
import { describeOnEachStore, newSchool, T0, T1, T2 } from './each-store.ts';
import { runEnd } from './fixtures.ts';

describeOnEachStore('SqlRuns (store.runs)', (store) => {
  type Ended = Parameters<typeof runEnd>[0];
  /** A full pull of school `s` at T0 that ended `full`, then an incremental one at T1 that ended `incremental`. */
  async function fullThenIncremental(s: string, full: Ended, incremental: Ended): Promise<number> {
    const first = await store().runs.startRun({ schoolId: s, kind: 'full', at: T0 });
    await store().runs.finishRun(first, runEnd(full, T1));
    const then = await store().runs.startRun({ schoolId: s, kind: 'incremental', at: T1 });
    await store().runs.finishRun(then, runEnd(incremental, T1));
    return then;
  }

  it('records runs from start to finish', async () => {
    const s = newSchool();
    const a = await store().runs.startRun({ schoolId: s, kind: 'full', at: T0 });
    const b = await store().runs.startRun({ schoolId: s, kind: 'incremental', at: T1 });
    const p = await store().runs.startRun({ schoolId: s, kind: 'push', target: 'google', at: T1 });
    expect(b).toBeGreaterThan(a);
    const running = await store().runs.listRuns(s, { kind: 'full' });
    expect(running).toEqual([
      {
        id: a,
        schoolId: s,
        kind: 'full',
        target: null,
        status: 'running',
        startedAt: T0,
        finishedAt: null,
        counts: {},
        upstreamRequests: 0,
        retries: 0,
        throttled: 0,
        errors: [],
        warning: null,
        owner: null,
        upstreamSkewMs: null,
      },
    ]);
    const partial = { staff: { added: 120, changed: 0, deleted: 0, unchanged: 0, skipped: 0 } };
    await store().runs.recordRunProgress(a, {
      counts: partial,
      upstreamRequests: 4,
      retries: 1,
      throttled: 0,
    });
    expect((await store().runs.listRuns(s, { kind: 'full' }))[0]).toMatchObject({
      status: 'running',
      counts: partial,
      upstreamRequests: 4,
      retries: 1,
    });
    const counts = { sessions: { added: 5, changed: 1, deleted: 0, unchanged: 2, skipped: 1 } };
    await store().runs.finishRun(a, {
      status: 'suspicious',
      finishedAt: T1,
      counts,
      upstreamRequests: 12,
      retries: 2,
      throttled: 3,
      errors: ['session 17: malformed start', 'Trường: ✓'],
      warning: 'sessions listing shrank by 80 %: nothing deleted',
      // An upstream 40 days behind (a sandbox set in the past): past 32 bits of milliseconds.
      upstreamSkewMs: -3_456_000_123,
    });
    const [done] = await store().runs.listRuns(s, { kind: 'full' });
    expect(done).toMatchObject({
      status: 'suspicious',
      finishedAt: T1,
      counts,
      upstreamRequests: 12,
      retries: 2,
      throttled: 3,
      errors: ['session 17: malformed start', 'Trường: ✓'],
      warning: 'sessions listing shrank by 80 %: nothing deleted',
      upstreamSkewMs: -3_456_000_123,
    });
    // A finished run is what it finished as: a late progress line does not change it.
    await store().runs.recordRunProgress(a, {
      counts: partial,
      upstreamRequests: 99,
      retries: 0,
      throttled: 0,
    });
    expect((await store().runs.listRuns(s, { kind: 'full' }))[0]).toMatchObject({
      counts,
      upstreamRequests: 12,
    });
    expect((await store().runs.listRuns(s)).map((r) => r.id)).toEqual([p, b, a]);
    expect((await store().runs.listRuns(s, { limit: 1 }))[0]).toMatchObject({
      id: p,
      target: 'google',
      upstreamSkewMs: null,
    });
    expect(await store().runs.listRuns(newSchool())).toEqual([]);
    await expect(store().runs.finishRun(999_999_999, runEnd('failed', T1))).rejects.toThrow(/no sync run/);
  });

  it("reads every school's last pull and whether it completed a full one, in one call", async () => {
    const [a, b, c, never] = [newSchool(), newSchool(), newSchool(), newSchool()];
    for (const id of [a, b, c]) await store().records.upsertSchool({ id, name: id, timeZone: 'UTC' });
    // a: a full pull done, then an incremental one that failed, then a push (not a pull).
    const failed = await fullThenIncremental(a, 'succeeded', 'failed');
    await store().runs.startRun({ schoolId: a, kind: 'push', target: 'google', at: T1 });
    // b: only a failed full pull, then an interrupted incremental one; c: nothing yet.
    const cut = await fullThenIncremental(b, 'failed', 'interrupted');
    const pulls = await store().runs.lastPulls([a, b, c, never]);
    expect(pulls.get(a)).toMatchObject({ completedFull: true, last: { id: failed, status: 'failed' } });
    expect(pulls.get(b)).toMatchObject({
      completedFull: false,
      last: { id: cut, status: 'interrupted' },
    });
    expect(pulls.get(c)).toEqual({ completedFull: false, last: null });
    expect(pulls.has(never)).toBe(false);
    expect((await store().runs.lastPulls([])).size).toBe(0);
  });

  it('reads what a pull asks first in one call: its last 20 runs, the full-pull request, a completed full pull among the last 50', async () => {
    const s = newSchool();
    expect(await store().runs.pullOpening(s)).toEqual({
      recent: [],
      fullRequest: null,
      completedFull: false,
    });
    const done = await fullThenIncremental(s, 'succeeded', 'failed');
    await store().runs.requestFullPull(s, T2, 'replica-b');
    const other = await store().runs.pullOpening(newSchool());
    expect(other).toEqual({ recent: [], fullRequest: null, completedFull: false });
    let opening = await store().runs.pullOpening(s);
    expect(opening.fullRequest).toEqual({ at: T2, by: 'replica-b' });
    expect(opening.completedFull).toBe(true);
    expect(opening.recent.map((r) => [r.kind, r.status])).toEqual([
      ['incremental', 'failed'],
      ['full', 'succeeded'],
    ]);
    expect(opening.recent[0]!.id).toBe(done);
    expect(opening.recent).toEqual(await store().runs.listRuns(s, { limit: 20 }));
    // Fifty failed full pulls since: the completed one is too far back, and only the newest 20 runs are read.
    for (let i = 0; i < 50; i++)
      await store().runs.finishRun(
        await store().runs.startRun({ schoolId: s, kind: 'full', at: T1 }),
        runEnd('failed', T2),
      );
    opening = await store().runs.pullOpening(s);
    expect(opening.completedFull).toBe(false);
    expect(opening.recent).toEqual(await store().runs.listRuns(s, { limit: 20 }));
    expect(opening.recent).toHaveLength(20);
  });

  it("keeps a push target's lease apart from any school's pull lease, and gives it up with its owner", async () => {
    const s = newSchool();
    const target = `${s}/teams`;
    const owner = { id: `${s}-pusher:1:abc`, host: 'elsewhere', pid: 1, startedAt: T0 };
    await store().runs.beat(owner, new Date().toISOString());
    const held = await store().runs.acquirePushLease(target, owner.id, new Date().toISOString());
    expect(held.acquired).toBe(true);
    expect(await store().runs.acquirePushLease(target, 'here:2:def', new Date().toISOString())).toMatchObject(
      {
        acquired: false,
        holder: { owner: owner.id },
      },
    );
    // A pull lease of the same name is another thing.
    const pull = await store().runs.acquirePullLease(target, 'here:2:def', new Date().toISOString());
    if (!pull.acquired) throw new Error('a push lease held a pull lease of the same name');
    await store().runs.releasePullLease(target, pull.token);
    // Its owner stopped cleanly: the lease is free at once.
    await store().runs.forgetOwner(owner.id);
    const taken = await store().runs.acquirePushLease(target, 'here:2:def', new Date().toISOString());
    if (!taken.acquired) throw new Error('the lease of an owner gone stayed held');
    await store().runs.releasePushLease(target, taken.token);
  });

  it('keeps a full-pull request until a full pull that started after it has run', async () => {
    const s = newSchool();
    expect(await store().runs.fullPullRequest(s)).toBeNull();
    await store().runs.requestFullPull(s, T1, 'replica-b');
    // An earlier request does not move it back; a later one moves it forward.
    await store().runs.requestFullPull(s, T0, 'replica-c');
    expect(await store().runs.fullPullRequest(s)).toEqual({ at: T1, by: 'replica-b' });
    await store().runs.satisfyFullPull(s, T0);
    expect(await store().runs.fullPullRequest(s)).toEqual({ at: T1, by: 'replica-b' });
    await store().runs.requestFullPull(s, T2, 'replica-c');
    await store().runs.satisfyFullPull(s, T1);
    expect(await store().runs.fullPullRequest(s)).toEqual({ at: T2, by: 'replica-c' });
    await store().runs.satisfyFullPull(s, T2);
    expect(await store().runs.fullPullRequest(s)).toBeNull();
  });
});
