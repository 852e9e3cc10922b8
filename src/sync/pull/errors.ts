// How a pull ends without a summary (stopped, not needed, busy), and how an upstream failure is judged.
import type { Instant } from '../../domain/types.ts';
import type { SyncRun } from '../../store/types.ts';
import { UnreachableError, UpstreamDownError } from '../../upstream/errors.ts';
import { isWrongPath } from '../upstream-hint.ts';

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

/**
 * The pull's lease was taken over while it stalled (its heartbeat silent past OWNER_SILENT_MS): it wrote nothing
 * after that, and its run is recorded as interrupted, saying so (store/lease-fence.ts).
 */
export class PullLeaseLostError extends PullInterruptedError {
  constructor(schoolId: string, why: string, runId: number) {
    super(schoolId, why, runId);
    this.name = 'PullLeaseLostError';
  }
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

export function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  return r instanceof Error ? r.message : typeof r === 'string' ? r : 'stopped';
}

/** Settles with `work`, or rejects as soon as `signal` aborts (the work is left to settle on its own). */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** 401/403, an unreachable service and one that is down will not get better by trying the next resource. */
export function isFatal(err: unknown): boolean {
  // A listing answering 404 means the URL's path is wrong: every other listing would answer the same.
  if (err instanceof UnreachableError || err instanceof UpstreamDownError || isWrongPath(err)) return true;
  const status = (err as { status?: unknown } | null)?.status;
  return status === 401 || status === 403;
}

export function isNotFound(err: unknown): boolean {
  return (err as { status?: unknown } | null)?.status === 404;
}

export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
