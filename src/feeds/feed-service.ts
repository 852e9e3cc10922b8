// The feed service: a feed's bytes for a request, kept per (feed, store data version, window day) so that a
// request costs a lookup. It decides when a feed is rendered again (what it is made from changed: the
// projection context, the window, its sessions and their versions) and projects and versions its events; the
// renderer (feed-renderer.ts) makes the bytes, the rendered-feed store (rendered-feed-store.ts) keeps them, and
// the school re-render (school-rerender.ts) brings a school's feeds current after a pull.
import { createHash } from 'node:crypto';
import { loadProjectionContext, type ProjectionContext } from '../calendar/context.ts';
import { sayFeedTexts } from '../calendar/gate.ts';
import { projectSession } from '../calendar/project.ts';
import type { EventTemplates } from '../calendar/templates.ts';
import type { CalendarEvent } from '../calendar/types.ts';
import type { Id } from '../domain/types.ts';
import type { FeedScope, SchoolId, Store, Stored } from '../store/types.ts';
import { isStoreUnreachable, StoreUnreachableError } from '../store/unreachable.ts';
import { TimeSlice } from '../util/event-loop.ts';
import { versionFeedEvents } from './event-versions.ts';
import { type FeedDef, getFeedDef } from './feed-defs.ts';
import { httpInstant, renderFeedBytes } from './feed-renderer.ts';
import { candidateQuery, inScope } from './feed-scope.ts';
import { feedKey, type RenderedFeed, RenderedFeedStore } from './rendered-feed-store.ts';
import { type RenderSchoolResult, SchoolRerender } from './school-rerender.ts';

export type { RenderedFeed } from './rendered-feed-store.ts';
export type { RenderSchoolResult } from './school-rerender.ts';

export interface FeedWindow {
  /** Days before today (school-independent UTC day) that a feed still shows. Default 30. */
  daysBack: number;
  /** Days after today. Default 365. */
  daysAhead: number;
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
  store: Pick<Store, 'records' | 'feeds' | 'links'>;
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

const DAY = 86_400_000;

/** The feed's own texts as its audience may read them (the projection's gate, calendar/gate.ts). */
function saidDef(def: FeedDef, ctx: ProjectionContext): FeedDef {
  return sayFeedTexts(def, ctx, def.audience, { scope: def.scope, id: def.scopeId });
}

export class FeedService {
  readonly store: Pick<Store, 'records' | 'feeds'>;
  readonly window: FeedWindow;
  readonly #opts: FeedServiceOptions;
  readonly #now: () => Date;
  readonly #rendered: RenderedFeedStore;
  readonly #rerender: SchoolRerender;
  /** Per school, how many holds are on its renders (see holdRenders). */
  readonly #held = new Map<SchoolId, number>();
  readonly #contexts = new Map<SchoolId, { version: number; ctx: Promise<ProjectionContext> }>();
  readonly #versions = new Map<SchoolId, { at: number; version: Promise<number> }>();

  constructor(opts: FeedServiceOptions) {
    this.store = opts.store;
    this.#opts = opts;
    this.#now = opts.now ?? (() => new Date());
    this.window = { daysBack: opts.window?.daysBack ?? 30, daysAhead: opts.window?.daysAhead ?? 365 };
    this.#rendered = new RenderedFeedStore({
      store: opts.store,
      cacheBytes: opts.cacheBytes ?? 32 * 1024 * 1024,
      ...(opts.onRequestWrite ? { onRequestWrite: opts.onRequestWrite } : {}),
    });
    this.#rerender = new SchoolRerender({
      store: opts.store,
      rendered: this.#rendered,
      dataVersion: (schoolId, fresh) => this.#dataVersion(schoolId, fresh),
      context: (schoolId, version) => this.#context(schoolId, version),
      currentWindow: () => this.currentWindow(),
      inputsOf: (def, ctx, windowKey, sessions) => this.#inputsOf(def, ctx, windowKey, sessions),
      renderFresh: (...args) => this.#renderFresh(...args),
    });
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
    const version = this.store.records.dataVersion(schoolId);
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
    const sessions = prefetched ?? (await this.#sessionsOf(def.schoolId, def.scope, def.scopeId, ctx, w));
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

  /** Bytes and feeds held in memory now (for tests and benchmarks). */
  cacheStats(): { feeds: number; bytes: number } {
    return this.#rendered.stats();
  }

  // --- rendering

  /** One feed's sessions in the window: its candidates read through the store's indexes, kept by feed-scope.ts. */
  async #sessionsOf(
    schoolId: SchoolId,
    scope: FeedScope,
    scopeId: Id,
    ctx: ProjectionContext,
    w: { from: Date; to: Date },
  ): Promise<Stored<'sessions'>[]> {
    const candidates = await this.store.records.listSessions(
      schoolId,
      candidateQuery(scope, scopeId, w.from.toISOString(), w.to.toISOString()),
    );
    return inScope(scope, scopeId, candidates, ctx.teamStudents);
  }

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

  /** A write a request makes to spare later requests work: a refusal is told (onRequestWrite), not thrown. */
  spare(write: () => Promise<void>): Promise<void> {
    return this.#rendered.spare(write);
  }

  /** How a request's write went (null: written), for readiness (onRequestWrite). */
  toldOfRequestWrite(err: unknown): void {
    this.#rendered.toldOfRequestWrite(err);
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
    const bytes = await renderFeedBytes(
      {
        name: def.calendarName,
        description: def.description,
        timeZone: ctx.school.timeZone,
        color: def.color,
        window: w,
        ...(this.#opts.refreshSeconds ? { refreshSeconds: this.#opts.refreshSeconds } : {}),
        ...(this.#opts.maxBytes ? { maxBytes: this.#opts.maxBytes } : {}),
      },
      events,
      this.#now,
    );
    const { body, etag } = bytes;
    // Last-Modified moves only when the bytes do; the stored one survives restarts.
    const lastModified =
      previous && previous.etag === etag ? new Date(previous.lastModified) : httpInstant(this.#now());
    await this.#rendered.save(
      {
        schoolId: def.schoolId,
        scope: def.scope,
        scopeId: def.scopeId,
        dataVersion: version,
        windowKey: w.key,
        inputs,
        etag,
        lastModified: lastModified.toISOString(),
        gzip: bytes.gzip,
        br: null,
        eventCount: bytes.eventCount,
        trimmed: bytes.trimmed,
        upcoming: JSON.stringify(bytes.upcoming),
        def: JSON.stringify(def),
        renderedAt: this.#now().toISOString(),
      },
      forRequest,
    );
    const renderMs = performance.now() - started;
    this.#opts.onRender?.({
      schoolId: def.schoolId,
      scope: def.scope,
      scopeId: def.scopeId,
      ms: renderMs,
      bytes: body.length,
      events: bytes.eventCount,
      trimmed: bytes.trimmed,
    });
    return {
      def,
      dataVersion: version,
      inputs,
      windowKey: w.key,
      ...bytes,
      br: this.#rendered.brotli(def, etag, body, null),
      lastModified,
      renderMs,
    };
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
   * While the store cannot be reached: the render held in memory, whatever its version, else StoreUnreachableError.
   */
  async get(schoolId: SchoolId, scope: FeedScope, scopeId: Id): Promise<RenderedFeed | null> {
    try {
      return await this.#get(schoolId, scope, scopeId);
    } catch (err) {
      if (!isStoreUnreachable(err)) throw err;
      // The store cannot be reached: the render this process last served, as it was (bytes, ETag), else 503.
      const hit = this.#rendered.recall(feedKey(schoolId, scope, scopeId));
      if (hit) return hit;
      throw new StoreUnreachableError(err);
    }
  }

  async #get(schoolId: SchoolId, scope: FeedScope, scopeId: Id): Promise<RenderedFeed | null> {
    const key = feedKey(schoolId, scope, scopeId);
    const version = await this.#dataVersion(schoolId);
    const windowKey = this.#windowKey();
    const hit = this.#rendered.recall(key);
    if (hit && hit.dataVersion === version && hit.windowKey === windowKey) return hit;
    const held = this.#held.has(schoolId);
    if (held && hit && hit.windowKey === windowKey) return hit;
    return this.#rendered.once(key, version, async () => {
      const stored = await this.store.feeds.getRenderedFeed(schoolId, scope, scopeId);
      if (stored && stored.windowKey === windowKey && (stored.dataVersion === version || held)) {
        const def = JSON.parse(stored.def) as FeedDef;
        return this.#rendered.remember(key, await this.#rendered.fromRecord(def, stored, stored.dataVersion));
      }
      // A context already made for this version names the school: the definition need not read every school
      // in the store for it (500 rows, for each feed's first render, on a fleet replica).
      const made = this.#contexts.get(schoolId);
      const known = made?.version === version ? (await made.ctx.catch(() => null))?.school : undefined;
      const def = await getFeedDef(this.store, schoolId, scope, scopeId, known);
      if (!def) {
        this.#rendered.forget(key);
        return null;
      }
      const ctx = await this.#context(schoolId, version);
      const w = this.currentWindow();
      const sessions = await this.#sessionsOf(schoolId, scope, scopeId, ctx, w);
      const inputs = this.#inputsOf(def, ctx, w.key, sessions);
      if (stored && stored.inputs === inputs) {
        await this.spare(() =>
          this.store.feeds.markRenderedFeedsCurrent(schoolId, [{ scope, scopeId, inputs }], version),
        );
        // Still in memory from an earlier version: the same bytes, nothing to unzip.
        if (hit && hit.inputs === inputs)
          return this.#rendered.remember(key, { ...hit, dataVersion: version });
        return this.#rendered.remember(
          key,
          await this.#rendered.fromRecord(saidDef(def, ctx), stored, version),
        );
      }
      return this.#rendered.remember(
        key,
        await this.#renderFresh(def, version, ctx, w, sessions, inputs, stored, true),
      );
    });
  }

  /**
   * Brings the school's feeds up to its current data version: every feed that has a live token, or every feed
   * of the school with `all` (school-rerender.ts). Call after each sync.
   */
  renderSchool(
    schoolId: SchoolId,
    opts: { all?: boolean; force?: boolean } = {},
  ): Promise<RenderSchoolResult> {
    return this.#rerender.run(schoolId, opts);
  }

  /**
   * renderSchool's result when it would find the school's feeds current (nothing they depend on changed since
   * its last pass, on any replica), without starting one; null when a pass has work to do.
   */
  skippedRender(
    schoolId: SchoolId,
    opts: { all?: boolean; force?: boolean } = {},
  ): Promise<RenderSchoolResult | null> {
    return this.#rerender.skipped(schoolId, opts);
  }

  /** Drops what this process holds in memory (all, or one school's); the store's renders stay. */
  invalidate(schoolId?: SchoolId): void {
    for (const key of this.#rendered.keys())
      if (!schoolId || key.startsWith(`${schoolId}|`)) this.#rendered.forget(key);
    if (schoolId) this.#versions.delete(schoolId);
    else this.#versions.clear();
  }
}
