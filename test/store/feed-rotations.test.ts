// The store's copy of the feed rotation record (src/store/feed-rotations.ts, reached as store.links), on SQLite and
// PostgreSQL: which secret it vouches for, the rotations in the order made, and the mark feed servers poll. A
// rotation is what keeps a rotated feed URL dead on every replica, so the record keeps it for as long as the secret
// is the same, and forgets it only for another secret (whose URLs it never named).
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { FeedRotationRow, Store } from '../../src/store/types.ts';
import { describeOnEachStore, newSchool, T0, T1, T2 } from './each-store.ts';

const rotation = (school: string, id: number, version: number, at = T1): FeedRotationRow => ({
  school,
  scope: 'team',
  id,
  version,
  at,
});

/** A record for a secret no other test uses: every test starts from none of the rotations before it. */
async function freshRecord(store: Store, at = T0): Promise<string> {
  const secret = `fp-${randomUUID()}`;
  await store.links.startFeedRotationRecord(secret, at);
  return secret;
}

describeOnEachStore('feed rotation record (store.links)', (store) => {
  it('lists rotations in the order made, not by school or id, ids as numbers', async () => {
    await freshRecord(store());
    const [a, b] = [newSchool(), newSchool()];
    const made = [
      rotation(b, 20, 2),
      rotation(a, 10, 2),
      { ...rotation(a, 7, 3), scope: 'student' as const, at: T2 },
      rotation(b, 20, 3, T2),
    ];
    await store().links.addFeedRotations(made.slice(0, 2));
    await store().links.addFeedRotations(made.slice(2));
    expect(await store().links.listFeedRotations()).toEqual(made);
  });

  it('keeps the rotations when the record is started again for the same secret: a rotated URL never comes back', async () => {
    const secret = await freshRecord(store(), T0);
    const school = newSchool();
    await store().links.addFeedRotations([rotation(school, 5, 2)]);
    const mark = await store().links.feedRotationsMark();

    await store().links.startFeedRotationRecord(secret, T2);
    expect(await store().links.getFeedRotationRecord()).toEqual({ secret, createdAt: T0 });
    expect(await store().links.listFeedRotations()).toEqual([rotation(school, 5, 2)]);
    expect(await store().links.feedRotationsMark()).toBe(mark);
  });

  it('forgets the rotations of another secret, and stores the instant canonically', async () => {
    await freshRecord(store());
    await store().links.addFeedRotations([rotation(newSchool(), 1, 2)]);
    const secret = `fp-${randomUUID()}`;
    await store().links.startFeedRotationRecord(secret, '2026-11-03T09:00:00+01:00');
    expect(await store().links.getFeedRotationRecord()).toEqual({ secret, createdAt: T2 });
    expect(await store().links.listFeedRotations()).toEqual([]);
    expect(await store().links.feedRotationsMark()).toBe(0);
  });

  it('moves the mark with every rotation recorded, never back to a value it had (seq never reused)', async () => {
    await freshRecord(store());
    const school = newSchool();
    const seen = [await store().links.feedRotationsMark()];
    for (const version of [2, 3]) {
      await store().links.addFeedRotations([rotation(school, 9, version)]);
      seen.push(await store().links.feedRotationsMark());
    }
    // Another secret empties the table; the next rotation still gets a mark above every one before.
    await freshRecord(store());
    await store().links.addFeedRotations([rotation(school, 9, 2)]);
    seen.push(await store().links.feedRotationsMark());
    expect(seen[1]).toBeGreaterThan(seen[0]!);
    expect(seen[2]).toBeGreaterThan(seen[1]!);
    expect(seen[3]).toBeGreaterThan(seen[2]!);
  });

  it('refuses a rotation whose instant is not one, writing none of the batch inside a transaction', async () => {
    await freshRecord(store());
    const school = newSchool();
    await expect(
      store().transaction(() =>
        store().links.addFeedRotations([rotation(school, 1, 2), rotation(school, 2, 2, 'yesterday')]),
      ),
    ).rejects.toThrow(/invalid instant for addFeedRotations/);
    expect(await store().links.listFeedRotations()).toEqual([]);
  });
});
