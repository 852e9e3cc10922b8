// The rendered-feed store: where renders are kept. The store's rendered_feeds hold every one (gzip, brotli once
// asked for, validators, what it was made from), so memory does not grow with the feeds and Last-Modified
// survives restarts; an LRU (lru-cache, bounded by bytes) keeps the feeds being polled; one render per (feed,
// data version) however many requests and passes want it meanwhile. It decides nothing about when to render.
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import type { CalendarEvent } from '../calendar/types.ts';
import type { Id } from '../domain/types.ts';
import type { FeedScope, RenderedFeedRecord, SchoolId, Store } from '../store/types.ts';
import type { FeedDef } from './feed-defs.ts';
import { brotliOf } from './feed-renderer.ts';

const gunzipAsync = promisify(gunzip);

export interface RenderedFeed {
  def: FeedDef;
  dataVersion: number;
  /** Hash of what the bytes were made from (context, window, sessions and their versions). */
  inputs: string;
  windowKey: string;
  body: Buffer;
  gzip: Buffer;
  /** Brotli is made on the first request that wants it (few calendar clients ask for it), then kept in the store. */
  br(): Promise<Buffer>;
  /** Strong validator of the identity body, without quotes; encoded variants append `-gz` / `-br`. */
  etag: string;
  /** When these bytes were first rendered (kept across re-renders that change nothing, and across restarts). */
  lastModified: Date;
  eventCount: number;
  trimmed: number;
  /** The next few events from now, for the landing page. */
  upcoming: CalendarEvent[];
  renderMs: number;
}

export function feedKey(schoolId: SchoolId, scope: FeedScope, scopeId: Id): string {
  return `${schoolId}|${scope}|${scopeId}`;
}

export class RenderedFeedStore {
  readonly #store: Pick<Store, 'feeds'>;
  readonly #onRequestWrite: ((err: unknown) => void) | undefined;
  readonly #lru: LRUCache<string, RenderedFeed>;
  readonly #inflight = new Map<string, Promise<RenderedFeed | null>>();

  constructor(opts: {
    store: Pick<Store, 'feeds'>;
    cacheBytes: number;
    onRequestWrite?: (err: unknown) => void;
  }) {
    this.#store = opts.store;
    this.#onRequestWrite = opts.onRequestWrite;
    this.#lru = new LRUCache<string, RenderedFeed>({
      maxSize: opts.cacheBytes,
      // The identity bytes and the gzip bytes, counted twice for the brotli that may join them.
      sizeCalculation: (f) => Math.max(1, f.body.length + f.gzip.length * 2),
    });
  }

  // --- memory

  /** A render held in memory, now the most recently used. */
  recall(key: string): RenderedFeed | undefined {
    return this.#lru.get(key);
  }

  /** A render held in memory, its place in the LRU unchanged. */
  peek(key: string): RenderedFeed | undefined {
    return this.#lru.peek(key);
  }

  remember(key: string, feed: RenderedFeed): RenderedFeed {
    this.#lru.set(key, feed);
    return feed;
  }

  forget(key: string): void {
    this.#lru.delete(key);
  }

  /** The keys held in memory (a copy: forgetting while iterating is fine). */
  keys(): string[] {
    return [...this.#lru.keys()];
  }

  /** Bytes and feeds held in memory now (for tests and benchmarks). */
  stats(): { feeds: number; bytes: number } {
    return { feeds: this.#lru.size, bytes: this.#lru.calculatedSize };
  }

  /** One job per (feed, data version) however many requests and passes want it meanwhile. */
  once(key: string, version: number, job: () => Promise<RenderedFeed | null>): Promise<RenderedFeed | null> {
    const flightKey = `${key}|${version}`;
    const running = this.#inflight.get(flightKey);
    if (running) return running;
    const p = job().finally(() => this.#inflight.delete(flightKey));
    this.#inflight.set(flightKey, p);
    return p;
  }

  // --- the store

  /** A stored render as the request path uses it (the identity bytes unzipped once, here). */
  async fromRecord(def: FeedDef, rec: RenderedFeedRecord, dataVersion: number): Promise<RenderedFeed> {
    const body = await gunzipAsync(rec.gzip);
    return {
      def,
      dataVersion,
      inputs: rec.inputs,
      windowKey: rec.windowKey,
      body,
      gzip: rec.gzip,
      br: this.brotli(def, rec.etag, body, rec.br),
      etag: rec.etag,
      lastModified: new Date(rec.lastModified),
      eventCount: rec.eventCount,
      trimmed: rec.trimmed,
      upcoming: JSON.parse(rec.upcoming) as CalendarEvent[],
      renderMs: 0,
    };
  }

  /** Brotli of a render, made once and written beside its gzip bytes in the store. */
  brotli(def: FeedDef, etag: string, body: Buffer, stored: Buffer | null): () => Promise<Buffer> {
    let br: Promise<Buffer> | null = stored ? Promise.resolve(stored) : null;
    return () => {
      br ??= brotliOf(body).then(async (bytes) => {
        await this.#store.feeds
          .saveRenderedFeedBrotli(def.schoolId, def.scope, def.scopeId, etag, bytes)
          .catch(() => {});
        return bytes;
      });
      return br;
    };
  }

  /**
   * A write a request makes to spare later requests work. Its failure must not fail the request: what it would
   * store is what the request answers with, already in hand.
   */
  async spare(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (err) {
      this.toldOfRequestWrite(err);
      return;
    }
    this.toldOfRequestWrite(null);
  }

  /** How a request's write went (null: written), for readiness (onRequestWrite). */
  toldOfRequestWrite(err: unknown): void {
    this.#onRequestWrite?.(err);
  }

  /** Stores a render: for a request, a refusal is told and swallowed; for a re-render pass it fails the pass. */
  save(record: RenderedFeedRecord, forRequest: boolean): Promise<void> {
    const write = () => this.#store.feeds.saveRenderedFeed(record);
    return forRequest ? this.spare(write) : write();
  }
}
