// The school re-render: after a pull, brings every issued feed of a school (or all, with `all`) to the school's
// current data version. Only feeds whose inputs changed are rendered; the others' stored bytes are confirmed in
// batched writes. Each step is a stretch of synchronous work with the event loop's turn between them (serve runs
// it on a worker thread, school-renderer.ts, or in-process when the worker cannot run).
import type { ProjectionContext } from '../calendar/context.ts';
import type { Id } from '../domain/types.ts';
import type { FeedScope, RenderedFeedState, SchoolId, Store, Stored } from '../store/types.ts';
import { TimeSlice } from '../util/event-loop.ts';
import { type FeedDef, listFeedDefs } from './feed-defs.ts';
import { ScopeIndex, type TeamRosters } from './feed-scope.ts';
import { feedKey, type RenderedFeed, type RenderedFeedStore } from './rendered-feed-store.ts';

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
  /** No pass ran: the store's mark says the last one left these feeds current (same data, day and tokens). */
  skipped: boolean;
}

type Window = { from: Date; to: Date; key: string };

/** What the pass uses of the feed service (feed-service.ts): its clock, versions, contexts, and rendering. */
export interface SchoolRerenderParts {
  store: Pick<Store, 'records' | 'feeds' | 'links'>;
  rendered: RenderedFeedStore;
  dataVersion(schoolId: SchoolId, fresh: boolean): Promise<number>;
  context(schoolId: SchoolId, version: number): Promise<ProjectionContext>;
  currentWindow(): Window;
  inputsOf(
    def: FeedDef,
    ctx: ProjectionContext,
    windowKey: string,
    sessions: readonly Stored<'sessions'>[],
  ): string;
  renderFresh(
    def: FeedDef,
    version: number,
    ctx: ProjectionContext,
    w: Window,
    sessions: Stored<'sessions'>[],
    inputs: string,
    previous: { etag: string; lastModified: string } | null,
    forRequest: boolean,
  ): Promise<RenderedFeed>;
}

export class SchoolRerender {
  readonly #parts: SchoolRerenderParts;

  constructor(parts: SchoolRerenderParts) {
    this.#parts = parts;
  }

  /**
   * What a pass over the school would be made for now: its data version, the window's day and the state of its
   * feed tokens (which feeds are issued). A pass that ended stores it (with what it selected), so a later pull
   * that changed none of them, on any replica, starts no pass. Read from the store alone: a replica's memory
   * may be behind another's writes. The configuration (wording, window size) is not in it: a pass renders only
   * feeds whose data version or day moved, so one whose configuration alone changed rendered nothing before.
   */
  async #markOf(schoolId: SchoolId): Promise<{ version: number; w: Window; mark: string }> {
    const p = this.#parts;
    const version = await p.dataVersion(schoolId, true);
    const w = p.currentWindow();
    const tokens = await p.store.links.feedTokensMark(schoolId);
    return { version, w, mark: `${version}|${w.key}|${tokens}` };
  }

  /** Whether the last pass stored left the school's feeds current for what a pass would be made for now. */
  async #isCurrent(schoolId: SchoolId, mark: string, all: boolean | undefined): Promise<boolean> {
    const stored = await this.#parts.store.feeds.renderPassMark(schoolId);
    // A pass over every feed covers one over the issued ones.
    return stored === `${mark}|all` || (!all && stored === `${mark}|live`);
  }

  /**
   * A skipped pass's result when a pass would find nothing to do (never with `force`), else null: serve asks
   * before it starts a worker for one.
   */
  async skipped(
    schoolId: SchoolId,
    opts: { all?: boolean; force?: boolean } = {},
  ): Promise<RenderSchoolResult | null> {
    if (opts.force) return null;
    const started = performance.now();
    const { version, mark } = await this.#markOf(schoolId);
    if (!(await this.#isCurrent(schoolId, mark, opts.all))) return null;
    return { ...emptyResult(version), skipped: true, ms: performance.now() - started };
  }

  /**
   * Brings the school's feeds up to its current data version: every feed that has a live token, or every feed
   * of the school with `all`. Only feeds whose inputs changed are rendered; the others' stored bytes are
   * confirmed in one write. What the last pass left current (#markOf) costs three small reads. `force` renders
   * every selected feed (benchmarks: the worst case). Call after each sync; yields between renders.
   */
  async run(schoolId: SchoolId, opts: { all?: boolean; force?: boolean } = {}): Promise<RenderSchoolResult> {
    const p = this.#parts;
    const started = performance.now();
    const { version, w, mark } = await this.#markOf(schoolId);
    const result = emptyResult(version);
    if (!opts.force && (await this.#isCurrent(schoolId, mark, opts.all))) {
      result.skipped = true;
      result.ms = performance.now() - started;
      return result;
    }
    // Each step below is one stretch of synchronous work (node:sqlite reads, JSON, hashing): the web server in
    // this process gets the event loop between them, and inside the long ones.
    const slice = new TimeSlice();
    const defs = await listFeedDefs(p.store, schoolId);
    await slice.yield();
    let wanted = defs;
    if (!opts.all) {
      const live = new Set(
        (await p.store.links.listFeedTokens(schoolId))
          .filter((t) => t.revokedAt === null)
          .map((t) => feedKey(t.schoolId, t.scope, t.scopeId)),
      );
      wanted = defs.filter((d) => live.has(feedKey(d.schoolId, d.scope, d.scopeId)));
    }
    result.feeds = wanted.length;
    await slice.yield();
    const states = new Map<string, RenderedFeedState>();
    // Family calendars are rendered on request (feeds/family.ts), from their members' renders.
    for (const s of await p.store.feeds.listRenderedFeedStates(schoolId))
      if (s.scope !== 'family') states.set(feedKey(schoolId, s.scope, s.scopeId), s);
    await slice.yield();
    // Feeds whose subject is gone lose their stored bytes.
    const liveKeys = new Set(defs.map((d) => feedKey(d.schoolId, d.scope, d.scopeId)));
    const gone = [...states.entries()].filter(([k]) => !liveKeys.has(k)).map(([, s]) => s);
    await inBatches(gone, slice, (batch) => p.store.feeds.deleteRenderedFeeds(schoolId, batch));
    for (const key of p.rendered.keys())
      if (key.startsWith(`${schoolId}|`) && !liveKeys.has(key)) p.rendered.forget(key);

    const stale = wanted.filter((d) => {
      const s = states.get(feedKey(d.schoolId, d.scope, d.scopeId));
      return opts.force || !s || s.dataVersion !== version || s.windowKey !== w.key;
    });
    if (stale.length) {
      // One read of the window's sessions, grouped by scope, instead of one query per feed.
      const ctx = await p.context(schoolId, version);
      await slice.yield();
      const index = await indexSessions(p.store, schoolId, w, ctx.teamStudents, slice);
      const confirmed: { scope: FeedScope; scopeId: Id; inputs: string }[] = [];
      for (const def of stale) {
        await slice.pause();
        const key = feedKey(def.schoolId, def.scope, def.scopeId);
        const sessions = index.of(def.scope, def.scopeId);
        const inputs = p.inputsOf(def, ctx, w.key, sessions);
        const state = states.get(key);
        if (!opts.force && state && state.inputs === inputs) {
          confirmed.push({ scope: def.scope, scopeId: def.scopeId, inputs });
          // A feed being polled stays in memory, now current for this version.
          const hot = p.rendered.peek(key);
          if (hot && hot.inputs === inputs) p.rendered.remember(key, { ...hot, dataVersion: version });
          continue;
        }
        const r = await p.rendered.once(key, version, async () => {
          const fresh = await p.renderFresh(def, version, ctx, w, sessions, inputs, state ?? null, false);
          if (p.rendered.peek(key)) p.rendered.remember(key, fresh);
          return fresh;
        });
        result.rendered++;
        result.events += r?.eventCount ?? 0;
        result.bytes += r?.body.length ?? 0;
        await slice.yield();
      }
      // Short transactions: one of thousands of updates would hold the event loop (and the writer) for as long.
      await inBatches(confirmed, slice, (batch) =>
        p.store.feeds.markRenderedFeedsCurrent(schoolId, batch, version),
      );
      result.unchanged = confirmed.length;
    }
    // Made for what it read at its start: a pull or a token issued meanwhile leaves the mark behind, and the
    // next pass runs. Only a hint, so a store that refuses it fails nothing: the next pass runs too.
    await p.store.feeds.saveRenderPassMark(schoolId, `${mark}|${opts.all ? 'all' : 'live'}`).catch(() => {});
    result.ms = performance.now() - started;
    return result;
  }
}

function emptyResult(dataVersion: number): RenderSchoolResult {
  return { feeds: 0, rendered: 0, unchanged: 0, events: 0, bytes: 0, ms: 0, dataVersion, skipped: false };
}

/** The window's sessions grouped by the scopes that include them (feed-scope.ts), with the loop's turns between. */
async function indexSessions(
  store: Pick<Store, 'records'>,
  schoolId: SchoolId,
  w: Window,
  rosters: TeamRosters,
  slice: TimeSlice,
): Promise<ScopeIndex> {
  const index = new ScopeIndex(rosters);
  for (const s of await listWindowSessions(store, schoolId, w.from, w.to, slice)) {
    await slice.pause();
    index.add(s);
  }
  await slice.yield();
  return index;
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
  store: Pick<Store, 'records'>,
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
    const rows = await store.records.listSessions(schoolId, {
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
