// `rostercal status`: the last sync runs of each school and the state of its scheduled jobs, from the store.

import type { PushTargetConfig } from '../config/push-targets.ts';
import { clockLine } from '../config/sandbox-clock.ts';
import { absenceReporting } from '../families/absence-state.ts';
import { scrubSecrets } from '../log-text.ts';
import { pendingRotations } from '../push/live-rotation.ts';
import type { JobStatus, RunCounts, Store, SyncRun } from '../store/types.ts';
import { describeJob, runTook } from '../sync/job-display.ts';
import { seconds } from '../sync/report.ts';
import { upstreamClockNote } from '../sync/upstream-clock.ts';
import { printLines, terminalJson } from '../terminal.ts';
import { localClock, zoneAbbreviation } from '../util/time-zone.ts';
import { defineCommand, EXIT, numberOption, UsageError, withStore } from './command.ts';

const USAGE = `usage: rostercal status [--school ID] [--runs N] [--json]

Shows, per school, the scheduled jobs (last run, its result, next run, last error) and the latest sync runs.
  --school ID   only this school
  --runs N      how many recent runs to show (default 5)
  --json        machine-readable output
  -h, --help    this help

Exit status: 0 done, 2 bad usage or configuration.`;

/** An instant as people at the school read it: `2026-11-23 09:15:02 AEDT` (UTC for a school not configured). */
function when(iso: string | null, timeZone: string): string {
  if (!iso) return '—';
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const w = localClock(ms, timeZone);
  const p = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${p(w.year, 4)}-${p(w.month)}-${p(w.day)} ${p(w.hour)}:${p(w.minute)}:${p(w.second)} ${zoneAbbreviation(ms, timeZone)}`;
}

function sum(counts: Record<string, RunCounts>): RunCounts {
  const t: RunCounts = { added: 0, changed: 0, deleted: 0, unchanged: 0, skipped: 0 };
  for (const c of Object.values(counts)) {
    for (const k of ['added', 'changed', 'deleted', 'unchanged', 'skipped'] as const) t[k] += c[k] ?? 0;
  }
  return t;
}

/** Records a full listing left out for the first time: kept, deleted only if the next one leaves them out too. */
function pending(counts: Record<string, RunCounts>): string {
  const n = Object.values(counts).reduce((t, c) => t + (c.pending ?? 0), 0);
  return n > 0 ? ` (${n} pending)` : '';
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [fmt(header), ...rows.map(fmt)];
}

function jobRows(jobs: JobStatus[], tz: string): string[][] {
  return jobs.map((j) => {
    const { result, note, lastRunAt } = describeJob(j);
    return [j.job, when(lastRunAt, tz), result, when(j.nextRunAt, tz), note.slice(0, 80)];
  });
}

function runRows(runs: SyncRun[], tz: string): string[][] {
  return runs.map((r) => {
    const t = sum(r.counts);
    const took = runTook(r);
    const duration = took === 'running' ? '' : took === 'unknown' ? 'unknown' : seconds(took);
    const note = r.warning ?? (r.status === 'failed' ? (r.errors.at(-1) ?? '') : '');
    return [
      `#${r.id}`,
      r.kind + (r.target ? `:${r.target}` : ''),
      r.status,
      when(r.startedAt, tz),
      duration,
      String(r.upstreamRequests),
      `+${t.added} ~${t.changed} -${t.deleted}${pending(r.counts)}${t.skipped ? ` skipped ${t.skipped}` : ''}`,
      note.slice(0, 80),
    ];
  });
}

/** Public Google calendars whose replacement after a feed rotation the push has not finished. */
async function liveRotationsPending(
  store: Pick<Store, 'records'>,
  schoolId: string,
  school: { targets: readonly PushTargetConfig[] } | undefined,
): Promise<{ target: string; key: string }[]> {
  const out: { target: string; key: string }[] = [];
  for (const t of school?.targets ?? [])
    if (t.provider === 'google' && t.google.calendars.familiesMayAdd)
      for (const key of await pendingRotations(store, schoolId, t.id)) out.push({ target: t.id, key });
  return out;
}

export const run = defineCommand({
  name: 'status',
  usage: USAGE,
  options: {
    school: { type: 'string' },
    runs: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values, config: loadConfig }) {
    const limit = numberOption('--runs', values.runs, { min: 1 }) ?? 5;
    const config = await loadConfig();
    return withStore(config, async (store) => {
      const known = await store.records.listSchools();
      // Configured schools first (even before their first run), then any others the store remembers.
      const ids = [...new Set([...config.schools.map((s) => s.id), ...known.map((s) => s.id)])];
      const selected = values.school ? ids.filter((id) => id === values.school) : ids;
      if (selected.length === 0) {
        throw new UsageError(`no school "${values.school}" (known: ${ids.join(', ')})`);
      }
      const report = [];
      for (const id of selected) {
        const name =
          config.schools.find((s) => s.id === id)?.name ?? known.find((s) => s.id === id)?.name ?? id;
        const configured = config.schools.find((s) => s.id === id);
        const reporting = configured ? await absenceReporting(store, configured) : null;
        report.push({
          id,
          name,
          timeZone: config.schools.find((s) => s.id === id)?.timeZone ?? 'UTC',
          jobs: await store.runs.listJobStatus(id),
          runs: await store.runs.listRuns(id, { limit }),
          familyAbsences: reporting && (reporting.on ? 'on' : reporting.why),
          upstreamClock: await upstreamClockNote(store, id),
          liveCalendarRotations: await liveRotationsPending(
            store,
            id,
            config.schools.find((s) => s.id === id),
          ),
        });
      }
      if (values.json) {
        printLines(scrubSecrets(terminalJson(report.length === 1 ? report[0] : report, 2)).split('\n'));
        return EXIT.ok;
      }
      const clock = clockLine(config.sandboxNow);
      const out: string[] = clock ? [clock, ''] : [];
      for (const s of report) {
        out.push(`${s.name} [${s.id}] — times in ${s.timeZone}`);
        if (s.familyAbsences) out.push(`  families reporting absences: ${s.familyAbsences}`);
        if (s.upstreamClock) out.push(`  ${s.upstreamClock.line}`);
        if (s.jobs.length === 0)
          out.push('  jobs: none recorded yet (the scheduler of `rostercal serve` records them)');
        else
          for (const l of table(
            ['job', 'last run', 'result', 'next run', 'note'],
            jobRows(s.jobs, s.timeZone),
          ))
            out.push(`  ${l}`);
        out.push('');
        if (s.runs.length === 0) out.push('  runs: none yet (`rostercal sync` pulls now)');
        else
          for (const l of table(
            ['run', 'kind', 'status', 'started', 'took', 'requests', 'records', 'note'],
            runRows(s.runs, s.timeZone),
          ))
            out.push(`  ${l}`);
        // The note column is cut to fit; what a run warns about (deletions held back, and why) is said in full,
        // and so is why a job's fire was let pass or its run was cut short.
        for (const j of s.jobs) {
          const { result, note } = describeJob(j);
          if (note.length > 80 && (result === 'skipped' || result === 'interrupted'))
            out.push(`  ${j.job} ${result}: ${note}`);
        }
        for (const r of s.runs) if (r.warning) out.push(`  #${r.id} warning: ${r.warning}`);
        for (const p of s.liveCalendarRotations)
          out.push(
            `  live Google calendar of ${p.key} (target ${p.target}): rotation pending; the next push makes the new calendar and deletes the old one`,
          );
        out.push('');
      }
      // Run errors quote upstream and provider text: no credential and no control character reaches the terminal.
      while (out.at(-1) === '') out.pop();
      printLines(out.map(scrubSecrets));
      return EXIT.ok;
    });
  },
});
