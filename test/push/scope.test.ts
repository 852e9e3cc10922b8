// The engine reads each calendar's sessions with one query per target (sessionsByMember); this holds it equal to
// the store's per-scope read (candidateQuery, a feed's request path), for every team, activity, staff member and student.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { candidateQuery } from '../../src/feeds/feed-scope.ts';
import { syncWindow } from '../../src/jobs/window.ts';
import { sessionsByMember } from '../../src/push/members.ts';
import type { FeedScope } from '../../src/store/types.ts';
import { type Bench, startBench } from './harness.ts';

describe('sessions per calendar', () => {
  let bench: Bench;
  beforeAll(async () => {
    bench = await startBench({ seed: 11 });
  });
  afterAll(() => bench.close());

  it.each<[FeedScope, 'teams' | 'activities' | 'staff' | 'students']>([
    ['team', 'teams'],
    ['activity', 'activities'],
    ['staff', 'staff'],
    ['student', 'students'],
  ])('%s scope matches store.listSessions', async (scope, kind) => {
    const w = syncWindow(bench.now(), { daysBack: 30, daysAhead: 365 });
    const ids = (await bench.store.records.list('hill', kind)).map((x) => x.id);
    const grouped = await sessionsByMember(bench.store, 'hill', scope, ids, w);
    let nonEmpty = 0;
    for (const id of ids) {
      const direct = await bench.store.records.listSessions('hill', candidateQuery(scope, id, w.from, w.to));
      expect(
        grouped.get(id)?.map((s) => s.id),
        `${scope} ${id}`,
      ).toEqual(direct.map((s) => s.id));
      if (direct.length) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThan(0);
  });
});
