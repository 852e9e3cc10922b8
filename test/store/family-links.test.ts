// Family links in the store (store/family-links.ts), on a real SQLite file: a link is saved and read whole, members
// in order with only their three fields, a second save of the same hash replaces members and revocation but keeps
// when it was made, and an unknown hash reads as none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FamilyLink } from '../../src/store/types.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';

let ts: TestStore;
beforeAll(async () => {
  ts = await openTestStore('sqlite');
  await ts.store.records.upsertSchool({ id: 'hill', name: 'Hill', timeZone: 'UTC' });
});
afterAll(() => ts?.cleanup());

const link: FamilyLink = {
  schoolId: 'hill',
  tokenHash: 'a'.repeat(64),
  members: [
    { scope: 'student', scopeId: 12, feedTokenHash: 'b'.repeat(64) },
    { scope: 'team', scopeId: 3, feedTokenHash: 'c'.repeat(64) },
  ],
  createdAt: '2026-03-02T10:00:00.000Z',
  revokedAt: null,
};

describe('family links in the store', () => {
  it('are read back whole by their hash, and an unknown hash is none', async () => {
    const extra = { ...link.members[0]!, note: 'not stored' } as FamilyLink['members'][number];
    await ts.store.links.saveFamilyLink({ ...link, members: [extra, link.members[1]!] });
    expect(await ts.store.links.findFamilyLinkByHash(link.tokenHash)).toEqual(link);
    expect(await ts.store.links.findFamilyLinkByHash('d'.repeat(64))).toBeNull();
  });

  it('take new members and a revocation on a second save, keeping when the link was made', async () => {
    await ts.store.links.saveFamilyLink({
      ...link,
      members: [link.members[1]!],
      createdAt: '2026-03-05T00:00:00.000Z',
      revokedAt: '2026-03-04T08:30:00.000Z',
    });
    expect(await ts.store.links.findFamilyLinkByHash(link.tokenHash)).toEqual({
      ...link,
      members: [link.members[1]],
      revokedAt: '2026-03-04T08:30:00.000Z',
    });
    // An instant the store cannot keep as one is refused, not stored as text.
    await expect(ts.store.links.saveFamilyLink({ ...link, revokedAt: 'Tuesday' })).rejects.toThrow(
      /revokedAt/,
    );
  });
});
