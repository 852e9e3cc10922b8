// `rostercal feeds list` at district scale took 238 s for 13,715 feeds: each missing token re-read every token of
// the school. Now the school's tokens are read once and the missing ones issued in one transaction.
// Checked on what reaches the database (the statements on PostgreSQL's wire, through a relay), not on the names
// of the store's methods: a store split into repositories keeps these assertions meaningful, and a listing that
// stopped asking the database at all fails them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listFeeds } from '../../src/cli/feeds.ts';
import { listFeedDefs } from '../../src/feeds/feed-defs.ts';
import { FeedTokens, hashToken } from '../../src/feeds/tokens.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { type PgWire, startPgWire } from '../support/pg-wire.ts';
import { fullPull } from '../sync/helpers.ts';
import { SECRET } from './harness.ts';

const NOW = '2026-11-20T00:00:00.000Z';

const tokenReads = (sql: string[]) =>
  sql.filter((s) => /^\s*select\b[\s\S]*\bfrom\s+"?feed_tokens"?/i.test(s));
const tokenWrites = (sql: string[]) =>
  sql.filter((s) => /^\s*(insert\s+into|update|delete\s+from)\s+"?feed_tokens"?/i.test(s));
const begins = (sql: string[]) => sql.filter((s) => /^\s*begin\b/i.test(s));

describe('feeds list at scale', () => {
  let sandbox: Sandbox;
  let db: TestDatabase;
  let wire: PgWire;
  let store: Store;
  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 7, scale: 'small', now: NOW });
    db = await createTestDatabase();
    wire = await startPgWire(db.url);
    store = await openStore({ databaseUrl: wire.url, poolSize: 4 });
    await fullPull(store, sandbox, NOW);
  });
  afterAll(async () => {
    await store?.close();
    await wire?.close();
    await db?.drop();
    await sandbox?.close();
  });

  it('reads the school’s tokens once and issues the missing ones together; the URLs are stable and work', async () => {
    const defs = await listFeedDefs(store, 'hillcrest');
    expect(defs.length).toBeGreaterThan(20);
    // One feed already has a token; one was rotated twice (version 1 revoked, 2 live).
    const tokens = new FeedTokens(store, SECRET);
    const kept = await tokens.ensure('hillcrest', defs[0]!.scope, defs[0]!.scopeId);
    await tokens.rotate('hillcrest', defs[1]!.scope, defs[1]!.scopeId);
    const rotated = await tokens.rotate('hillcrest', defs[1]!.scope, defs[1]!.scopeId);

    wire.reset();
    const rows = await listFeeds(store, new FeedTokens(store, SECRET), 'https://cal.example.org', [
      'hillcrest',
    ]);
    const first = wire.statements();
    expect(rows).toHaveLength(defs.length);
    // The listing asks the database (a relay that saw nothing would make every count below pass).
    expect(tokenReads(first).length, first.join('\n')).toBe(1);
    expect(begins(first)).toHaveLength(1);
    // The missing tokens are written, inside that one transaction; nothing per feed beyond the writes.
    const writes = tokenWrites(first);
    expect(writes.length).toBeGreaterThan(0);
    const begin = first.findIndex((s) => /^\s*begin\b/i.test(s));
    const commit = first.findIndex((s) => /^\s*commit\b/i.test(s));
    expect(begin).toBeGreaterThanOrEqual(0);
    expect(commit).toBeGreaterThan(begin);
    for (const w of writes) {
      const at = first.indexOf(w);
      expect(at > begin && at < commit, `outside the transaction: ${w}`).toBe(true);
    }
    expect(first.length - writes.length).toBeLessThan(20);

    expect(new Set(rows.map((r) => r.url)).size).toBe(defs.length);
    expect(rows[0]!.url).toBe(`https://cal.example.org/feeds/${kept.token}.ics`);
    expect(rows[1]!.url).toBe(`https://cal.example.org/feeds/${rotated.token}.ics`);
    for (const r of rows) {
      const token = /feeds\/([^.]+)\.ics$/.exec(r.url!)![1]!;
      const record = await store.links.findFeedTokenByHash(hashToken(token));
      expect(record?.revokedAt).toBeNull();
      expect(record?.scopeId).toBe(r.id);
    }

    // Again: nothing to issue, the same URLs, one read, no transaction, no write.
    wire.reset();
    const rows2 = await listFeeds(store, new FeedTokens(store, SECRET), 'https://x', ['hillcrest']);
    const second = wire.statements();
    expect(rows2.map((r) => r.url!.replace('https://x', 'https://cal.example.org'))).toEqual(
      rows.map((r) => r.url),
    );
    expect(tokenReads(second).length, second.join('\n')).toBe(1);
    expect(begins(second)).toEqual([]);
    expect(tokenWrites(second)).toEqual([]);
  });
});
