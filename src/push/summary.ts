// What a push run reports: per calendar and in total, with the planned operations of a dry run; and the text
// `rostercal sync` prints for it.
import type { Id, Instant } from '../domain/types.ts';
import type { RunCounts, RunStatus, SchoolId } from '../store/types.ts';
import type { FailureKind } from './provider.ts';

export type PlannedOp = {
  kind: 'create' | 'update' | 'delete';
  sessionId: Id;
  title: string | null;
  start: Instant | null;
  /** Why (for deletes: orphan, duplicate, gone from scope, …). */
  reason: string;
};

export type CalendarState = 'ok' | 'created' | 'skipped' | 'paused' | 'failed' | 'retired';

/**
 * What a provider failure of each kind makes of its calendar: quota spent rests it (paused), an unusable
 * account skips it, anything else fails it (a calendar deleted by hand is also forgotten, to be made again).
 */
export const STATE_AFTER: Record<FailureKind, CalendarState> = {
  quota: 'paused',
  account: 'skipped',
  'calendar-gone': 'failed',
  error: 'failed',
};

export interface CalendarOutcome {
  key: string;
  name: string;
  remoteCalendarId: string | null;
  /** What happened to the calendar itself. */
  state: CalendarState;
  /**
   * Why a provider failed it, when one did: the last failure seen (noteFailure), except that a calendar found
   * gone stays 'calendar-gone', and is forgotten after the run so that the next one creates it again.
   */
  failure?: FailureKind;
  reconciled: boolean;
  /** The remote listing was not trusted (see warning). */
  untrusted: boolean;
  counts: { created: number; updated: number; deleted: number; unchanged: number; failed: number };
  /** Planned operations (dry runs only). */
  ops?: PlannedOp[];
  note?: string;
}

/** Records why a provider failed a calendar (see CalendarOutcome.failure). */
export function noteFailure(outcome: Pick<CalendarOutcome, 'failure'>, kind: FailureKind): void {
  if (outcome.failure !== 'calendar-gone') outcome.failure = kind;
}

/** The same, as a new outcome: what the stages hand on (noteFailure is for an outcome a stage is still building). */
export function withFailure<T extends Pick<CalendarOutcome, 'failure'>>(outcome: T, kind: FailureKind): T {
  return outcome.failure === 'calendar-gone' ? outcome : { ...outcome, failure: kind };
}

/** The calendar's remote was deleted by hand (a failure of kind 'calendar-gone'). */
export function isGone(calendar: Pick<CalendarOutcome, 'failure'>): boolean {
  return calendar.failure === 'calendar-gone';
}

export interface PushSummary {
  runId: number | null;
  schoolId: SchoolId;
  target: string;
  provider: 'google' | 'outlook';
  dryRun: boolean;
  status: RunStatus;
  startedAt: Instant;
  finishedAt: Instant;
  durationMs: number;
  window: { from: Instant; to: Instant };
  totals: { created: number; updated: number; deleted: number; unchanged: number; failed: number };
  calendars: CalendarOutcome[];
  requests: number;
  retries: number;
  throttled: number;
  errors: string[];
  warning: string | null;
}

/** Totals, the per-calendar counts a run record keeps, and the run's status. */
export function tally(
  outcomes: CalendarOutcome[],
  failed: boolean,
  warning: string | null,
): { totals: PushSummary['totals']; counts: Record<string, RunCounts>; status: RunStatus } {
  const totals = { created: 0, updated: 0, deleted: 0, unchanged: 0, failed: 0 };
  const counts: Record<string, RunCounts> = {};
  for (const o of outcomes) {
    const c = o.counts;
    totals.created += c.created;
    totals.updated += c.updated;
    totals.deleted += c.deleted;
    totals.unchanged += c.unchanged;
    totals.failed += c.failed;
    counts[o.key] = {
      added: c.created,
      changed: c.updated,
      deleted: c.deleted,
      unchanged: c.unchanged,
      skipped: o.state === 'skipped' || o.state === 'paused' ? 1 : 0,
      created: c.created,
      updated: c.updated,
      failed: c.failed,
    };
  }
  const status: RunStatus =
    failed || totals.failed > 0 || outcomes.some((o) => o.state === 'failed')
      ? 'failed'
      : warning
        ? 'suspicious'
        : 'succeeded';
  return { totals, counts, status };
}

/** Human-readable plan (dry run) or result: one line per calendar with work, then the operations. */
export function formatPlan(s: PushSummary, opts: { verbose?: boolean } = {}): string[] {
  const lines: string[] = [];
  const t = s.totals;
  const what = s.dryRun
    ? `${t.created} to create, ${t.updated} to update, ${t.deleted} to delete`
    : `${t.created} created, ${t.updated} updated, ${t.deleted} deleted`;
  const tail = `${t.unchanged} unchanged${t.failed ? `, ${t.failed} failed` : ''} — ${s.calendars.length} calendars, ${s.requests} requests, ${s.status}`;
  lines.push(`${s.dryRun ? 'plan' : 'push'} ${s.schoolId}/${s.target} (${s.provider}): ${what}, ${tail}`);
  if (s.warning) lines.push(`  warning: ${s.warning}`);
  for (const c of s.calendars) {
    const k = c.counts;
    const busy = k.created + k.updated + k.deleted + k.failed > 0 || c.state !== 'ok' || c.untrusted;
    if (!busy && !opts.verbose) continue;
    const flags = [
      c.state !== 'ok' ? c.state : '',
      c.reconciled ? 'reconciled' : '',
      c.untrusted ? 'listing not trusted' : '',
    ]
      .filter(Boolean)
      .join(', ');
    lines.push(
      `  ${c.key} ${c.name}: +${k.created} ~${k.updated} -${k.deleted} =${k.unchanged}${flags ? ` [${flags}]` : ''}${c.note ? ` — ${c.note}` : ''}`,
    );
    for (const op of c.ops ?? []) {
      const sign = op.kind === 'create' ? '+' : op.kind === 'update' ? '~' : '-';
      lines.push(
        `      ${sign} session ${op.sessionId}${op.start ? ` ${op.start}` : ''}${op.title ? ` ${op.title}` : ''} (${op.reason})`,
      );
    }
  }
  for (const e of s.errors) lines.push(`  problem: ${e}`);
  // One element per line: calendar names and titles are upstream text, which must stay on its line.
  return lines;
}
