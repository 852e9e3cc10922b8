// What a pull reports when it ends: the contract between the pull (sync/) and whatever follows it (after-pull
// steps in feeds/ and push/, the scheduler, `rostercal sync`'s report), so none of them has to import the pull.
import type { Instant } from '../domain/types.ts';
import type { ResourceKind, RunCounts, RunStatus } from '../store/types.ts';
import type { EndpointStats } from '../upstream/api.ts';

export type PullKind = 'incremental' | 'full';
export type ResourceMode = 'full' | 'incremental' | 'skipped';

export interface ResourceOutcome {
  kind: ResourceKind;
  mode: ResourceMode;
  /** guarded: read and written, but the deletion guard kept it from deleting. */
  status: 'ok' | 'guarded' | 'failed' | 'skipped';
  counts: RunCounts;
  pages: number;
  durationMs: number;
  error?: string;
}

export interface PullSummary {
  runId: number;
  schoolId: string;
  /** What ran: an incremental request becomes full when the school never had a complete full run. */
  kind: PullKind;
  requestedKind: PullKind;
  /** Why an incremental request ran full (no complete full run yet; a full pull asked for), or null. */
  upgradedBecause: string | null;
  status: RunStatus;
  startedAt: Instant;
  finishedAt: Instant;
  durationMs: number;
  resources: ResourceOutcome[];
  counts: Record<string, RunCounts>;
  upstream: EndpointStats;
  /** The upstream's clock minus this server's, from the `Date` of its answers (ms); null when none carried one. */
  upstreamSkewMs: number | null;
  errors: string[];
  warning: string | null;
}
