// The pull: upstream → store snapshot for one school, recorded as a sync run.
//
// Each resource is first downloaded whole (no store transaction is open while the upstream answers, so readers
// and other writers never wait on the network), then written in one short transaction of bulk statements, so a
// run that fails half-way leaves every resource either fully updated or exactly as it was. What the download
// holds is only what will be written: records the store already holds unchanged are dropped as they arrive, and
// the rest wait in a spool (spool.ts) that moves to a private temporary file past a few megabytes, so the pull's
// memory does not grow with the school; the write takes them back in chunks.
// Full runs read everything in the window and mark what is gone as deleted, unless the deletion guard objects;
// incremental runs ask only for what changed since the resource's cursor and re-read reference data when due.

import { setTimeout as sleep } from 'node:timers/promises';
import type { SchoolConfig } from '../config.ts';
import type { Id, Instant, Team } from '../domain/types.ts';
import { keepAlive, processOwner } from '../jobs/heartbeat.ts';
import type { PullKind, PullSummary, ResourceMode, ResourceOutcome } from '../jobs/pull-summary.ts';
import { type SyncWindow, syncWindow } from '../jobs/window.ts';
import { type Logger, silentLogger } from '../log.ts';
import { prepareRecord } from '../store/kinds.ts';
import type {
  ResourceKind,
  ResourceMap,
  RunCounts,
  RunProgress,
  RunStatus,
  Store,
  SyncRun,
} from '../store/types.ts';
import type { EndpointStats, MalformedRecord, UpstreamClient } from '../upstream/api.ts';
import { UnreachableError, UpstreamError } from '../upstream/errors.ts';
import { mapLimit } from '../util/concurrency.ts';
import { TimeSlice } from '../util/event-loop.ts';
import { deletionGuard } from './deletion-guard.ts';
import { type Presence, RESOURCES, type ResourceSpec } from './resources.ts';
import { RecordSpool } from './spool.ts';
import { explainUpstreamFailure, isWrongPath } from './upstream-hint.ts';

export type PullProgress =
  | {
      type: 'start';
      schoolId: string;
      kind: PullKind;
      resources: { kind: ResourceKind; mode: ResourceMode }[];
    }
  | { type: 'resource'; kind: ResourceKind; mode: ResourceMode }
  | { type: 'page'; kind: ResourceKind; listing: string; page: number; lastPage: number; records: number }
  | { type: 'details'; kind: ResourceKind; done: number; total: number }
  | { type: 'resource-done'; kind: ResourceKind; outcome: ResourceOutcome }
  | { type: 'done'; summary: PullSummary };

export interface PullOptions {
  store: Store;
  client: UpstreamClient;
  school: SchoolConfig;
  kind: PullKind;
  now?: () => Date;
  onProgress?: (event: PullProgress) => void;
  log?: Logger;
  /**
   * When another process (or replica) is pulling this school: `fail` (default) throws PullBusyError at once;
   * a number waits up to that many milliseconds for it to finish, then throws; `queue` waits until it ends (or
   * `signal` aborts).
   */
  whenBusy?: 'fail' | number | 'queue';
  /**
   * This pull answers the full-pull request made at this instant (Store.requestFullPull): when a full pull that
   * started since has satisfied it by the time this one holds the lease, it throws PullNotNeededError instead.
   */
  answers?: Instant;
  /** Called once the run is recorded, before anything is read (after any wait for another pull). */
  onStart?: (run: { runId: number; kind: PullKind }) => void | Promise<void>;
  /** Called once while waiting for another pull of the school to end. */
  onWait?: (holder: { owner: string; since: Instant }) => void;
  /**
   * Aborting it (a stop of the process) ends the pull at once: the run is recorded as interrupted and
   * pullSchool throws PullInterruptedError. What a resource already committed stays; the rest is read next time.
   */
  signal?: AbortSignal;
  /**
   * Stores what the pulled data becomes for readers (serve: the school's feed renders), after the resources and
   * before the run is recorded: when it throws, the run is recorded failed with its message, never succeeded
   * (a full disk took the snapshot's few changed rows and refused the renders). Not called for a failed pull.
   */
  storeOutputs?: () => Promise<void>;
}

/** The pull was stopped from outside (a shutdown) and its run recorded as interrupted. */
export class PullInterruptedError extends Error {
  /** The run recorded as interrupted, or null when the pull was stopped before it recorded one. */
  readonly runId: number | null;
  constructor(schoolId: string, why: string, runId: number | null) {
    super(`the pull of ${schoolId} was interrupted: ${why}`);
    this.name = 'PullInterruptedError';
    this.runId = runId;
  }
}

function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  return r instanceof Error ? r.message : typeof r === 'string' ? r : 'stopped';
}

/** Settles with `work`, or rejects as soon as `signal` aborts (the work is left to settle on its own). */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A full pull asked for was already run by another pull (see PullOptions.answers): nothing left to do. */
export class PullNotNeededError extends Error {
  /** The full run that did it, when it can be named. */
  readonly run: SyncRun | null;
  constructor(schoolId: string, run: SyncRun | null) {
    super(
      run
        ? `full pull #${run.id} of ${schoolId} (${run.owner ?? 'another process'}, started ${run.startedAt}), which began after this fire`
        : `a full pull of ${schoolId} that began after this fire`,
    );
    this.name = 'PullNotNeededError';
    this.run = run;
  }
}

/** Another process holds the school's pull lease: at most one pull of a school runs at a time. */
export class PullBusyError extends Error {
  readonly schoolId: string;
  readonly holder: { owner: string; since: Instant };
  constructor(schoolId: string, holder: { owner: string; since: Instant }) {
    super(`a pull of ${schoolId} is already running (${holder.owner}, since ${holder.since})`);
    this.name = 'PullBusyError';
    this.schoolId = schoolId;
    this.holder = holder;
  }
}

const LEASE_POLL_MS = 1_000;
const LEGACY_RUN_MS = 2 * 3_600_000;

/** Records per bulk write inside a resource's transaction, and their text (a session: ~1 KB; a team: several). */
const WRITE_CHUNK = { records: 2_000, chars: 2_000_000 };

/** Error lines kept per resource in the run record; the rest are summarised. */
const MAX_ERROR_LINES = 50;

const zeroCounts = (): RunCounts => ({ added: 0, changed: 0, deleted: 0, unchanged: 0, skipped: 0 });

const cursorKey = (kind: ResourceKind) => `updatedAfter:${kind}`;
/** Whether the stored teams carry medical and guardian data ('on') or not ('off'): see school.rosters.sensitive. */
const SENSITIVE_KEY = 'rosters:sensitive';
const refreshKey = (kind: ResourceKind) => `refreshedAt:${kind}`;

/** 401/403 and an unreachable service will not get better by trying the next resource. */
function isFatal(err: unknown): boolean {
  // A listing answering 404 means the URL's path is wrong: every other listing would answer the same.
  if (err instanceof UnreachableError || isWrongPath(err)) return true;
  const status = (err as { status?: unknown } | null)?.status;
  return status === 401 || status === 403;
}

function isNotFound(err: unknown): boolean {
  return (err as { status?: unknown } | null)?.status === 404;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function diffStats(after: EndpointStats, before: EndpointStats): EndpointStats {
  return {
    requests: after.requests - before.requests,
    retries: after.retries - before.retries,
    throttled: after.throttled - before.throttled,
    errors: after.errors - before.errors,
  };
}

/** A numeric id for a skipped record, or null when its id itself is unusable. */
function skippedId(m: MalformedRecord): Id | null {
  if (m.id === null) return null;
  const n = Number(m.id);
  return Number.isSafeInteger(n) ? n : null;
}

interface ListingTally {
  /** `numRecords` of the listing's last page read (null: no page arrived). */
  announced: number | null;
  /** Records the pages carried, malformed ones included. */
  received: number;
  ids: Set<Id>;
  /** Records that came a second time (pages that overlap: the records pushed out are missing instead). */
  repeated: number;
}

/**
 * Why a listing cannot be the whole truth, or null. An upstream that reports one page too few, or whose pages
 * shift while being read, still answers 200 on every page; only its own count gives it away.
 */
export function listingGap(label: string, t: ListingTally): string | null {
  if (t.announced === null) return null;
  const distinct = t.received - t.repeated;
  if (distinct === t.announced && t.repeated === 0) return null;
  const parts: string[] = [];
  const n = (x: number) => x.toLocaleString('en');
  if (distinct < t.announced) parts.push(`${n(t.announced - distinct)} missing`);
  if (distinct > t.announced) parts.push(`${n(distinct - t.announced)} more than announced`);
  if (t.repeated > 0) parts.push(`${n(t.repeated)} repeated`);
  return (
    `the ${label} listing is incomplete: it announced ${n(t.announced)} records and delivered ` +
    `${n(distinct)} distinct (${parts.join(', ')})`
  );
}

/** Runs of the school whose process died (they read as interrupted) are closed as such, for good. */
async function closeInterruptedRuns(store: Store, schoolId: string, now: Date, log: Logger) {
  const runs = await store.runs.listRuns(schoolId, { limit: 20 });
  for (const run of runs) {
    // Runs recorded before runs had owners can only be judged by their age.
    const legacy =
      run.status === 'running' && !run.owner && now.getTime() - Date.parse(run.startedAt) > LEGACY_RUN_MS;
    if (!legacy && (run.status !== 'interrupted' || run.finishedAt !== null)) continue;
    await store.runs.finishRun(run.id, {
      status: 'interrupted',
      finishedAt: now.toISOString(),
      counts: run.counts,
      upstreamRequests: run.upstreamRequests,
      retries: run.retries,
      throttled: run.throttled,
      errors: [...run.errors, `interrupted: the process running it (${run.owner ?? 'unknown'}) stopped`],
      warning: run.warning,
    });
    log.warn({ runId: run.id, schoolId, owner: run.owner }, 'closed a run whose process stopped');
  }
}

/** Whether `serve` should pull the school at start-up: never completed a full pull, or the last pull died. */
export async function needsStartupPull(store: Store, schoolId: string): Promise<boolean> {
  if (!(await hadCompleteFullRun(store, schoolId))) return true;
  const last = (await store.runs.listRuns(schoolId, { limit: 10 })).find((r) => r.kind !== 'push');
  return last?.status === 'interrupted';
}

async function takeLease(
  store: Store,
  schoolId: string,
  opts: Pick<PullOptions, 'whenBusy' | 'onWait' | 'signal'>,
): Promise<string> {
  const owner = processOwner().id;
  const deadline =
    opts.whenBusy === 'queue'
      ? Number.POSITIVE_INFINITY
      : typeof opts.whenBusy === 'number'
        ? Date.now() + opts.whenBusy
        : 0;
  let told = false;
  for (;;) {
    const lease = await store.runs.acquirePullLease(schoolId, owner, new Date().toISOString());
    if (lease.acquired) return lease.token;
    if (Date.now() >= deadline) throw new PullBusyError(schoolId, lease.holder);
    if (!told) opts.onWait?.(lease.holder);
    told = true;
    try {
      await sleep(LEASE_POLL_MS, undefined, opts.signal ? { signal: opts.signal } : {});
    } catch {
      // Stopped while waiting: no run was recorded, and a full-pull request stays for the next pull.
      throw new PullInterruptedError(schoolId, abortReason(opts.signal!), null);
    }
  }
}

async function hadCompleteFullRun(store: Store, schoolId: string): Promise<boolean> {
  const runs = await store.runs.listRuns(schoolId, { kind: 'full', limit: 50 });
  return runs.some((r: SyncRun) => r.status === 'succeeded' || r.status === 'suspicious');
}

interface ResourceRunContext {
  store: Store;
  client: UpstreamClient;
  school: SchoolConfig;
  window: SyncWindow;
  startedAt: Date;
  now: () => Date;
  onProgress: (event: PullProgress) => void;
  log: Logger;
}

interface ResourceResult {
  outcome: ResourceOutcome;
  errors: string[];
  warning: string | null;
  /** Custom-field metadata arrives with sessions and is stored as its own kind. */
  extra?: { kind: ResourceKind; counts: RunCounts };
  /** The failure will repeat for every resource (bad token): stop the run. */
  fatal?: boolean;
}

async function decideMode(
  store: Store,
  school: SchoolConfig,
  spec: ResourceSpec,
  runKind: PullKind,
  now: Date,
): Promise<{ mode: ResourceMode; updatedAfter?: string }> {
  if (runKind === 'full') return { mode: 'full' };
  // Sensitive rosters turned on or off since the teams were stored: every team is read (and rewritten) again.
  if (spec.kind === 'teams' && (await sensitiveChanged(store, school))) return { mode: 'full' };
  if (spec.incremental) {
    const cursor = await store.records.getCursor(school.id, cursorKey(spec.kind));
    // No cursor: this resource never completed a listing; read it whole.
    return cursor ? { mode: 'incremental', updatedAfter: cursor } : { mode: 'full' };
  }
  const refreshed = await store.records.getCursor(school.id, refreshKey(spec.kind));
  const due =
    !refreshed || now.getTime() - Date.parse(refreshed) >= school.pull.referenceRefreshMinutes * 60_000;
  return { mode: due ? 'full' : 'skipped' };
}

async function sensitiveChanged(store: Store, school: SchoolConfig): Promise<boolean> {
  return (
    (await store.records.getCursor(school.id, SENSITIVE_KEY)) !== (school.rosters.sensitive ? 'on' : 'off')
  );
}

/** A team as a school without sensitive rosters keeps it: no medical conditions, guardians or absence marks. */
export function withoutSensitive(team: Team): Team {
  return {
    ...team,
    students: team.students.map(({ absentToday: _a, absentReason: _r, ...m }) => ({
      ...m,
      medicalConditions: [],
      guardians: [],
    })),
  };
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

/** What a resource's download gathered: everything its write needs, and nothing the store already holds. */
interface Download {
  /** New or changed records, made ready for the store (unchanged ones are only counted and remembered). */
  records: RecordSpool;
  /** Ids the listing returned (including malformed records whose id is known). */
  seen: Set<Id>;
  /** Records whose hash matched the store's when they arrived. */
  unchanged: number;
  /** Malformed records without a usable id: the listing cannot prove anything is gone. */
  unknownSkipped: number;
  /** Ids of malformed records: seen, but their stored records were left as they were. */
  malformed: Set<Id>;
  customFields: Map<string, ResourceMap['customFields']>;
  /** Per listing: what it announced against what it delivered (see listingGap). */
  tallies: { label: string; tally: ListingTally }[];
  /**
   * What single reads said of the records a complete full listing left out (`gone`: 404; `unknown`: no answer;
   * `unasked`: the reads already showed the listing leaving out records that exist, so it was not trusted).
   */
  confirmations: Map<Id, Confirmation>;
}

/** Where readListings puts what it reads: the resource's counts, its problems, and the download. */
interface ListingSink {
  counts: RunCounts;
  noteError: (line: string) => void;
  onPage: () => void;
  /** The store's hash of each live record: a record arriving with the same hash is not written again. */
  stored: Map<Id | string, string>;
  out: Download;
}

async function readListings(
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  updatedAfter: string | undefined,
  sink: ListingSink,
): Promise<void> {
  const { counts, noteError, onPage, stored, out } = sink;
  const detailProgress = { done: 0, total: 0 };
  // Stable JSON and a hash per record: a page of sessions is ~50 ms of it, shared with the web server.
  const slice = new TimeSlice();
  for (const listing of spec.listings) {
    const source = listing.pages({
      client: ctx.client,
      window: ctx.window,
      ...(updatedAfter ? { updatedAfter } : {}),
    });
    const tally = { announced: null as number | null, received: 0, ids: new Set<Id>(), repeated: 0 };
    out.tallies.push({ label: listing.label, tally });
    const tallyId = (id: Id) => {
      if (tally.ids.has(id)) tally.repeated++;
      else tally.ids.add(id);
    };
    for await (const page of source) {
      onPage();
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
      for (const bad of page.skipped) {
        counts.skipped++;
        const id = skippedId(bad);
        if (id === null) out.unknownSkipped++;
        else {
          out.seen.add(id);
          out.malformed.add(id);
          tallyId(id);
        }
        noteError(`${spec.kind}: skipped malformed record ${bad.id ?? '(no id)'}: ${bad.reason}`);
      }
      let records = listing.adjust ? page.records.map(listing.adjust) : page.records;
      if (spec.kind === 'teams' && records.length > 0) {
        if (ctx.school.rosters.sensitive) {
          detailProgress.total += records.length;
          records = await withTeamDetails(ctx, records as Team[], detailProgress);
        } else {
          // Whatever an upstream's listing carries, a school without sensitive rosters keeps none of it.
          records = (records as Team[]).map(withoutSensitive);
        }
      }
      for (const meta of page.customFieldsMetadata ?? []) out.customFields.set(meta.key, meta);
      const fresh = [];
      for (const r of records) {
        await slice.pause();
        const prepared = prepareRecord(spec.kind, r);
        out.seen.add(prepared.key as Id);
        tallyId(prepared.key as Id);
        if (stored.get(prepared.key) === prepared.hash) out.unchanged++;
        else fresh.push(prepared);
      }
      await out.records.add(fresh);
    }
  }
}

type Confirmation = Presence | 'gone' | 'unknown' | 'unasked';

/**
 * Single reads that all find the record there: the listing, not the records, is at fault, and asking about the
 * rest would only cost requests (a listing short of a 1,000-record page would cost 1,000 reads).
 */
const UNTRUSTED_AFTER = 20;

/** Ids the store holds live (within the window, for windowed kinds) that the listing did not return. */
async function missingFrom(store: Store, ctx: ResourceRunContext, spec: ResourceSpec, seen: Set<Id>) {
  const live = await store.records.liveIds(ctx.school.id, spec.kind, spec.windowed ? ctx.window : undefined);
  return { live, missing: live.filter((id) => !seen.has(id)) };
}

/**
 * Asks the upstream, one single read each, about every record a complete full listing left out (within what the
 * deletion guard lets it delete): only a 404 proves one gone. A listing that cannot be the whole truth, or that the
 * guard refuses, deletes nothing, so nothing is asked.
 */
async function confirmMissing(
  ctx: ResourceRunContext,
  spec: ResourceSpec & Required<Pick<ResourceSpec, 'confirm'>>,
  out: Download,
  noteError: (line: string) => void,
): Promise<void> {
  if (out.unknownSkipped > 0 || out.tallies.some(({ label, tally }) => listingGap(label, tally))) return;
  const { live, missing } = await missingFrom(ctx.store, ctx, spec, out.seen);
  if (missing.length === 0) return;
  const verdict = deletionGuard({
    resource: spec.kind,
    storedCount: live.length,
    listedCount: out.seen.size,
    missingCount: missing.length,
    maxShrinkFraction: ctx.school.deletionGuard.maxShrinkFraction,
  });
  if (!verdict.allowed) return;
  const unknown: string[] = [];
  const tally = { present: 0, gone: 0 };
  await mapLimit(missing, ctx.school.pull.teamConcurrency, async (id) => {
    if (tally.present >= UNTRUSTED_AFTER && tally.gone === 0) {
      out.confirmations.set(id, 'unasked');
      return;
    }
    let said: Confirmation;
    try {
      said = await spec.confirm({ client: ctx.client, window: ctx.window }, id);
    } catch (err) {
      // The service went away mid-pull: the resource fails like any download. A refusal of the single read
      // (401/403, a token allowed to list only) just leaves the question open.
      if (err instanceof UnreachableError) throw err;
      said = isNotFound(err) ? 'gone' : 'unknown';
      if (said === 'unknown') unknown.push(`${id} (${message(err)})`);
    }
    if (said === 'present') tally.present++;
    if (said === 'gone') tally.gone++;
    out.confirmations.set(id, said);
  });
  if (unknown.length > 0)
    noteError(
      `${spec.kind}: ${unknown.length} record${unknown.length === 1 ? '' : 's'} the full listing left out could not be ` +
        `read singly, kept until a second full listing leaves them out too: ${unknown.slice(0, 5).join('; ')}` +
        (unknown.length > 5 ? ` … and ${unknown.length - 5} more` : ''),
    );
}

/** What to do with the records a complete full listing left out (and the guard allows deleting). */
function decideMissing(
  missing: readonly Id[],
  confirmations: Download['confirmations'],
  marks: ReadonlyMap<Id, string>,
): { remove: Id[]; pending: Id[]; present: Id[] } {
  const remove: Id[] = [];
  const pending: Id[] = [];
  const present: Id[] = [];
  for (const id of missing) {
    const said = confirmations.get(id);
    // Gone (404), or moved out of what is synced: it leaves the store, as upstream confirms.
    if (said === 'gone' || said === 'elsewhere') remove.push(id);
    else if (said === 'present' || said === 'unasked') present.push(id);
    // No single read to ask, or it gave no answer: the second complete listing in a row that leaves it out decides.
    else if (marks.has(id)) remove.push(id);
    else pending.push(id);
  }
  return { remove, pending, present };
}

/** A few ids for a person to look up, and how many more. */
function someIds(ids: readonly Id[]): string {
  return ids.slice(0, 10).join(', ') + (ids.length > 10 ? ` … and ${ids.length - 10} more` : '');
}

/** A resource's download as it ended: its records or why it failed, and what it noted on the way. */
interface Fetched {
  began: number;
  pages: number;
  /** Malformed records the listing carried. */
  skipped: number;
  errors: string[];
  result: { ok: true; download: Download } | { ok: false; error: unknown };
}

/**
 * Reads every page of a resource (and, for teams of a school with sensitive rosters, each team singly) without
 * touching the store's write side: no transaction is open while the upstream answers. Each record is made
 * ready for the store as it arrives (stable JSON and hash, computed while the next page is in flight) and
 * dropped at once when the store already holds it unchanged, so memory holds only what will be written.
 * Never rejects: a failure is in the result, for the resource's turn to write.
 */
async function fetchResource(
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
  const out: Download = {
    records: new RecordSpool(),
    seen: new Set<Id>(),
    unchanged: 0,
    unknownSkipped: 0,
    malformed: new Set<Id>(),
    customFields: new Map(),
    tallies: [],
    confirmations: new Map(),
  };
  try {
    const stored = await ctx.store.records.liveHashes(ctx.school.id, spec.kind);
    await readListings(ctx, spec, updatedAfter, { counts, noteError, onPage, stored, out });
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
 * on SQLite and ~7 % faster on PostgreSQL at school scale, for ~10 MB more peak memory.) No download starts once
 * `stopped` says so (a fatal failure, a shutdown); one that did not start resolves to null.
 */
function startDownloads(
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

async function pullResource(
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  mode: ResourceMode,
  fetching: Promise<Fetched | null> | undefined,
): Promise<ResourceResult> {
  const { store, school, log } = ctx;
  const counts = zeroCounts();
  // Assigned inside the transaction callback, which TypeScript's narrowing cannot see.
  let warning = null as string | null;
  let guarded = false as boolean;
  let extra: ResourceResult['extra'];

  ctx.onProgress({ type: 'resource', kind: spec.kind, mode });
  const fetched = mode === 'skipped' ? null : await fetching;
  if (!fetched) {
    const outcome: ResourceOutcome = {
      kind: spec.kind,
      mode,
      status: 'skipped',
      counts,
      pages: 0,
      durationMs: 0,
      ...(mode === 'skipped' ? {} : { error: 'not attempted: the pull was stopped' }),
    };
    return { outcome, errors: [], warning };
  }
  const { began, pages, errors } = fetched;
  counts.skipped = fetched.skipped;

  const full = mode === 'full';

  try {
    // 1. The network: every page, nothing written (downloaded ahead: see startDownloads).
    if (!fetched.result.ok) throw fetched.result.error;
    const got = fetched.result.download;
    counts.unchanged += got.unchanged;

    // 2. The store: one short transaction of bulk statements, with no network wait inside it.
    await store.transaction(async (tx) => {
      const at = ctx.now().toISOString();
      for await (const chunk of got.records.chunks(WRITE_CHUNK.records, WRITE_CHUNK.chars)) {
        const stats = await tx.records.upsertPrepared(school.id, spec.kind, chunk, at);
        counts.added += stats.added + stats.restored;
        counts.changed += stats.changed;
        counts.unchanged += stats.unchanged;
      }

      if (got.customFields.size > 0) {
        const cf = zeroCounts();
        const stats = await tx.records.upsert(school.id, 'customFields', [...got.customFields.values()], at);
        cf.added = stats.added + stats.restored;
        cf.changed = stats.changed;
        cf.unchanged = stats.unchanged;
        extra = { kind: 'customFields', counts: cf };
      }

      const problems: string[] = [];
      for (const { label, tally } of got.tallies) {
        const gap = listingGap(label, tally);
        if (gap) problems.push(gap);
      }
      const incomplete = problems.length > 0;
      if (got.unknownSkipped > 0) {
        problems.push(
          `${got.unknownSkipped} malformed record${got.unknownSkipped === 1 ? '' : 's'} without a usable id skipped` +
            (full ? ' (no deletions of it until upstream fixes them)' : ''),
        );
      }

      // Records a complete listing left out once (kinds without a single read): a record seen since is no longer.
      const marks = await tx.records.listMissing(school.id, spec.kind);
      let marksSeen = [...marks.keys()].some((id) => got.seen.has(id));
      if (full) {
        const { live, missing } = await missingFrom(tx, ctx, spec, got.seen);
        if (incomplete || got.unknownSkipped > 0) {
          // Ids we could not see may be any of the "missing" ones: the listing is no evidence of deletion.
          guarded = missing.length > 0;
          warning = `${spec.kind}: ${problems.join('; ')}; deleted nothing`;
        } else {
          const verdict = deletionGuard({
            resource: spec.kind,
            storedCount: live.length,
            listedCount: got.seen.size,
            missingCount: missing.length,
            maxShrinkFraction: school.deletionGuard.maxShrinkFraction,
          });
          if (verdict.allowed) {
            // One listing's word is not enough: a record goes when a single read answers 404, or when this is the
            // second complete listing in a row to leave it out (see decideMissing).
            const { remove, pending, present } = decideMissing(missing, got.confirmations, marks);
            if (remove.length > 0)
              counts.deleted = await tx.records.markDeleted(school.id, spec.kind, remove, at);
            if (pending.length > 0) counts.pending = pending.length;
            if (pending.length > 0 || marks.size > 0)
              await tx.records.setMissing(school.id, spec.kind, pending, at);
            marksSeen = false;
            const asked = present.filter((id) => got.confirmations.get(id) === 'present');
            if (present.length > 0)
              warning =
                `${spec.kind}: the full listing left out ${present.length} record${present.length === 1 ? '' : 's'}` +
                (asked.length === present.length
                  ? ` the upstream still has (read singly: ${someIds(present)}); kept`
                  : `; the first ${asked.length} read singly are all still there (${someIds(asked)}), so the ` +
                    'listing was not trusted: kept them all');
          } else {
            guarded = true;
            warning = verdict.reason;
          }
        }
      }
      if (marksSeen) {
        const still = [...marks.keys()].filter((id) => !got.seen.has(id));
        await tx.records.setMissing(school.id, spec.kind, still, at);
      }

      if (!full && problems.length > 0) {
        warning = `${spec.kind}: ${problems.join('; ')}${incomplete ? '; will read these changes again' : ''}`;
      }
      // Cursors move with the data, in the same transaction: a failed resource is simply read again next time,
      // and so is an incomplete listing of changes (it may have left some out).
      if (spec.incremental && !incomplete) {
        const cursor = new Date(ctx.startedAt.getTime() - school.pull.overlapSeconds * 1000).toISOString();
        await tx.records.setCursor(school.id, cursorKey(spec.kind), cursor);
      }
      if (full) await tx.records.setCursor(school.id, refreshKey(spec.kind), ctx.startedAt.toISOString());
      if (spec.kind === 'teams' && full && (await sensitiveChanged(tx, school))) {
        // Turned off: the listing rewrote every live team it returned whole; teams deleted upstream, and those it
        // served malformed, keep their last record here, so strip those as well (and read no other).
        if (!school.rosters.sensitive) {
          const written = new Set([...got.seen].filter((id) => !got.malformed.has(id)));
          await tx.records.rewriteRecords(school.id, 'teams', withoutSensitive, written);
        }
        await tx.records.setCursor(school.id, SENSITIVE_KEY, school.rosters.sensitive ? 'on' : 'off');
      }
    });
  } catch (err) {
    // A refusal the configuration explains (token, URL) is said as such; its stack would say nothing more.
    const explained = explainUpstreamFailure(err, school);
    const why = explained ?? message(err);
    log.error(
      {
        ...(explained && err instanceof UpstreamError
          ? { failure: { ...err.toJSON(), explained } }
          : { err }),
        schoolId: school.id,
        resource: spec.kind,
      },
      `pull of ${spec.kind} failed; nothing of it was written`,
    );
    const outcome: ResourceOutcome = {
      kind: spec.kind,
      mode,
      status: 'failed',
      // Rolled back: nothing of it happened, except the skips we saw.
      counts: { ...zeroCounts(), skipped: counts.skipped },
      pages,
      durationMs: Date.now() - began,
      error: why,
    };
    return {
      outcome,
      errors: [...errors, `${spec.kind}: ${explained ?? `failed, nothing of it was kept: ${why}`}`],
      warning: null,
      fatal: isFatal(err),
    };
  } finally {
    if (fetched.result.ok) await fetched.result.download.records.close();
  }

  if (warning) log.warn({ schoolId: school.id, resource: spec.kind }, `deletion guard: ${warning}`);
  const outcome: ResourceOutcome = {
    kind: spec.kind,
    mode,
    status: guarded ? 'guarded' : 'ok',
    counts,
    pages,
    durationMs: Date.now() - began,
  };
  return { outcome, errors, warning, ...(extra ? { extra } : {}) };
}

/** Pulls one school into the store and records the run. Never throws for upstream trouble: see the summary. */
export async function pullSchool(opts: PullOptions): Promise<PullSummary> {
  const { store, school } = opts;
  const log = (opts.log ?? silentLogger).child({ schoolId: school.id });
  // Stopped before it began: nothing to record.
  if (opts.signal?.aborted) throw new PullInterruptedError(school.id, abortReason(opts.signal), null);
  // Alive before anything is recorded, so no other process takes this pull's lease or run for an orphan.
  const stopBeating = await keepAlive(store, log);
  try {
    await store.records.upsertSchool({ id: school.id, name: school.name, timeZone: school.timeZone });
    const token = await takeLease(store, school.id, opts);
    if (opts.signal?.aborted) {
      await store.runs.releasePullLease(school.id, token).catch(() => {});
      throw new PullInterruptedError(school.id, abortReason(opts.signal), null);
    }
    try {
      return await pullLeased(opts, log);
    } finally {
      await store.runs
        .releasePullLease(school.id, token)
        .catch((err: unknown) => log.error({ err }, 'could not release the pull lease'));
    }
  } finally {
    stopBeating();
  }
}

async function pullLeased(opts: PullOptions, log: Logger): Promise<PullSummary> {
  const { store, school } = opts;
  const now = opts.now ?? (() => new Date());
  const onProgress = opts.onProgress ?? (() => {});

  const startedAt = now();
  await closeInterruptedRuns(store, school.id, startedAt, log);

  // A full pull asked for while another held the school (a full fire that met an incremental one) is run by
  // whichever pull takes the lease next, on any replica: it is never dropped.
  const request = await store.runs.fullPullRequest(school.id);
  if (opts.answers !== undefined && request === null) {
    const [done] = await store.runs.listRuns(school.id, { kind: 'full', limit: 1 });
    throw new PullNotNeededError(school.id, done ?? null);
  }
  let kind = opts.kind;
  let upgradedBecause: string | null = null;
  if (kind === 'incremental' && request) {
    kind = 'full';
    upgradedBecause = `full pull asked for at ${request.at} by ${request.by}`;
  } else if (kind === 'incremental' && !(await hadCompleteFullRun(store, school.id))) {
    kind = 'full';
    upgradedBecause = 'first complete run';
  }
  if (upgradedBecause) log.info(`running a full pull: ${upgradedBecause}`);
  const runId = await store.runs.startRun({
    schoolId: school.id,
    kind,
    at: startedAt.toISOString(),
    owner: processOwner().id,
  });
  // What the run has committed so far: kept in its record after each resource, and what an interrupted or
  // failed run records, since the resources written before the stop stay written.
  const progress: RunProgress = { counts: {}, upstreamRequests: 0, retries: 0, throttled: 0 };
  try {
    await opts.onStart?.({ runId, kind });
    const summary = await unlessAborted(
      runResources(opts, { runId, kind, upgradedBecause, startedAt, now, onProgress, log, progress }),
      opts.signal,
    );
    // Done, whatever its result (a failed full pull is in the history like any other): requests made before it
    // started are answered; one made while it ran waits for the next pull.
    if (kind === 'full') await store.runs.satisfyFullPull(school.id, startedAt.toISOString());
    return summary;
  } catch (err) {
    if (opts.signal?.aborted) {
      const why = abortReason(opts.signal);
      await store.runs
        .finishRun(runId, {
          status: 'interrupted',
          finishedAt: now().toISOString(),
          ...progress,
          errors: [`interrupted: ${why}`],
          warning: null,
        })
        .catch((e: unknown) => log.error({ err: e, runId }, 'could not record the interrupted run'));
      log.warn({ runId }, `pull interrupted: ${why}`);
      throw new PullInterruptedError(school.id, why, runId);
    }
    // Not upstream trouble (that is in the summary) but the store or a bug: the run must not stay "running".
    await store.runs
      .finishRun(runId, {
        status: 'failed',
        finishedAt: now().toISOString(),
        ...progress,
        errors: [`failed: ${message(err)}`],
        warning: null,
      })
      .catch((e: unknown) => log.error({ err: e, runId }, 'could not record the failed run'));
    throw err;
  }
}

/** The run's counts after a resource's transaction committed, so a kill -9 from here on leaves true counts. */
async function recordProgress(
  store: Store,
  runId: number,
  progress: RunProgress,
  upstream: EndpointStats,
  log: Logger,
): Promise<void> {
  progress.upstreamRequests = upstream.requests;
  progress.retries = upstream.retries;
  progress.throttled = upstream.throttled;
  // The records are written either way; a store that cannot take this line fails the run's end, if anything.
  await store.runs
    .recordRunProgress(runId, progress)
    .catch((err: unknown) => log.error({ err, runId }, 'could not record the run’s progress'));
}

interface PlannedResource {
  spec: ResourceSpec;
  mode: ResourceMode;
  updatedAfter?: string;
}

async function runResources(
  opts: PullOptions,
  run: {
    runId: number;
    kind: PullKind;
    upgradedBecause: string | null;
    startedAt: Date;
    now: () => Date;
    onProgress: (event: PullProgress) => void;
    log: Logger;
    progress: RunProgress;
  },
): Promise<PullSummary> {
  const { store, client, school } = opts;
  const { runId, kind, startedAt, now, onProgress, log, progress } = run;
  const before = client.totals();
  const window = syncWindow(startedAt, school.syncWindow);
  log.info({ runId, kind, window }, 'pull started');

  const plan: PlannedResource[] = [];
  for (const spec of RESOURCES)
    plan.push({ spec, ...(await decideMode(store, school, spec, kind, startedAt)) });
  onProgress({
    type: 'start',
    schoolId: school.id,
    kind,
    resources: plan.map((p) => ({ kind: p.spec.kind, mode: p.mode })),
  });

  const ctx: ResourceRunContext = { store, client, school, window, startedAt, now, onProgress, log };
  const resources: ResourceOutcome[] = [];
  const counts = progress.counts;
  const errors: string[] = [];
  const warnings: string[] = [];
  let aborted: string | null = null;
  const downloads = startDownloads(ctx, plan, () => aborted !== null || opts.signal?.aborted === true);
  const written = new Set<ResourceKind>();
  try {
    for (const step of plan) {
      // Stopped from outside: pullLeased has recorded the run as interrupted; nothing more may be written.
      opts.signal?.throwIfAborted();
      if (aborted) {
        const outcome: ResourceOutcome = {
          kind: step.spec.kind,
          mode: step.mode,
          status: 'skipped',
          counts: zeroCounts(),
          pages: 0,
          durationMs: 0,
          error: `not attempted: ${aborted}`,
        };
        resources.push(outcome);
        onProgress({ type: 'resource-done', kind: step.spec.kind, outcome });
        continue;
      }
      written.add(step.spec.kind);
      const result = await pullResource(ctx, step.spec, step.mode, downloads.get(step.spec.kind));
      resources.push(result.outcome);
      if (step.mode !== 'skipped') counts[step.spec.kind] = result.outcome.counts;
      if (result.extra) counts[result.extra.kind] = result.extra.counts;
      errors.push(...result.errors);
      if (result.warning) warnings.push(result.warning);
      await recordProgress(store, runId, progress, diffStats(client.totals(), before), log);
      log.debug(
        { runId, resource: step.spec.kind, status: result.outcome.status, ...result.outcome.counts },
        'resource done',
      );
      onProgress({ type: 'resource-done', kind: step.spec.kind, outcome: result.outcome });
      if (result.fatal) aborted = result.outcome.error ?? 'upstream refused access';
    }
  } finally {
    // Downloads whose resource was never written (a fatal failure, a shutdown): let go of their spools.
    for (const [kind, fetching] of downloads) {
      if (written.has(kind)) continue;
      void fetching
        .then((f) => (f?.result.ok ? f.result.download.records.close() : undefined))
        .catch(() => {});
    }
  }

  let failed = resources.some((r) => r.status === 'failed');
  if (!failed && opts.storeOutputs) {
    try {
      await opts.storeOutputs();
    } catch (err) {
      opts.signal?.throwIfAborted();
      failed = true;
      errors.push(message(err));
    }
  }
  const status: RunStatus = failed ? 'failed' : warnings.length > 0 ? 'suspicious' : 'succeeded';
  const upstream = diffStats(client.totals(), before);
  const finishedAt = now();
  const warning = warnings.length > 0 ? warnings.join('; ') : null;
  opts.signal?.throwIfAborted();
  await store.runs.finishRun(runId, {
    status,
    finishedAt: finishedAt.toISOString(),
    counts,
    upstreamRequests: upstream.requests,
    retries: upstream.retries,
    throttled: upstream.throttled,
    errors,
    warning,
  });

  const summary: PullSummary = {
    runId,
    schoolId: school.id,
    kind,
    requestedKind: opts.kind,
    upgradedBecause: run.upgradedBecause,
    status,
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationMs: finishedAt.getTime() - startedAt.getTime(),
    resources,
    counts,
    upstream,
    errors,
    warning,
  };
  const line = { runId, kind, status, durationMs: summary.durationMs, upstream, counts };
  if (status === 'failed') log.error(line, 'pull failed');
  else if (status === 'suspicious') log.warn({ ...line, warning }, 'pull finished but was suspicious');
  else log.info(line, 'pull finished');
  onProgress({ type: 'done', summary });
  return summary;
}
