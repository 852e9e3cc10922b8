// Feed tokens (issue, rotation, revocation, the mark that says a school's changed) and family links, on SQLite
// and PostgreSQL (moved here from store/contract.ts, where they ran for both dialects too).
import { expect, it } from 'vitest';
import { describeOnEachStore, newSchool, T0, T1, T2 } from './each-store.ts';

describeOnEachStore('SqlFeedLinks (store.links)', (store) => {
  it('saves, finds, rotates and revokes feed tokens', async () => {
    const s = newSchool();
    const token = (hash: string, version: number, scopeId = 10) => ({
      schoolId: s,
      scope: 'team' as const,
      scopeId,
      tokenHash: `${s}-${hash}`,
      version,
      createdAt: T0,
      revokedAt: null,
    });
    await store().links.saveFeedToken(token('a', 1));
    await store().links.saveFeedToken(token('z', 1, 11));
    expect(await store().links.getFeedToken(s, 'team', 10)).toEqual(token('a', 1));
    expect(await store().links.findFeedTokenByHash(`${s}-a`)).toEqual(token('a', 1));
    expect(await store().links.getFeedToken(s, 'student', 10)).toBeNull();

    // Rotation: revoke the live one, save the next version, atomically.
    await store().transaction(async (tx) => {
      await tx.links.revokeFeedToken(s, 'team', 10, T1);
      await tx.links.saveFeedToken({ ...token('b', 2), createdAt: T1 });
    });
    expect(await store().links.getFeedToken(s, 'team', 10)).toEqual({ ...token('b', 2), createdAt: T1 });
    expect(await store().links.findFeedTokenByHash(`${s}-a`)).toEqual({ ...token('a', 1), revokedAt: T1 });
    expect(await store().links.findFeedTokenByHash('nope')).toBeNull();

    await store().links.revokeFeedToken(s, 'team', 10, T2);
    expect(await store().links.getFeedToken(s, 'team', 10)).toBeNull();
    const listed = await store().links.listFeedTokens(s);
    expect(listed.map((t) => [t.scopeId, t.version, t.revokedAt])).toEqual([
      [10, 1, T1],
      [10, 2, T2],
      [11, 1, null],
    ]);
    expect((await store().links.listFeedTokens()).filter((t) => t.schoolId === s)).toHaveLength(3);
  });

  it('marks the feed tokens of a school: the mark changes with each issue and revocation there, and no other', async () => {
    const s = newSchool();
    const other = newSchool();
    const token = (hash: string, scopeId: number, createdAt: string) => ({
      schoolId: s,
      scope: 'team' as const,
      scopeId,
      tokenHash: `${s}-${hash}`,
      version: 1,
      createdAt,
      revokedAt: null,
    });
    const seen = new Set([await store().links.feedTokensMark(s)]);
    const changed = async () => {
      const mark = await store().links.feedTokensMark(s);
      expect(seen.has(mark)).toBe(false);
      seen.add(mark);
      expect(await store().links.feedTokensMark(s)).toBe(mark);
    };
    await store().links.saveFeedToken(token('a', 1, T1));
    await changed();
    // Issued at an earlier instant than the newest: still a change.
    await store().links.saveFeedToken(token('b', 2, T0));
    await changed();
    await store().links.revokeFeedToken(s, 'team', 2, T1);
    await changed();
    await store().links.revokeFeedToken(s, 'team', 1, T1);
    await changed();
    const before = await store().links.feedTokensMark(s);
    await store().links.saveFeedToken({ ...token('c', 1, T2), schoolId: other, tokenHash: `${other}-c` });
    await store().links.revokeFeedToken(s, 'team', 1, T2);
    expect(await store().links.feedTokensMark(s)).toBe(before);
  });

  it('saves and finds family links by hash, members in order, revocation kept', async () => {
    const s = newSchool();
    const link = {
      schoolId: s,
      tokenHash: `${s}-family`,
      members: [
        { scope: 'student' as const, scopeId: 12, feedTokenHash: 'h1' },
        { scope: 'team' as const, scopeId: 3, feedTokenHash: 'h2' },
      ],
      createdAt: T0,
      revokedAt: null,
    };
    await store().links.saveFamilyLink(link);
    expect(await store().links.findFamilyLinkByHash(`${s}-family`)).toEqual(link);
    expect(await store().links.findFamilyLinkByHash('nope')).toBeNull();
    await store().links.saveFamilyLink({ ...link, revokedAt: '2026-11-02T09:00:00+01:00' });
    expect(await store().links.findFamilyLinkByHash(`${s}-family`)).toEqual({ ...link, revokedAt: T1 });
  });
});
