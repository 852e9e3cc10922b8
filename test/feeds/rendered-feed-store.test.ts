// Where renders are kept (src/feeds/rendered-feed-store.ts), over a real SQLite store: a stored render read back
// as requests use it, brotli made once and written beside the gzip bytes, one job per (feed, data version), the
// memory bounded by bytes with the least recently used forgotten first, and a request's write that fails told
// and swallowed while a pass's fails the pass.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedDef } from '../../src/feeds/feed-defs.ts';
import { feedKey, type RenderedFeed, RenderedFeedStore } from '../../src/feeds/rendered-feed-store.ts';
import { openStore } from '../../src/store/index.ts';
import type { RenderedFeedRecord, Store } from '../../src/store/types.ts';

const SCHOOL = 'hill';

function defOf(scopeId: number): FeedDef {
  return {
    schoolId: SCHOOL,
    scope: 'team',
    scopeId,
    subject: `Team ${scopeId}`,
    calendarName: `Team ${scopeId}`,
    description: '',
    audience: 'guardian',
    color: null,
  };
}

function recordOf(scopeId: number, text: string): RenderedFeedRecord {
  return {
    schoolId: SCHOOL,
    scope: 'team',
    scopeId,
    dataVersion: 3,
    windowKey: 'w1',
    inputs: `inputs-${scopeId}`,
    etag: `etag-${scopeId}`,
    lastModified: '2026-12-01T10:00:00.000Z',
    gzip: gzipSync(text),
    br: null,
    eventCount: 2,
    trimmed: 0,
    upcoming: JSON.stringify([{ uid: 'u1', summary: 'Training' }]),
    def: JSON.stringify(defOf(scopeId)),
    renderedAt: '2026-12-01T10:00:00.000Z',
  };
}

/** A render as a pass hands it over: `bytes` of body, gzip of ~`bytes`/4 (incompressible bytes would not be). */
function renderOf(scopeId: number, bytes: number): RenderedFeed {
  const body = Buffer.from('BEGIN:VEVENT\r\n'.repeat(Math.ceil(bytes / 14)).slice(0, bytes));
  return {
    def: defOf(scopeId),
    dataVersion: 1,
    inputs: 'i',
    windowKey: 'w',
    body,
    gzip: Buffer.alloc(Math.floor(bytes / 4)),
    br: async () => Buffer.alloc(0),
    etag: `e${scopeId}`,
    lastModified: new Date(0),
    eventCount: 0,
    trimmed: 0,
    upcoming: [],
    renderMs: 1,
  };
}

describe('the rendered-feed store', () => {
  let dir: string;
  let store: Store;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rostercal-rendered-feed-store-'));
    store = await openStore({ file: path.join(dir, 'rostercal.sqlite') });
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads a stored render back as requests use it: the identity bytes unzipped, its validators kept', async () => {
    const rendered = new RenderedFeedStore({ store, cacheBytes: 1_000_000 });
    const text = 'BEGIN:VCALENDAR\r\nX-WR-CALNAME:Team 1\r\nEND:VCALENDAR\r\n';
    await rendered.save(recordOf(1, text), false);
    const rec = await store.feeds.getRenderedFeed(SCHOOL, 'team', 1);
    const feed = await rendered.fromRecord(defOf(1), rec!, 4);
    expect(feed.body.toString()).toBe(text);
    expect(feed).toMatchObject({ dataVersion: 4, inputs: 'inputs-1', windowKey: 'w1', etag: 'etag-1' });
    expect(feed.lastModified.toISOString()).toBe('2026-12-01T10:00:00.000Z');
    expect(feed.upcoming).toEqual([{ uid: 'u1', summary: 'Training' }]);
  });

  it('makes brotli on the first request that wants it, once, and writes it beside the gzip bytes', async () => {
    const rendered = new RenderedFeedStore({ store, cacheBytes: 1_000_000 });
    const text = 'BEGIN:VCALENDAR\r\nSUMMARY:Brotli\r\nEND:VCALENDAR\r\n'.repeat(20);
    await rendered.save(recordOf(2, text), false);
    const feed = await rendered.fromRecord(
      defOf(2),
      (await store.feeds.getRenderedFeed(SCHOOL, 'team', 2))!,
      3,
    );
    expect((await store.feeds.getRenderedFeed(SCHOOL, 'team', 2))?.br).toBeNull();
    const [a, b] = await Promise.all([feed.br(), feed.br()]);
    expect(a).toBe(b);
    expect(brotliDecompressSync(a).toString()).toBe(text);
    const stored = (await store.feeds.getRenderedFeed(SCHOOL, 'team', 2))?.br;
    expect(stored && Buffer.compare(stored, a)).toBe(0);
    // Read back after a restart: the stored brotli, not a new one.
    const again = await rendered.fromRecord(
      defOf(2),
      (await store.feeds.getRenderedFeed(SCHOOL, 'team', 2))!,
      3,
    );
    expect(Buffer.compare(await again.br(), a)).toBe(0);
  });

  it('runs one job per (feed, data version) however many ask meanwhile; a new version or a later ask runs again', async () => {
    const rendered = new RenderedFeedStore({ store, cacheBytes: 1_000_000 });
    const key = feedKey(SCHOOL, 'team', 7);
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const job = async () => {
      runs++;
      await gate;
      return renderOf(7, 100);
    };
    const asks = [rendered.once(key, 1, job), rendered.once(key, 1, job), rendered.once(key, 1, job)];
    const other = rendered.once(key, 2, job);
    release();
    const [first, ...rest] = await Promise.all(asks);
    for (const r of rest) expect(r).toBe(first);
    expect(await other).not.toBe(first);
    expect(runs).toBe(2);
    await rendered.once(key, 1, job);
    expect(runs).toBe(3);
  });

  it('holds at most cacheBytes in memory, forgetting the least recently used first (peek leaves the order)', () => {
    // Each render weighs 1000 + 2·250 = 1500 bytes: three fit in 4500.
    const rendered = new RenderedFeedStore({ store, cacheBytes: 4_500 });
    const key = (n: number) => feedKey(SCHOOL, 'team', n);
    for (const n of [1, 2, 3]) rendered.remember(key(n), renderOf(n, 1000));
    expect(rendered.stats()).toEqual({ feeds: 3, bytes: 4_500 });
    expect(rendered.recall(key(1))?.etag).toBe('e1');
    rendered.remember(key(4), renderOf(4, 1000));
    expect(rendered.keys().sort()).toEqual([key(1), key(3), key(4)]);
    expect(rendered.peek(key(3))?.etag).toBe('e3');
    rendered.remember(key(5), renderOf(5, 1000));
    expect(rendered.keys().sort()).toEqual([key(1), key(4), key(5)]);
    rendered.forget(key(4));
    expect(rendered.stats()).toEqual({ feeds: 2, bytes: 3_000 });
  });

  it("tells a request's failed write and swallows it; a pass's failed write fails the pass", async () => {
    // A store that refuses every write: closed under the rendered-feed store.
    const closed = await openStore({ file: path.join(dir, 'closed.sqlite') });
    await closed.close();
    const told: unknown[] = [];
    const refusing = new RenderedFeedStore({
      store: closed,
      cacheBytes: 1_000,
      onRequestWrite: (e) => told.push(e),
    });
    await expect(refusing.save(recordOf(3, 'x'), true)).resolves.toBeUndefined();
    expect(told).toHaveLength(1);
    expect(told[0]).toBeInstanceOf(Error);
    await expect(refusing.save(recordOf(3, 'x'), false)).rejects.toThrow();
    expect(told).toHaveLength(1);

    const writing = new RenderedFeedStore({ store, cacheBytes: 1_000, onRequestWrite: (e) => told.push(e) });
    await writing.save(recordOf(3, 'y'), true);
    expect(told).toHaveLength(2);
    expect(told[1]).toBeNull();
    expect((await store.feeds.getRenderedFeed(SCHOOL, 'team', 3))?.etag).toBe('etag-3');
  });
});
