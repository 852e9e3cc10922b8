// The network side of a resource's turn: every page of its listings (and, for teams of a school with sensitive
// rosters, each team singly), made ready for the store as it arrives. No store transaction is open meanwhile.
import type { Id, Team } from '../../domain/types.ts';
import { prepareRecord } from '../../store/kinds.ts';
import type { ResourceKind, ResourceMap, RunCounts } from '../../store/types.ts';
import type { MalformedRecord, Page } from '../../upstream/api.ts';
import { trusted } from '../../upstream/clock.ts';
import { mapLimit } from '../../util/concurrency.ts';
import { TimeSlice } from '../../util/event-loop.ts';
import type { Listing, ResourceSpec } from '../resources.ts';
import { RecordSpool } from '../spool.ts';
import { clockMemoryOf } from './clock-memory.ts';
import { confirmMissing } from './confirm-missing.ts';
import { isFatal, isNotFound } from './errors.ts';
import type { Fetched, Gathered, ListingTally } from './gathered.ts';
import { withoutSensitive } from './sensitive.ts';
import { type PlannedResource, type ResourceRunContext, zeroCounts } from './types.ts';

/** Error lines kept per resource in the run record; the rest are summarised. */
const MAX_ERROR_LINES = 50;

/** A numeric id for a skipped record, or null when its id itself is unusable. */
function skippedId(m: MalformedRecord): Id | null {
  if (m.id === null) return null;
  const n = Number(m.id);
  return Number.isSafeInteger(n) ? n : null;
}

/** Single-team reads carry what listings leave out (medical conditions, guardians, sort order). */
async function withTeamDetails(
  ctx: ResourceRunContext,
  teams: Team[],
  progress: { done: number; total: number },
): Promise<Team[]> {
  const detailed = await mapLimit(teams, ctx.school.pull.teamConcurrency, async (listed) => {
    try {
      const detail = await ctx.client.team(listed.id);
      return { ...detail, hidden: listed.hidden };
    } catch (err) {
      // Gone between the listing and the read: keep what the listing said; the next full run settles it.
      if (isNotFound(err)) return listed;
      throw err;
    } finally {
      progress.done++;
      ctx.onProgress({ type: 'details', kind: 'teams', done: progress.done, total: progress.total });
    }
  });
  return detailed;
}

/** Where readListings puts what it reads: the resource's counts, its problems, and the download. */
interface ListingSink {
  counts: RunCounts;
  noteError: (line: string) => void;
  onPage: () => void;
  /**
   * The store's hash of each live record: a record arriving with the same hash is not written again. Read once,
   * when first asked: an incremental listing that brings nothing (most of them) makes no read (issue 46).
   */
  stored: () => Promise<Map<Id | string, string>>;
  out: Gathered;
  /** Stable JSON and a hash per record: a page of sessions is a noticeable slice of CPU, shared with the web. */
  slice: TimeSlice;
  detailProgress: { done: number; total: number };
}

/** One listing's count of what it delivered, for listingGap. */
function startTally(out: Gathered, label: string) {
  const tally: ListingTally = { announced: null, received: 0, ids: new Set<Id>(), repeated: 0 };
  out.tallies.push({ label, tally });
  const tallyId = (id: Id) => {
    if (tally.ids.has(id)) tally.repeated++;
    else tally.ids.add(id);
  };
  return { tally, tallyId };
}

async function readListings(
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  updatedAfter: string | undefined,
  sink: ListingSink,
): Promise<void> {
  for (const listing of spec.listings) {
    const source = listing.pages({
      client: ctx.client,
      window: ctx.window,
      ...(updatedAfter ? { updatedAfter } : {}),
    });
    const { tally, tallyId } = startTally(sink.out, listing.label);
    for await (const page of source) {
      sink.onPage();
      if (page.clock) {
        ctx.skew.add(page.clock);
      }
      if (page.clock && trusted(page.clock)) {
        clockMemoryOf(ctx.client).note(page.clock);
        const at = sink.out.listedAt;
        sink.out.listedAt = at === null ? page.clock.date : Math.min(at, page.clock.date);
      }
      // The last page's word stands: a listing that changed while we read it is judged by what it says now.
      tally.announced = page.numRecords;
      tally.received += page.received;
      ctx.onProgress({
        type: 'page',
        kind: spec.kind,
        listing: listing.label,
        page: page.currentPage,
        lastPage: Math.max(page.lastPage, page.currentPage),
        records: page.records.length,
      });
      await takePage(ctx, spec, listing, page, sink, tallyId);
    }
  }
}

/** A page's malformed records are noted, the rest made ready; only those the store lacks are kept. */
async function takePage(
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  listing: Listing,
  page: Page<ResourceMap[ResourceKind]>,
  sink: ListingSink,
  tallyId: (id: Id) => void,
): Promise<void> {
  const { out } = sink;
  for (const bad of page.skipped) {
    sink.counts.skipped++;
    const id = skippedId(bad);
    if (id === null) out.unknownSkipped++;
    else {
      out.seen.add(id);
      out.malformed.add(id);
      tallyId(id);
    }
    sink.noteError(`${spec.kind}: skipped malformed record ${bad.id ?? '(no id)'}: ${bad.reason}`);
  }
  let records = listing.adjust ? page.records.map(listing.adjust) : page.records;
  if (spec.kind === 'teams' && records.length > 0) {
    if (ctx.school.rosters.sensitive) {
      sink.detailProgress.total += records.length;
      records = await withTeamDetails(ctx, records as Team[], sink.detailProgress);
    } else {
      // Whatever an upstream's listing carries, a school without sensitive rosters keeps none of it.
      records = (records as Team[]).map(withoutSensitive);
    }
  }
  for (const meta of page.customFieldsMetadata ?? []) out.customFields.set(meta.key, meta);
  const fresh = [];
  const stored = records.length > 0 ? await sink.stored() : null;
  for (const r of records) {
    await sink.slice.pause();
    const prepared = prepareRecord(spec.kind, r);
    // A listing that repeats a record (pages that overlap) counts it once; a changed one still goes to the
    // write, where its last occurrence wins.
    const repeated = out.seen.has(prepared.key as Id);
    out.seen.add(prepared.key as Id);
    tallyId(prepared.key as Id);
    if (stored?.get(prepared.key) === prepared.hash) {
      if (!repeated) out.unchanged++;
    } else fresh.push(prepared);
  }
  await out.records.add(fresh);
}

/**
 * Custom-field metadata (it comes with every page of sessions) the store already holds unchanged is dropped and
 * counted, like records: an unchanged pull then has nothing of it to write (its upsert read them in the
 * resource's transaction and took the kind's lock, two statements a pull).
 */
async function dropUnchangedCustomFields(ctx: ResourceRunContext, out: Gathered): Promise<void> {
  if (out.customFields.size === 0) return;
  const stored = await ctx.store.records.liveHashes(ctx.school.id, 'customFields');
  for (const [key, meta] of out.customFields) {
    if (stored.get(key) !== prepareRecord('customFields', meta).hash) continue;
    out.customFields.delete(key);
    out.customFieldsUnchanged++;
  }
}

/** Whether the listing returned every record the store held live (confirm-missing.ts, missingFrom). */
function everySeen(stored: ReadonlyMap<Id | string, string>, seen: ReadonlySet<Id>): boolean {
  for (const id of stored.keys()) if (!seen.has(id as Id)) return false;
  return true;
}

function emptyGathered(): Gathered {
  return {
    records: new RecordSpool(),
    seen: new Set<Id>(),
    allSeen: false,
    unchanged: 0,
    unknownSkipped: 0,
    malformed: new Set<Id>(),
    customFields: new Map(),
    customFieldsUnchanged: 0,
    tallies: [],
    confirmations: new Map(),
    listedAt: null,
    askedAfter: null,
    askedAt: Date.now(),
  };
}

/**
 * Reads every page of a resource (and, for teams of a school with sensitive rosters, each team singly) without
 * touching the store's write side: no transaction is open while the upstream answers. Each record is made
 * ready for the store as it arrives (stable JSON and hash, computed while the next page is in flight) and
 * dropped at once when the store already holds it unchanged, so memory holds only what will be written.
 * Never rejects: a failure is in the result, for the resource's turn to write.
 */
export async function fetchResource(
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  updatedAfter: string | undefined,
): Promise<Fetched> {
  const counts = zeroCounts();
  const fetched = { began: Date.now(), pages: 0, errors: [] as string[] };
  const noteError = (line: string) => {
    const { errors } = fetched;
    if (errors.length < MAX_ERROR_LINES) errors.push(line);
    else if (errors.length === MAX_ERROR_LINES) errors.push(`${spec.kind}: further problems not listed`);
  };
  const onPage = () => {
    fetched.pages++;
  };
  const out = emptyGathered();
  out.askedAfter = updatedAfter ?? null;
  try {
    let reading: Promise<Map<Id | string, string>> | undefined;
    const stored = () => (reading ??= ctx.store.records.liveHashes(ctx.school.id, spec.kind));
    // A full listing's snapshot is taken as its download begins: what is live then and not listed is missing
    // (allSeen, confirm-missing.ts); an incremental one's only saves rewriting what is stored unchanged.
    if (!updatedAfter) await stored();
    const sink: ListingSink = {
      counts,
      noteError,
      onPage,
      stored,
      out,
      slice: new TimeSlice(),
      detailProgress: { done: 0, total: 0 },
    };
    await readListings(ctx, spec, updatedAfter, sink);
    // Asked only of a full listing (an incremental one leaves out what did not change).
    out.allSeen = !updatedAfter && everySeen(await stored(), out.seen);
    await dropUnchangedCustomFields(ctx, out);
    if (!updatedAfter && spec.confirm)
      await confirmMissing(ctx, { ...spec, confirm: spec.confirm }, out, noteError);
    return { ...fetched, skipped: counts.skipped, result: { ok: true, download: out } };
  } catch (error) {
    await out.records.close();
    return { ...fetched, skipped: counts.skipped, result: { ok: false, error } };
  }
}

/**
 * Downloads run one resource ahead of the writes: each starts as soon as the one before it has arrived, never
 * waiting for a write, so the upstream's time and the store's overlap; writes still go one resource at a time,
 * in order, each in its own transaction. (Two lanes, sessions from the start beside the rest, measured no faster
 * on SQLite and only slightly faster on PostgreSQL at school scale, for more peak memory.) No download starts once
 * `stopped` says so (a fatal failure, a shutdown); one that did not start resolves to null.
 */
export function startDownloads(
  ctx: ResourceRunContext,
  plan: readonly PlannedResource[],
  stopped: () => boolean,
): Map<ResourceKind, Promise<Fetched | null>> {
  const out = new Map<ResourceKind, Promise<Fetched | null>>();
  let previous: Promise<Fetched | null> = Promise.resolve(null);
  // A fatal failure (unreachable, refused, wrong path) ends the pull: no later download starts in the moment
  // before the writer reads it, or an unreachable service is asked more often than its retries allow.
  let fatal = false;
  for (const step of plan) {
    if (step.mode === 'skipped') continue;
    const next = previous.then((before) => {
      if (before !== null && !before.result.ok && isFatal(before.result.error)) fatal = true;
      return fatal || stopped() ? null : fetchResource(ctx, step.spec, step.updatedAfter);
    });
    out.set(step.spec.kind, next);
    previous = next;
  }
  return out;
}

/** Downloads whose resource was never written (a fatal failure, a shutdown): let go of their spools. */
export function releaseUnwritten(
  downloads: Map<ResourceKind, Promise<Fetched | null>>,
  written: ReadonlySet<ResourceKind>,
): void {
  for (const [kind, fetching] of downloads) {
    if (written.has(kind)) continue;
    void fetching.then((f) => (f?.result.ok ? f.result.download.records.close() : undefined)).catch(() => {});
  }
}
