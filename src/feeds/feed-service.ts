// Rendered feeds, kept per (feed, store data version, window day) so that a request costs a lookup: the gzip
// (and, once asked for, brotli) bytes live in the store with a strong ETag, a Last-Modified that moves only when
// the bytes change (and survives restarts), and a hash of what they were made from; a small LRU keeps the feeds
// being polled in memory. renderSchool() re-renders, after a sync, only the issued feeds whose inputs changed.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, gunzip, gzip, constants as zlib } from 'node:zlib';
import { loadProjectionContext, type ProjectionContext } from '../calendar/context.ts';
import { sayFeedTexts } from '../calendar/gate.ts';
import { projectSession } from '../calendar/project.ts';
import type { EventTemplates } from '../calendar/templates.ts';
import type { CalendarEvent } from '../calendar/types.ts';
import type { Id } from '../domain/types.ts';
import type {
  FeedScope,
  RenderedFeedRecord,
  RenderedFeedState,
  SchoolId,
  Store,
  Stored,
} from '../store/types.ts';
import { TimeSlice } from '../util/event-loop.ts';
import { type FeedDef, getFeedDef, listFeedDefs, sessionQuery } from './catalog.ts';
import { versionFeedEvents } from './event-versions.ts';
import { DEFAULT_MAX_BYTES, renderIcsPaced } from './ics.ts';

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);
const gunzipAsync = promisify(gunzip);

export interface FeedWindow {
  /** Days before today (school-independent UTC day) that a feed still shows. Default 30. */
  daysBack: number;
  /** Days after today. Default 365. */
  daysAhead: number;
}

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

export type FeedRenderObserver = (info: {
  schoolId: SchoolId;
  scope: FeedScope;
  scopeId: Id;
  ms: number;
  bytes: number;
  events: number;
  trimmed: number;
}) => void;

export interface FeedServiceOptions {
  store: Store;
  window?: Partial<FeedWindow>;
  maxBytes?: number;
  now?: () => Date;
  /** Per-school wording (config eventTemplatesDir, loaded by loadConfig); default the built-in wording. */
  templates?: (schoolId: SchoolId) => EventTemplates | undefined;
  /** Per-school location owner ids that count as "home". */
  locationOwnerIds?: (schoolId: SchoolId) => Id[] | undefined;
  /** How long a read of the store's data version is reused; 0 reads it on every request. Default 1000 ms. */
  dataVersionTtlMs?: number;
  onRender?: FeedRenderObserver;
  refreshSeconds?: number;
  /** Bytes of rendered feeds kept in memory (least recently requested dropped first). Default 32 MB. */
  cacheBytes?: number;
  /**
   * Told how each write a request makes went (storing a render, confirming one): the error when the store
   * refused it (a full disk, a read-only store), null when it was written. The request is answered either way.
   */
  onRequestWrite?: (err: unknown) => void;
}

export interface RenderSchoolResult {
  /** Feeds the pass was about (issued ones, or all with `all`). */
  feeds: number;
  /** Feeds rendered again because what they are made from changed. */
  rendered: number;
  /** Feeds whose stored bytes were confirmed for the new data version without rendering. */
  unchanged: number;
  /** Events and bytes of the feeds rendered. */
  events: number;
  bytes: number;
  ms: number;
  dataVersion: number;
}

const DAY = 86_400_000;

function feedKey(schoolId: SchoolId, scope: FeedScope, scopeId: Id): string {
  return `${schoolId}|${scope}|${scopeId}`;
}

/** HTTP dates have second precision: truncate so If-Modified-Since round-trips exactly. */
function httpInstant(d: Date): Date {
  return new Date(Math.floor(d.getTime() / 1000) * 1000);
}

function sizeOf(f: RenderedFeed): number {
  return f.body.length + f.gzip.length * 2;
}

/** The feed's own texts as its audience may read them (the projection's gate, calendar/gate.ts). */
function saidDef(def: FeedDef, ctx: ProjectionContext): FeedDef {
  return sayFeedTexts(def, ctx, def.audience, { scope: def.scope, id: def.scopeId });
}

export class FeedService {
  readonly store: Store;
  readonly window: FeedWindow;
  readonly #opts: FeedServiceOptions;
  readonly #now: () => Date;
  /** Least recently used first (a Map keeps insertion order; a hit re-inserts). */
  readonly #lru = new Map<string, RenderedFeed>();
  #lruBytes = 0;
  readonly #cacheBytes: number;
  readonly #inflight = new Map<string, Promise<RenderedFeed | null>>();
  readonly #contexts = new Map<SchoolId, { version: number; ctx: Promise<ProjectionContext> }>();
  readonly #versions = new Map<SchoolId, { at: number; version: Promise<number> }>();
  /** Per school, the (data version, window, selection) a renderSchool pass last left entirely current. */
  readonly #schoolCurrent = new Map<SchoolId, string>();
  /** Per school, how many holds are on its renders (see holdRenders). */
  readonly #held = new Map<SchoolId, number>();

  constructor(opts: FeedServiceOptions) {
    this.store = opts.store;
    this.#opts = opts;
    this.#now = opts.now ?? (() => new Date());
    this.#cacheBytes = opts.cacheBytes ?? 32 * 1024 * 1024;
    this.window = { daysBack: opts.window?.daysBack ?? 30, daysAhead: opts.window?.daysAhead ?? 365 };
  }

  /** This service's clock (a test's or a benchmark's may differ from the system's). */
  now(): Date {
    return this.#now();
  }

  /** The window for "now": whole UTC days, so it moves once a day and cached renders stay valid in between. */
  currentWindow(): { from: Date; to: Date; key: string } {
    const today = Math.floor(this.#now().getTime() / DAY) * DAY;
    if (this.#window?.today !== today) {
      this.#window = {
        today,
        value: {
          from: new Date(today - this.window.daysBack * DAY),
          to: new Date(today + (this.window.daysAhead + 1) * DAY),
          key: new Date(today).toISOString().slice(0, 10),
        },
      };
    }
    const w = this.#window.value;
    return { from: new Date(w.from), to: new Date(w.to), key: w.key };
  }

  /** The window's key alone (the request path needs only this). */
  #windowKey(): string {
    const today = Math.floor(this.#now().getTime() / DAY) * DAY;
    return this.#window?.today === today ? this.#window.value.key : this.currentWindow().key;
  }

  #window: { today: number; value: { from: Date; to: Date; key: string } } | null = null;

  async #dataVersion(schoolId: SchoolId, fresh = false): Promise<number> {
    const ttl = this.#opts.dataVersionTtlMs ?? 1000;
    const now = Date.now();
    const hit = this.#versions.get(schoolId);
    if (!fresh && hit && now - hit.at < ttl) return hit.version;
    const version = this.store.dataVersion(schoolId);
    this.#versions.set(schoolId, { at: now, version });
    version.catch(() => this.#versions.delete(schoolId));
    return version;
  }

  /**
   * The projection context of a data version. Which locations are the school's is decided over every stored
   * session (calendar/context.ts), not the feed window, so that rosters and the CLI decide it alike.
   */
  async #context(schoolId: SchoolId, version: number): Promise<ProjectionContext> {
    const hit = this.#contexts.get(schoolId);
    if (hit && hit.version === version) return hit.ctx;
    const templates = this.#opts.templates?.(schoolId);
    const owners = this.#opts.locationOwnerIds?.(schoolId);
    const ctx = loadProjectionContext(this.store, schoolId, {
      ...(templates ? { templates } : {}),
      ...(owners ? { locationOwnerIds: owners } : {}),
    });
    this.#contexts.set(schoolId, { version, ctx });
    ctx.catch(() => this.#contexts.delete(schoolId));
    return ctx;
  }

  /** The events of a feed for the current window, projected for its audience. */
  async events(
    def: FeedDef,
    ctx: ProjectionContext,
    prefetched?: Stored<'sessions'>[],
  ): Promise<CalendarEvent[]> {
    const w = this.currentWindow();
    const sessions =
      prefetched ??
      (await this.store.listSessions(
        def.schoolId,
        sessionQuery(def.scope, def.scopeId, w.from.toISOString(), w.to.toISOString()),
      ));
    const scope = { scope: def.scope, id: def.scopeId };
    // An activity's feed projects a thousand sessions and more: requests get their turns meanwhile.
    const slice = new TimeSlice();
    const out: CalendarEvent[] = [];
    for (const s of sessions) {
      const e = projectSession(s, ctx, def.audience, scope);
      if (e) out.push(e);
      await slice.pause();
    }
    return out;
  }

  /** Every event of a feed in the current window, projected for its audience (family links combine these). */
  async eventsFor(def: FeedDef): Promise<CalendarEvent[]> {
    const ctx = await this.#context(def.schoolId, await this.#dataVersion(def.schoolId));
    return this.events(def, ctx);
  }

  // --- the in-memory LRU

  #recall(key: string): RenderedFeed | undefined {
    const hit = this.#lru.get(key);
    if (hit) {
      this.#lru.delete(key);
      this.#lru.set(key, hit);
    }
    return hit;
  }

  #remember(key: string, feed: RenderedFeed): RenderedFeed {
    this.#forget(key);
    this.#lru.set(key, feed);
    this.#lruBytes += sizeOf(feed);
    for (const [k, f] of this.#lru) {
      if (this.#lruBytes <= this.#cacheBytes || this.#lru.size <= 1) break;
      this.#lru.delete(k);
      this.#lruBytes -= sizeOf(f);
    }
    return feed;
  }

  #forget(key: string): void {
    const old = this.#lru.get(key);
    if (!old) return;
    this.#lru.delete(key);
    this.#lruBytes -= sizeOf(old);
  }

  /** Bytes and feeds held in memory now (for tests and benchmarks). */
  cacheStats(): { feeds: number; bytes: number } {
    return { feeds: this.#lru.size, bytes: this.#lruBytes };
  }

  // --- rendering

  /** Everything the bytes depend on. A sync that changed nothing this feed shows keeps its render. */
  #inputsOf(
    def: FeedDef,
    ctx: ProjectionContext,
    windowKey: string,
    sessions: readonly Stored<'sessions'>[],
  ): string {
    return createHash('sha256')
      .update(
        `${ctx.fingerprint ?? Math.random()}|${windowKey}|${def.calendarName}|${def.description}|${def.color}|${this.#opts.refreshSeconds ?? ''}|${this.#opts.maxBytes ?? ''}|`,
      )
      .update(sessions.map((s) => `${s.id}:${s.meta.version}`).join(','))
      .digest('base64url');
  }

  /** Brotli of a render, made once and written beside its gzip bytes in the store. */
  #brotli(def: FeedDef, etag: string, body: Buffer, stored: Buffer | null): () => Promise<Buffer> {
    let br: Promise<Buffer> | null = stored ? Promise.resolve(stored) : null;
    return () => {
      br ??= brotliAsync(body, {
        params: {
          [zlib.BROTLI_PARAM_QUALITY]: 5,
          [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
          [zlib.BROTLI_PARAM_SIZE_HINT]: body.length,
        },
      }).then(async (bytes) => {
        await this.store
          .saveRenderedFeedBrotli(def.schoolId, def.scope, def.scopeId, etag, bytes)
          .catch(() => {});
        return bytes;
      });
      return br;
    };
  }

  /** A stored render as the request path uses it (the identity bytes unzipped once, here). */
  async #fromRecord(def: FeedDef, rec: RenderedFeedRecord, dataVersion: number): Promise<RenderedFeed> {
    const body = await gunzipAsync(rec.gzip);
    return {
      def,
      dataVersion,
      inputs: rec.inputs,
      windowKey: rec.windowKey,
      body,
      gzip: rec.gzip,
      br: this.#brotli(def, rec.etag, body, rec.br),
      etag: rec.etag,
      lastModified: new Date(rec.lastModified),
      eventCount: rec.eventCount,
      trimmed: rec.trimmed,
      upcoming: JSON.parse(rec.upcoming) as CalendarEvent[],
      renderMs: 0,
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
    this.#opts.onRequestWrite?.(err);
  }

  /**
   * Renders a feed's bytes, writes them to the store and tells the observer. `forRequest`: a request waits on
   * it, so a store that refuses the writes leaves the render in memory only (told to onRequestWrite); a re-render
   * pass (renderSchool) fails instead, so that the pull it follows is not taken for a success.
   */
  async #renderFresh(
    raw: FeedDef,
    version: number,
    ctx: ProjectionContext,
    w: { from: Date; to: Date; key: string },
    sessions: Stored<'sessions'>[],
    inputs: string,
    previous: { etag: string; lastModified: string } | null,
    forRequest: boolean,
  ): Promise<RenderedFeed> {
    const started = performance.now();
    // The calendar's name and description are the audience's words too (a team's name may name a child).
    const def = saidDef(raw, ctx);
    // SEQUENCE/LAST-MODIFIED as this feed last published them, unless what its audience sees changed.
    const events = await versionFeedEvents(
      this.store,
      def,
      await this.events(def, ctx, sessions),
      this.#now(),
      forRequest ? (err) => this.toldOfRequestWrite(err) : undefined,
    );
    const ics = await renderIcsPaced(
      {
        name: def.calendarName,
        description: def.description,
        timeZone: ctx.school.timeZone,
        color: def.color,
        window: w,
        ...(this.#opts.refreshSeconds ? { refreshSeconds: this.#opts.refreshSeconds } : {}),
      },
      events,
      { maxBytes: this.#opts.maxBytes ?? DEFAULT_MAX_BYTES },
    );
    const body = Buffer.from(ics.body, 'utf8');
    // Level 6: a third of level 9's time for ~5% more bytes (measured on a 300-event feed).
    const gz = await gzipAsync(body, { level: 6 });
    const etag = createHash('sha256').update(body).digest('base64url').slice(0, 27);
    // Last-Modified moves only when the bytes do; the stored one survives restarts.
    const lastModified =
      previous && previous.etag === etag ? new Date(previous.lastModified) : httpInstant(this.#now());
    const nowIso = this.#now().toISOString();
    const upcoming = events
      .filter((e) => e.end >= nowIso)
      .sort((a, b) => a.start.localeCompare(b.start))
      .slice(0, 8);
    const save = () =>
      this.store.saveRenderedFeed({
        schoolId: def.schoolId,
        scope: def.scope,
        scopeId: def.scopeId,
        dataVersion: version,
        windowKey: w.key,
        inputs,
        etag,
        lastModified: lastModified.toISOString(),
        gzip: gz,
        br: null,
        eventCount: ics.eventCount,
        trimmed: ics.trimmed,
        upcoming: JSON.stringify(upcoming),
        def: JSON.stringify(def),
        renderedAt: nowIso,
      });
    if (forRequest) await this.spare(save);
    else await save();
    const renderMs = performance.now() - started;
    this.#opts.onRender?.({
      schoolId: def.schoolId,
      scope: def.scope,
      scopeId: def.scopeId,
      ms: renderMs,
      bytes: body.length,
      events: ics.eventCount,
      trimmed: ics.trimmed,
    });
    return {
      def,
      dataVersion: version,
      inputs,
      windowKey: w.key,
      body,
      gzip: gz,
      br: this.#brotli(def, etag, body, null),
      etag,
      lastModified,
      eventCount: ics.eventCount,
      trimmed: ics.trimmed,
      upcoming,
      renderMs,
    };
  }

  /** One job per (feed, data version) however many requests and passes want it meanwhile. */
  #once(key: string, version: number, job: () => Promise<RenderedFeed | null>): Promise<RenderedFeed | null> {
    const flightKey = `${key}|${version}`;
    const running = this.#inflight.get(flightKey);
    if (running) return running;
    const p = job().finally(() => this.#inflight.delete(flightKey));
    this.#inflight.set(flightKey, p);
    return p;
  }

  /**
   * While a pull of the school writes and the re-render pass that follows it (on a worker thread) brings every
   * issued feed to the new data version, a request answers the feed's stored bytes, a moment older, instead of
   * projecting and rendering it on the event loop every request shares: at district scale a request's projection
   * context alone held the loop for seconds, and its writes waited for the pass's. A feed nothing stored yet is
   * still rendered. Call the returned function when the pass has ended, whatever its result.
   */
  holdRenders(schoolId: SchoolId): () => void {
    this.#held.set(schoolId, (this.#held.get(schoolId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.#held.get(schoolId) ?? 1) - 1;
      if (n > 0) this.#held.set(schoolId, n);
      else this.#held.delete(schoolId);
    };
  }

  /**
   * The rendered feed: from memory, else from the store when its bytes are current for the data version and
   * window (or, while the school's renders are held, for the window), else rendered (once, however many requests
   * arrive meanwhile) unless what it is made from did not change. null when the feed's subject no longer exists.
   */
  async get(schoolId: SchoolId, scope: FeedScope, scopeId: Id): Promise<RenderedFeed | null> {
    const key = feedKey(schoolId, scope, scopeId);
    const version = await this.#dataVersion(schoolId);
    const windowKey = this.#windowKey();
    const hit = this.#recall(key);
    if (hit && hit.dataVersion === version && hit.windowKey === windowKey) return hit;
    const held = this.#held.has(schoolId);
    if (held && hit && hit.windowKey === windowKey) return hit;
    return this.#once(key, version, async () => {
      const stored = await this.store.getRenderedFeed(schoolId, scope, scopeId);
      if (stored && stored.windowKey === windowKey && (stored.dataVersion === version || held)) {
        const def = JSON.parse(stored.def) as FeedDef;
        return this.#remember(key, await this.#fromRecord(def, stored, stored.dataVersion));
      }
      const def = await getFeedDef(this.store, schoolId, scope, scopeId);
      if (!def) {
        this.#forget(key);
        return null;
      }
      const ctx = await this.#context(schoolId, version);
      const w = this.currentWindow();
      const sessions = await this.store.listSessions(
        schoolId,
        sessionQuery(scope, scopeId, w.from.toISOString(), w.to.toISOString()),
      );
      const inputs = this.#inputsOf(def, ctx, w.key, sessions);
      if (stored && stored.inputs === inputs) {
        await this.spare(() =>
          this.store.markRenderedFeedsCurrent(schoolId, [{ scope, scopeId, inputs }], version),
        );
        // Still in memory from an earlier version: the same bytes, nothing to unzip.
        if (hit && hit.inputs === inputs) return this.#remember(key, { ...hit, dataVersion: version });
        return this.#remember(key, await this.#fromRecord(saidDef(def, ctx), stored, version));
      }
      return this.#remember(
        key,
        await this.#renderFresh(def, version, ctx, w, sessions, inputs, stored, true),
      );
    });
  }

  /**
   * Brings the school's feeds up to its current data version: every feed that has a live token, or every feed
   * of the school with `all`. Only feeds whose inputs changed are rendered; the others' stored bytes are
   * confirmed in one write. A data version this pass already left current costs one read. `force` renders
   * every selected feed (benchmarks: the worst case). Call after each sync; yields between renders.
   */
  async renderSchool(
    schoolId: SchoolId,
    opts: { all?: boolean; force?: boolean } = {},
  ): Promise<RenderSchoolResult> {
    const started = performance.now();
    const version = await this.#dataVersion(schoolId, true);
    const w = this.currentWindow();
    const mark = `${version}|${w.key}|${opts.all ? 'all' : 'live'}`;
    const result: RenderSchoolResult = {
      feeds: 0,
      rendered: 0,
      unchanged: 0,
      events: 0,
      bytes: 0,
      ms: 0,
      dataVersion: version,
    };
    if (!opts.force && this.#schoolCurrent.get(schoolId) === mark) {
      result.ms = performance.now() - started;
      return result;
    }
    // Each step below is one stretch of synchronous work (node:sqlite reads, JSON, hashing): the web server in
    // this process gets the event loop between them, and inside the long ones.
    const slice = new TimeSlice();
    const defs = await listFeedDefs(this.store, schoolId);
    await slice.yield();
    let wanted = defs;
    if (!opts.all) {
      const live = new Set(
        (await this.store.listFeedTokens(schoolId))
          .filter((t) => t.revokedAt === null)
          .map((t) => feedKey(t.schoolId, t.scope, t.scopeId)),
      );
      wanted = defs.filter((d) => live.has(feedKey(d.schoolId, d.scope, d.scopeId)));
    }
    result.feeds = wanted.length;
    await slice.yield();
    const states = new Map<string, RenderedFeedState>();
    // Family calendars are rendered on request (feeds/family.ts), from their members' renders.
    for (const s of await this.store.listRenderedFeedStates(schoolId))
      if (s.scope !== 'family') states.set(feedKey(schoolId, s.scope, s.scopeId), s);
    await slice.yield();
    // Feeds whose subject is gone lose their stored bytes.
    const liveKeys = new Set(defs.map((d) => feedKey(d.schoolId, d.scope, d.scopeId)));
    const gone = [...states.entries()].filter(([k]) => !liveKeys.has(k)).map(([, s]) => s);
    await inBatches(gone, slice, (batch) => this.store.deleteRenderedFeeds(schoolId, batch));
    for (const [key] of this.#lru)
      if (key.startsWith(`${schoolId}|`) && !liveKeys.has(key)) this.#forget(key);

    const stale = wanted.filter((d) => {
      const s = states.get(feedKey(d.schoolId, d.scope, d.scopeId));
      return opts.force || !s || s.dataVersion !== version || s.windowKey !== w.key;
    });
    if (stale.length) {
      // One read of the window's sessions, indexed by scope, instead of one query per feed (and the context's).
      const index = await indexSessions(this.store, schoolId, w.from, w.to, slice);
      const ctx = await this.#context(schoolId, version);
      await slice.yield();
      const confirmed: { scope: FeedScope; scopeId: Id; inputs: string }[] = [];
      for (const def of stale) {
        await slice.pause();
        const key = feedKey(def.schoolId, def.scope, def.scopeId);
        const sessions = index.of(def);
        const inputs = this.#inputsOf(def, ctx, w.key, sessions);
        const state = states.get(key);
        if (!opts.force && state && state.inputs === inputs) {
          confirmed.push({ scope: def.scope, scopeId: def.scopeId, inputs });
          // A feed being polled stays in memory, now current for this version.
          const hot = this.#lru.get(key);
          if (hot && hot.inputs === inputs) this.#lru.set(key, { ...hot, dataVersion: version });
          continue;
        }
        const r = await this.#once(key, version, async () => {
          const fresh = await this.#renderFresh(def, version, ctx, w, sessions, inputs, state ?? null, false);
          if (this.#lru.has(key)) this.#remember(key, fresh);
          return fresh;
        });
        result.rendered++;
        result.events += r?.eventCount ?? 0;
        result.bytes += r?.body.length ?? 0;
        await slice.yield();
      }
      // Short transactions: one of thousands of updates would hold the event loop (and the writer) for as long.
      await inBatches(confirmed, slice, (batch) =>
        this.store.markRenderedFeedsCurrent(schoolId, batch, version),
      );
      result.unchanged = confirmed.length;
    }
    this.#schoolCurrent.set(schoolId, mark);
    result.ms = performance.now() - started;
    return result;
  }

  /** Drops what this process holds in memory (all, or one school's); the store's renders stay. */
  invalidate(schoolId?: SchoolId): void {
    for (const key of [...this.#lru.keys()])
      if (!schoolId || key.startsWith(`${schoolId}|`)) this.#forget(key);
    if (schoolId) {
      this.#versions.delete(schoolId);
      this.#schoolCurrent.delete(schoolId);
    } else {
      this.#versions.clear();
      this.#schoolCurrent.clear();
    }
  }
}

/**
 * The window's sessions grouped the way store.listSessions filters them per scope (same semantics: a student
 * gets the sessions listing them plus those of the live teams whose current roster has them). A test checks
 * that both paths render identical bytes.
 */
async function indexSessions(store: Store, schoolId: SchoolId, from: Date, to: Date, slice: TimeSlice) {
  const sessions = await listWindowSessions(store, schoolId, from, to, slice);
  const teams = await store.list(schoolId, 'teams');
  await slice.yield();
  const push = (m: Map<Id, Stored<'sessions'>[]>, id: Id, s: Stored<'sessions'>) => {
    const list = m.get(id);
    if (list) list.push(s);
    else m.set(id, [s]);
  };
  const byTeam = new Map<Id, Stored<'sessions'>[]>();
  const byStaff = new Map<Id, Stored<'sessions'>[]>();
  const byActivity = new Map<Id, Stored<'sessions'>[]>();
  const byStudent = new Map<Id, Stored<'sessions'>[]>();
  for (const s of sessions) {
    await slice.pause();
    for (const t of new Set(s.teams.map((x) => x.id))) push(byTeam, t, s);
    for (const p of new Set(s.staff.map((x) => x.id))) push(byStaff, p, s);
    for (const p of new Set(s.students.map((x) => x.id))) push(byStudent, p, s);
    push(byActivity, s.activity.id, s);
  }
  await slice.yield();
  const teamsOfStudent = new Map<Id, Id[]>();
  for (const t of teams) {
    for (const m of t.students) {
      const list = teamsOfStudent.get(m.studentId);
      if (list) list.push(t.id);
      else teamsOfStudent.set(m.studentId, [t.id]);
    }
  }
  return {
    sessions,
    of(def: FeedDef): Stored<'sessions'>[] {
      switch (def.scope) {
        case 'team':
          return byTeam.get(def.scopeId) ?? [];
        case 'staff':
          return byStaff.get(def.scopeId) ?? [];
        case 'activity':
          return byActivity.get(def.scopeId) ?? [];
        case 'student': {
          const found = new Map<Id, Stored<'sessions'>>();
          for (const s of byStudent.get(def.scopeId) ?? []) found.set(s.id, s);
          for (const teamId of teamsOfStudent.get(def.scopeId) ?? []) {
            for (const s of byTeam.get(teamId) ?? []) found.set(s.id, s);
          }
          return [...found.values()];
        }
      }
    },
  };
}

/** Rows per write transaction of a re-render's bookkeeping (confirmations, deletions). */
const WRITE_BATCH = 250;

async function inBatches<T>(
  items: readonly T[],
  slice: TimeSlice,
  write: (batch: readonly T[]) => Promise<void>,
): Promise<void> {
  for (let i = 0; i < items.length; i += WRITE_BATCH) {
    await write(items.slice(i, i + WRITE_BATCH));
    await slice.yield();
  }
}

/** Sessions per read of the window: about 15 ms of parsing, the longest the event loop waits for one read. */
const SESSIONS_PER_READ = 250;
const MIN_SPAN_MS = 15 * 60_000;

/**
 * store.listSessions(schoolId, { from, to }), read as consecutive sub-windows with the event loop's turn between
 * them: a district's window is 30,000 sessions, two seconds of synchronous reading in one query. Same result, in
 * the same order: a session spanning several sub-windows is kept where it first appears, which is the
 * sub-window of its start (or the first, for one that starts before `from`), and each read is ordered by
 * (start, id). Each sub-window's length adapts to the density of the last one.
 */
async function listWindowSessions(
  store: Store,
  schoolId: SchoolId,
  from: Date,
  to: Date,
  slice: TimeSlice,
): Promise<Stored<'sessions'>[]> {
  const out: Stored<'sessions'>[] = [];
  const seen = new Set<Id>();
  const end = to.getTime();
  let at = from.getTime();
  let span = Math.max(MIN_SPAN_MS, (end - at) / 64);
  while (at < end) {
    const until = Math.min(end, at + span);
    const rows = await store.listSessions(schoolId, {
      from: new Date(at).toISOString(),
      to: new Date(until).toISOString(),
    });
    for (const s of rows) {
      if (seen.has(s.id)) continue;
      seen.add(s.id);
      out.push(s);
    }
    await slice.yield();
    at = until;
    // Grows slowly: the term after a holiday is many times denser than the holiday.
    span = Math.max(
      MIN_SPAN_MS,
      span * Math.min(2, Math.max(0.25, SESSIONS_PER_READ / Math.max(1, rows.length))),
    );
  }
  return out;
}
