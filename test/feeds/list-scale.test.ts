// `rostercal feeds list` at district scale took 238 s for 13,715 feeds: each missing token re-read every token of
// the school. Now the school's tokens are read once and the missing ones issued in one transaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listFeeds } from '../../src/cli/feeds.ts';
import { listFeedDefs } from '../../src/feeds/catalog.ts';
import { FeedTokens, hashToken } from '../../src/feeds/tokens.ts';
import type { Store } from '../../src/store/types.ts';
import { type Harness, SECRET, startHarness } from './harness.ts';

/** The store, counting calls by method name. */
function counting(store: Store): { store: Store; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        calls.set(String(prop), (calls.get(String(prop)) ?? 0) + 1);
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls };
}

describe('feeds list at scale', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ scale: 'small' });
  });
  afterAll(async () => h?.close());

  it('reads the school’s tokens once and issues the missing ones together; the URLs are stable and work', async () => {
    const defs = await listFeedDefs(h.store, 'hill');
    // One feed already has a token; one was rotated twice (version 1 revoked, 2 live).
    const tokens = new FeedTokens(h.store, SECRET);
    const kept = await tokens.ensure('hill', defs[0]!.scope, defs[0]!.scopeId);
    await tokens.rotate('hill', defs[1]!.scope, defs[1]!.scopeId);
    const rotated = await tokens.rotate('hill', defs[1]!.scope, defs[1]!.scopeId);

    const c = counting(h.store);
    const rows = await listFeeds(c.store, new FeedTokens(c.store, SECRET), 'https://cal.example.org', [
      'hill',
    ]);
    expect(rows).toHaveLength(defs.length);
    expect(c.calls.get('listFeedTokens')).toBe(1);
    expect(c.calls.get('getFeedToken') ?? 0).toBe(0);
    expect(c.calls.get('transaction')).toBe(1);
    expect(new Set(rows.map((r) => r.url)).size).toBe(defs.length);
    expect(rows[0]!.url).toBe(`https://cal.example.org/feeds/${kept.token}.ics`);
    expect(rows[1]!.url).toBe(`https://cal.example.org/feeds/${rotated.token}.ics`);
    for (const r of rows) {
      const token = /feeds\/([^.]+)\.ics$/.exec(r.url!)![1]!;
      const record = await h.store.findFeedTokenByHash(hashToken(token));
      expect(record?.revokedAt).toBeNull();
      expect(record?.scopeId).toBe(r.id);
    }

    // Again: nothing to issue, the same URLs, no transaction.
    const again = counting(h.store);
    const rows2 = await listFeeds(again.store, new FeedTokens(again.store, SECRET), 'https://x', ['hill']);
    expect(rows2.map((r) => r.url!.replace('https://x', 'https://cal.example.org'))).toEqual(
      rows.map((r) => r.url),
    );
    expect(again.calls.get('transaction') ?? 0).toBe(0);
    expect(again.calls.get('saveFeedToken') ?? 0).toBe(0);
  });
});
