// What the pull's stages share: its options and progress events, the context a resource's turn runs in, and what
// each turn hands back to the run.
import type { SchoolConfig } from '../../config.ts';
import type { Id, Instant } from '../../domain/types.ts';
import type { PullKind, PullSummary, ResourceMode, ResourceOutcome } from '../../jobs/pull-summary.ts';
import type { SyncWindow } from '../../jobs/window.ts';
import type { Logger } from '../../log.ts';
import type { PullFence } from '../../store/lease-fence.ts';
import type { ResourceKind, RunCounts, Store } from '../../store/types.ts';
import type { UpstreamClient } from '../../upstream/api.ts';
import type { SkewMeter } from '../../upstream/clock.ts';
import type { ResourceSpec } from '../resources.ts';

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
  store: Pick<Store, 'records' | 'runs' | 'pullTurns' | 'transaction'>;
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
  /**
   * A scheduled pull's fire time: an incremental pull reads a resource only when its beat (school.pull.beatSeconds)
   * has come round since its last read, timed from fire to fire; a full one reads all and marks them read at it.
   * Unset (`rostercal sync`): every resource is read, marked at the run's start.
   */
  beatsFrom?: Date;
}

export interface ResourceRunContext {
  store: Pick<Store, 'records' | 'transaction'>;
  client: UpstreamClient;
  school: SchoolConfig;
  window: SyncWindow;
  startedAt: Date;
  /** What a resource's last read is marked with (pull/beats.ts): the fire's time, else the run's start. */
  beatAt: Date;
  now: () => Date;
  onProgress: (event: PullProgress) => void;
  log: Logger;
  /** The upstream's clock against this server's, from every page the run reads. */
  skew: SkewMeter;
  /**
   * Each resource's records a complete listing left out once (Store.records.pullState), read in one
   * statement at the run's start: only this run (under the school's lease) changes them, each in its resource's
   * transaction, so a resource's turn reads what its own kind held when the run began.
   */
  marks: ReadonlyMap<ResourceKind, ReadonlyMap<Id, Instant>>;
  /** The school's cursors as the run began, read with `marks` (quiet turns judge sensitive rosters by them). */
  cursors: ReadonlyMap<string, string>;
  /**
   * The school's lease as the run took it: each resource's transaction, and the cursors written at the run's end,
   * commit only while it is still held at this fence (store/lease-fence.ts), else LeaseLostError ends the run.
   * Always given by pullSchool; absent only for a stage run alone in a test, under no lease.
   */
  fence?: PullFence;
}

/** A resource's place in the run: how it is read this time (planResources). */
export interface PlannedResource {
  spec: ResourceSpec;
  mode: ResourceMode;
  updatedAfter?: string;
}

/** What a resource's turn hands back to the run. */
export interface ResourceResult {
  outcome: ResourceOutcome;
  errors: string[];
  warning: string | null;
  /** Custom-field metadata arrives with sessions and is stored as its own kind. */
  extra?: { kind: ResourceKind; counts: RunCounts };
  /** The failure will repeat for every resource (bad token): stop the run. */
  fatal?: boolean;
}

export const zeroCounts = (): RunCounts => ({ added: 0, changed: 0, deleted: 0, unchanged: 0, skipped: 0 });

export const cursorKey = (kind: ResourceKind) => `updatedAfter:${kind}`;
export const refreshKey = (kind: ResourceKind) => `refreshedAt:${kind}`;
