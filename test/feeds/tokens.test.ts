// FeedTokenResolver while its store cannot be reached and another can: two stores on one PostgreSQL, the
// resolver's through a relay the test cuts (A rotates, B is cut off alone). B answers a remembered token from
// memory only until OUTAGE_MEMORY_MS after it first found the store unreachable; a rotation made meanwhile on A is
// so served by B no longer than that, however long the cut lasts, and a replica nobody asked for a while serves
// through an outage as one just asked. Only performance.now is faked (the resolver's clock).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FeedTokenResolver, FeedTokens, OUTAGE_MEMORY_MS } from '../../src/feeds/tokens.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import { StoreUnreachableError } from '../../src/store/unreachable.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { type PgWire, startPgWire } from '../support/pg-wire.ts';

const SECRET = Buffer.from('tokens-test-feed-secret-0123456789abcdef');
let db: TestDatabase;
let relay: PgWire;
let a: Store;
let b: Store;

beforeAll(async () => {
  db = await createTestDatabase();
  relay = await startPgWire(db.url);
  a = await openStore({ databaseUrl: db.url, poolSize: 2 });
  b = await openStore({ databaseUrl: relay.url, poolSize: 2, migrate: false });
});

afterEach(() => {
  relay.restore();
  vi.useRealTimers();
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await relay?.close();
  await db?.drop();
});

describe('a remembered token while the store cannot be reached', () => {
  it(`is answered from memory until ${OUTAGE_MEMORY_MS} ms after the store was first found unreachable, then 503; the rotation made meanwhile is refused on reconnect`, async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const tokens = new FeedTokens(a, SECRET);
    const { token } = await tokens.ensure('hill', 'team', 1);
    const { token: other } = await tokens.ensure('hill', 'team', 2);
    const resolver = new FeedTokenResolver(b);
    expect((await resolver.resolve(token!))?.version).toBe(1);
    expect((await resolver.resolve(other!))?.version).toBe(1);

    // Nobody asks B for ten minutes, then the cut: what it confirmed is still served from the cut on.
    vi.advanceTimersByTime(10 * 60_000);
    relay.cut();
    await tokens.rotate('hill', 'team', 1);
    // B cannot tell this rotation from none: what it confirmed, it answers for a while.
    expect((await resolver.resolve(token!))?.version).toBe(1);
    vi.advanceTimersByTime(OUTAGE_MEMORY_MS - 100);
    expect((await resolver.resolve(token!))?.version).toBe(1);
    vi.advanceTimersByTime(200);
    await expect(resolver.resolve(token!)).rejects.toThrow(StoreUnreachableError);
    await expect(resolver.resolve(other!)).rejects.toThrow(StoreUnreachableError);

    relay.restore();
    expect(await resolver.resolve(token!)).toBeNull();
    expect((await resolver.resolve(other!))?.version).toBe(1);
    // Confirmed again: memory serves the live one through the next cut.
    relay.cut();
    vi.advanceTimersByTime(1500);
    expect((await resolver.resolve(other!))?.version).toBe(1);
    await expect(resolver.resolve(token!)).rejects.toThrow(StoreUnreachableError);
  });
});
