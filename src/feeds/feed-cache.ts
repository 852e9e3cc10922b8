// Rendered feeds, cached per (feed, store data version, window day) so that a request costs a lookup: the body
// and its gzip and brotli variants, a strong ETag and a Last-Modified that moves only when the bytes change.
// renderSchool() re-renders every issued feed of a school after a sync so the first request after it is cheap.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, gzip, constants as zlib } from 'node:zlib';
import { loadProjectionContext, type ProjectionContext } from '../calendar/context.ts';
import { projectSession } from '../calendar/project.ts';
import type { EventTemplates } from '../calendar/templates.ts';
import type { CalendarEvent } from '../calendar/types.ts';
import type { Id } from '../domain/types.ts';
import type { FeedScope, SchoolId, Store, Stored } from '../store/types.ts';
import { type FeedDef, getFeedDef, listFeedDefs, sessionQuery } from './catalog.ts';
import { versionFeedEvents } from './event-versions.ts';
import { DEFAULT_MAX_BYTES, renderIcs } from './ics.ts';

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

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
  /** Brotli is made on the first request that wants it (few calendar clients ask for it), then kept. */
  br(): Promise<Buffer>;
  /** Strong validator of the identity body, without quotes; encoded variants append `-gz` / `-br`. */
  etag: string;
  /** When these bytes were first rendered in this process (kept across re-renders that change nothing). */
  lastModified: Date;
  eventCount: number;
  trimmed: number;
  /** The next few events from now, for the landing page. */
  upcoming: CalendarEvent[];
  renderMs: number;
}

export type FeedRenderObserver = (info: {
  scope: FeedScope;
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
}

const DAY = 86_400_000;

function feedKey(schoolId: SchoolId, scope: FeedScope, scopeId: Id): string {
  return `${schoolId}|${scope}|${scopeId}`;
}

export class FeedService {
  readonly store: Store;
  readonly window: FeedWindow;
  readonly #opts: FeedServiceOptions;
  readonly #now: () => Date;
  readonly #cache = new Map<string, RenderedFeed>();
  readonly #inflight = new Map<string, Promise<RenderedFeed | null>>();
  readonly #contexts = new Map<SchoolId, { version: number; ctx: Promise<ProjectionContext> }>();
  readonly #versions = new Map<SchoolId, { at: number; version: Promise<number> }>();
  /** etag → first time seen, so Last-Modified moves only when the bytes do. */
  readonly #firstSeen = new Map<string, { etag: string; at: Date }>();

  constructor(opts: FeedServiceOptions) {
    this.store = opts.store;
    this.#opts = opts;
    this.#now = opts.now ?? (() => new Date());
    this.window = { daysBack: opts.window?.daysBack ?? 30, daysAhead: opts.window?.daysAhead ?? 365 };
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

  async #context(schoolId: SchoolId, version: number): Promise<ProjectionContext> {
    const hit = this.#contexts.get(schoolId);
    if (hit && hit.version === version) return hit.ctx;
    const templates = this.#opts.templates?.(schoolId);
    const owners = this.#opts.locationOwnerIds?.(schoolId);
    const w = this.currentWindow();
    const ctx = loadProjectionContext(this.store, schoolId, {
      window: { from: w.from.toISOString(), to: w.to.toISOString() },
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
    return sessions.flatMap((s) => projectSession(s, ctx, def.audience, scope) ?? []);
  }

  /** Every event of a feed in the current window, projected for its audience (family links combine these). */
  async eventsFor(def: FeedDef): Promise<CalendarEvent[]> {
    const ctx = await this.#context(def.schoolId, await this.#dataVersion(def.schoolId));
    return this.events(def, ctx);
  }

  async #render(def: FeedDef, dataVersion: number, prefetched?: Stored<'sessions'>[]): Promise<RenderedFeed> {
    const started = performance.now();
    const ctx = await this.#context(def.schoolId, dataVersion);
    const w = this.currentWindow();
    const sessions =
      prefetched ??
      (await this.store.listSessions(
        def.schoolId,
        sessionQuery(def.scope, def.scopeId, w.from.toISOString(), w.to.toISOString()),
      ));
    // Everything the bytes depend on. A sync that changed nothing this feed shows keeps its render.
    const inputs = createHash('sha256')
      .update(
        `${ctx.fingerprint ?? Math.random()}|${w.key}|${def.calendarName}|${def.description}|${def.color}|`,
      )
      .update(sessions.map((s) => `${s.id}:${s.meta.version}`).join(','))
      .digest('base64url');
    const previous = this.#cache.get(feedKey(def.schoolId, def.scope, def.scopeId));
    if (previous && previous.inputs === inputs) return { ...previous, dataVersion };
    // SEQUENCE/LAST-MODIFIED as this feed last published them, unless what its audience sees changed.
    const events = await versionFeedEvents(
      this.store,
      def,
      await this.events(def, ctx, sessions),
      this.#now(),
    );
    const ics = renderIcs(
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
    let br: Promise<Buffer> | null = null;
    const brotli = () => {
      br ??= brotliAsync(body, {
        params: {
          [zlib.BROTLI_PARAM_QUALITY]: 5,
          [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
          [zlib.BROTLI_PARAM_SIZE_HINT]: body.length,
        },
      });
      return br;
    };
    const etag = createHash('sha256').update(body).digest('base64url').slice(0, 27);
    const key = feedKey(def.schoolId, def.scope, def.scopeId);
    const seen = this.#firstSeen.get(key);
    // HTTP dates have second precision: truncate so If-Modified-Since round-trips exactly.
    const lastModified =
      seen && seen.etag === etag ? seen.at : new Date(Math.floor(this.#now().getTime() / 1000) * 1000);
    this.#firstSeen.set(key, { etag, at: lastModified });
    const nowIso = this.#now().toISOString();
    const renderMs = performance.now() - started;
    this.#opts.onRender?.({
      scope: def.scope,
      ms: renderMs,
      bytes: body.length,
      events: ics.eventCount,
      trimmed: ics.trimmed,
    });
    return {
      def,
      dataVersion,
      inputs,
      windowKey: w.key,
      body,
      gzip: gz,
      br: brotli,
      etag,
      lastModified,
      eventCount: ics.eventCount,
      trimmed: ics.trimmed,
      upcoming: events
        .filter((e) => e.end >= nowIso)
        .sort((a, b) => a.start.localeCompare(b.start))
        .slice(0, 8),
      renderMs,
    };
  }

  /**
   * The rendered feed, from the cache when the data version and window still match; rendered (once, however
   * many requests arrive meanwhile) otherwise. null when the feed's subject no longer exists.
   */
  async get(schoolId: SchoolId, scope: FeedScope, scopeId: Id): Promise<RenderedFeed | null> {
    const key = feedKey(schoolId, scope, scopeId);
    const version = await this.#dataVersion(schoolId);
    const windowKey = this.#windowKey();
    const hit = this.#cache.get(key);
    if (hit && hit.dataVersion === version && hit.windowKey === windowKey) return hit;
    return this.#renderOnce(key, schoolId, scope, scopeId, version);
  }

  #renderOnce(
    key: string,
    schoolId: SchoolId,
    scope: FeedScope,
    scopeId: Id,
    version: number,
    knownDef?: FeedDef,
    sessions?: Stored<'sessions'>[],
  ): Promise<RenderedFeed | null> {
    const flightKey = `${key}|${version}`;
    const running = this.#inflight.get(flightKey);
    if (running) return running;
    const job = (async () => {
      const def = knownDef ?? (await getFeedDef(this.store, schoolId, scope, scopeId));
      if (!def) {
        this.#cache.delete(key);
        return null;
      }
      const rendered = await this.#render(def, version, sessions);
      this.#cache.set(key, rendered);
      return rendered;
    })().finally(() => this.#inflight.delete(flightKey));
    this.#inflight.set(flightKey, job);
    return job;
  }

  /**
   * Re-renders the school's feeds for its current data version: every feed that has a live token, or every
   * feed of the school with `all`. Call after each sync. Yields to the event loop between feeds.
   */
  async renderSchool(
    schoolId: SchoolId,
    opts: { all?: boolean } = {},
  ): Promise<{ feeds: number; events: number; bytes: number; ms: number; dataVersion: number }> {
    const started = performance.now();
    const version = await this.#dataVersion(schoolId, true);
    const defs = await listFeedDefs(this.store, schoolId);
    let wanted = defs;
    if (!opts.all) {
      const live = new Set(
        (await this.store.listFeedTokens(schoolId))
          .filter((t) => t.revokedAt === null)
          .map((t) => feedKey(t.schoolId, t.scope, t.scopeId)),
      );
      wanted = defs.filter((d) => live.has(feedKey(d.schoolId, d.scope, d.scopeId)));
    }
    const liveKeys = new Set(defs.map((d) => feedKey(d.schoolId, d.scope, d.scopeId)));
    for (const key of this.#cache.keys()) {
      if (key.startsWith(`${schoolId}|`) && !liveKeys.has(key)) this.#cache.delete(key);
    }
    let events = 0;
    let bytes = 0;
    const w = this.currentWindow();
    const windowKey = w.key;
    // One read of the window's sessions, indexed by scope, instead of one query per feed.
    const index = await indexSessions(this.store, schoolId, w.from.toISOString(), w.to.toISOString());
    for (const def of wanted) {
      const key = feedKey(def.schoolId, def.scope, def.scopeId);
      const hit = this.#cache.get(key);
      if (hit && hit.dataVersion === version && hit.windowKey === windowKey) {
        events += hit.eventCount;
        bytes += hit.body.length;
        continue;
      }
      const r = await this.#renderOnce(
        key,
        def.schoolId,
        def.scope,
        def.scopeId,
        version,
        def,
        index.of(def),
      );
      events += r?.eventCount ?? 0;
      bytes += r?.body.length ?? 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return { feeds: wanted.length, events, bytes, ms: performance.now() - started, dataVersion: version };
  }

  /** Drops cached renders (all, or one school's). */
  invalidate(schoolId?: SchoolId): void {
    for (const key of this.#cache.keys())
      if (!schoolId || key.startsWith(`${schoolId}|`)) this.#cache.delete(key);
    if (schoolId) this.#versions.delete(schoolId);
    else this.#versions.clear();
  }
}

/**
 * The window's sessions grouped the way store.listSessions filters them per scope (same semantics: a student
 * gets the sessions listing them plus those of the live teams whose current roster has them). A test checks
 * that both paths render identical bytes.
 */
async function indexSessions(store: Store, schoolId: SchoolId, from: string, to: string) {
  const [sessions, teams] = await Promise.all([
    store.listSessions(schoolId, { from, to }),
    store.list(schoolId, 'teams'),
  ]);
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
    for (const t of new Set(s.teams.map((x) => x.id))) push(byTeam, t, s);
    for (const p of new Set(s.staff.map((x) => x.id))) push(byStaff, p, s);
    for (const p of new Set(s.students.map((x) => x.id))) push(byStudent, p, s);
    push(byActivity, s.activity.id, s);
  }
  const teamsOfStudent = new Map<Id, Id[]>();
  for (const t of teams) {
    for (const m of t.students) {
      const list = teamsOfStudent.get(m.studentId);
      if (list) list.push(t.id);
      else teamsOfStudent.set(m.studentId, [t.id]);
    }
  }
  return {
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
