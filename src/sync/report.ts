// How a pull looks to a person: live progress (one rewritten line on a terminal, plain lines otherwise) and the
// summary table printed at the end.

import type { PullSummary, ResourceMode } from '../jobs/pull-summary.ts';
import type { ResourceKind, RunCounts } from '../store/types.ts';
import { terminalSafe } from '../terminal.ts';
import { describeSkew, skewConsequence } from '../upstream/clock.ts';
import type { PullProgress } from './pull.ts';

const LABELS: Record<ResourceKind, string> = {
  sessions: 'sessions',
  teams: 'teams',
  students: 'students',
  staff: 'staff',
  absences: 'absences',
  activities: 'activities',
  locations: 'locations',
  yearGroups: 'year groups',
  departments: 'departments',
  studentTeams: 'student teams',
  customFields: 'custom fields',
};

export function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(2)} s` : `${(ms / 1000).toFixed(1)} s`;
}

function countsText(c: RunCounts): string {
  return `+${c.added} ~${c.changed} -${c.deleted} =${c.unchanged}${c.skipped ? ` skipped ${c.skipped}` : ''}`;
}

export interface ProgressWriter {
  (event: PullProgress): void;
  /** Clears a half-written line (before printing anything else). */
  clear(): void;
}

/**
 * Progress for one school. On a TTY: the current resource's pages (and team reads) on one line, rewritten at
 * most ~10 times a second, then a permanent line per finished resource. Otherwise (a log file, a pipe): one
 * line per page read and per finished resource.
 */
export function progressWriter(stream: NodeJS.WriteStream, schoolId: string): ProgressWriter {
  const tty = Boolean(stream.isTTY);
  let live = '';
  let lastDraw = 0;
  let pages = { listing: '', page: 0, lastPage: 0 };
  let details = { done: 0, total: 0 };
  let began = Date.now();

  const draw = (text: string, force = false) => {
    if (!tty) return;
    const now = Date.now();
    if (!force && now - lastDraw < 100) return;
    lastDraw = now;
    const width = Math.max(20, (stream.columns || 100) - 1);
    const safe = terminalSafe(text);
    live = safe.length > width ? `${safe.slice(0, width - 1)}…` : safe;
    stream.write(`\r\x1b[2K${live}`);
  };
  const clear = () => {
    if (tty && live) stream.write('\r\x1b[2K');
    live = '';
  };
  // Resources left out after a failure that ends the pull: one line for all of them, not its error per resource.
  let notAttempted: string[] = [];
  const flush = () => {
    clear();
    if (notAttempted.length)
      stream.write(
        `${terminalSafe(`${schoolId}:   not attempted after that failure: ${notAttempted.join(', ')}`)}\n`,
      );
    notAttempted = [];
  };
  // Failures quote upstream text: each line is cleaned (terminal.ts), so it stays one line.
  const line = (text: string) => {
    flush();
    stream.write(`${terminalSafe(text)}\n`);
  };

  const write = ((event: PullProgress) => {
    switch (event.type) {
      case 'start': {
        const modes = event.resources.filter((r) => r.mode !== 'skipped').length;
        line(`${schoolId}: ${event.kind} pull of ${modes} resource${modes === 1 ? '' : 's'}`);
        break;
      }
      case 'resource':
        began = Date.now();
        pages = { listing: LABELS[event.kind], page: 0, lastPage: 0 };
        details = { done: 0, total: 0 };
        if (event.mode !== 'skipped') draw(`${schoolId}: ${LABELS[event.kind]} (${event.mode})…`, true);
        break;
      case 'page':
        pages = { listing: event.listing, page: event.page, lastPage: event.lastPage };
        if (!tty) {
          line(`${schoolId}:   ${event.listing}: page ${event.page} of ${event.lastPage}`);
          break;
        }
        draw(
          `${schoolId}: ${event.listing}: page ${event.page} of ${event.lastPage}` +
            (details.total ? `, team reads ${details.done} of ${details.total}` : '') +
            ` (${seconds(Date.now() - began)})`,
          event.page === event.lastPage,
        );
        break;
      case 'details':
        details = { done: event.done, total: event.total };
        draw(
          `${schoolId}: ${pages.listing}: page ${pages.page} of ${pages.lastPage}, team reads ${event.done} of ${event.total}` +
            ` (${seconds(Date.now() - began)})`,
        );
        break;
      case 'resource-done': {
        const o = event.outcome;
        if (o.mode === 'skipped' && o.status === 'skipped' && !o.error) break;
        if (o.status === 'skipped' && o.mode !== 'skipped' && o.error?.startsWith('not attempted')) {
          notAttempted.push(LABELS[o.kind]);
          break;
        }
        const label = LABELS[o.kind].padEnd(14);
        const what =
          o.status === 'failed'
            ? `FAILED after ${o.pages} page${o.pages === 1 ? '' : 's'}: ${o.error}`
            : o.status === 'skipped'
              ? `not attempted (${o.error})`
              : `${o.pages} page${o.pages === 1 ? '' : 's'}, ${countsText(o.counts)}${o.status === 'guarded' ? ', deletions held back' : ''}`;
        line(`${schoolId}:   ${label} ${what} (${seconds(o.durationMs)})`);
        break;
      }
      case 'done':
        flush();
        break;
    }
  }) as ProgressWriter;
  write.clear = clear;
  return write;
}

const MODE_TEXT: Record<ResourceMode, string> = { full: 'full', incremental: 'changes', skipped: 'not due' };

/**
 * The end-of-run table: what changed per resource, upstream requests and time. One element per line: problems
 * quote upstream text, which must stay on its line (printLines cleans each).
 */
export function formatSummary(summary: PullSummary, schoolName: string): string[] {
  const out: string[] = [];
  const verdict =
    summary.status === 'succeeded'
      ? 'succeeded'
      : summary.status === 'suspicious'
        ? 'finished, SUSPICIOUS'
        : summary.status.toUpperCase();
  const upgraded = summary.upgradedBecause ? ` (${summary.upgradedBecause}: full)` : '';
  out.push(
    `${schoolName} [${summary.schoolId}]: ${summary.kind} pull ${verdict}${upgraded} in ${seconds(summary.durationMs)} — run #${summary.runId}`,
  );
  const header = ['resource', 'read', 'added', 'changed', 'deleted', 'unchanged', 'skipped'];
  const rows: string[][] = [];
  const total: RunCounts = { added: 0, changed: 0, deleted: 0, unchanged: 0, skipped: 0 };
  const row = (name: string, mode: string, c: RunCounts | undefined) => {
    rows.push([
      name,
      mode,
      ...(c ? [c.added, c.changed, c.deleted, c.unchanged, c.skipped].map(String) : ['', '', '', '', '']),
    ]);
    if (c) for (const k of ['added', 'changed', 'deleted', 'unchanged', 'skipped'] as const) total[k] += c[k];
  };
  for (const r of summary.resources) {
    const notAttempted = r.status === 'skipped' && r.mode !== 'skipped';
    const mode =
      r.status === 'failed'
        ? 'FAILED'
        : notAttempted
          ? 'not attempted'
          : r.status === 'guarded'
            ? `${MODE_TEXT[r.mode]}, guarded`
            : MODE_TEXT[r.mode];
    row(LABELS[r.kind], mode, r.mode === 'skipped' || notAttempted ? undefined : r.counts);
    if (r.kind === 'sessions' && summary.counts.customFields)
      row(LABELS.customFields, mode, summary.counts.customFields);
  }
  rows.push([
    'total',
    '',
    ...[total.added, total.changed, total.deleted, total.unchanged, total.skipped].map(String),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmt = (cells: string[]) =>
    cells
      .map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  out.push(`  ${fmt(header)}`);
  for (const r of rows) out.push(`  ${fmt(r)}`);
  const u = summary.upstream;
  out.push(`  upstream: ${u.requests} requests, ${u.retries} retries, ${u.throttled} throttled (429)`);
  const skew = describeSkew(summary.upstreamSkewMs);
  if (skew) out.push(`  upstream clock: ${skew}; ${skewConsequence(summary.upstreamSkewMs!)}`);
  for (const [kind, c] of Object.entries(summary.counts))
    if (c.pending)
      out.push(
        `  pending: ${kind}: ${c.pending} left out of this full listing for the first time, kept; deleted if the ` +
          'next full listing leaves them out too',
      );
  if (summary.warning) out.push(`  warning: ${summary.warning}`);
  const shown = summary.errors.slice(0, 10);
  for (const e of shown) out.push(`  problem: ${e}`);
  if (summary.errors.length > shown.length) {
    out.push(`  … and ${summary.errors.length - shown.length} more problems (rostercal status --json)`);
  }
  return out;
}
