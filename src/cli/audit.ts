// `rostercal audit`: the audit log (roster downloads, feed rotations, sign-ins and refusals, sign-outs, sessions
// ended), newest first, read from the store. Times in the school's zone; every text field made terminal-safe
// (e-mail addresses come from identity providers, names from upstream).

import {
  ACTION_LABELS,
  actionProblem,
  isAuditAction,
  personProblem,
  teamProblem,
  templateProblem,
} from '../identity/audit-filters.ts';
import { templateNames } from '../rosters/template.ts';
import type { AuditRecord, Store } from '../store/types.ts';
import { columns, printJson, printLines, terminalSafe } from '../terminal.ts';
import { localClock, offsetMinutes, realDay } from '../util/time-zone.ts';
import { defineCommand, EXIT, idOption, numberOption, UsageError, withStore } from './command.ts';

const USAGE = `usage: rostercal audit [--since ISO] [--person EMAIL] [--action WHAT] [--team ID] [--template NAME]
                      [--school ID] [--limit N] [--json]

The audit log, newest first: when (school time), what, who (an e-mail address, or "admin token"), school,
team, session, template, client address. Kept for auth.auditRetentionDays (default 400 days).
  --since ISO        only records at or after this instant (2026-11-01, or 2026-11-01T08:00+11:00;
                     a date or time without an offset is UTC; not after today)
  --person EMAIL     only this person: a member of staff's e-mail address (case-insensitive), "admin token",
                     or another "who" the log shows ("command line (root)"); one that matches nothing is refused
  --action WHAT      only this kind of record (what /admin/audit calls "What happened"):
${actionList()}
  --team ID          only this team (a team of the school, or one the log names)
  --template NAME    only downloads of this roster template (rostercal roster --templates lists them)
  --school ID        only this school
  --limit N          at most N records (default: all)
  --json             machine-readable output (one array; "at" in UTC, "local" in the school's zone)
  -h, --help         this help

Exit status: 0 done, 2 bad usage or configuration.`;

const PAGE = 5_000;

/** The actions --action takes, as the usage lists them: the same list as the page's. */
function actionList(): string {
  return Object.entries(ACTION_LABELS)
    .map(([action, label]) => `                       ${action.padEnd(26)}${label}`)
    .join('\n');
}

export const run = defineCommand({
  name: 'audit',
  usage: USAGE,
  options: {
    since: { type: 'string' },
    person: { type: 'string' },
    action: { type: 'string' },
    team: { type: 'string' },
    template: { type: 'string' },
    school: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values, config }) {
    const since = values.since === undefined ? undefined : parseSince(values.since);
    const teamId = idOption('--team', values.team, 'team');
    const limit = numberOption('--limit', values.limit, { min: 1 });
    const cfg = await config();
    if (values.school !== undefined && !cfg.schools.some((s) => s.id === values.school))
      throw new UsageError(
        `--school: no school "${terminalSafe(values.school)}" is configured (${cfg.schools.map((s) => s.id).join(', ')})`,
      );
    const zones = new Map(cfg.schools.map((s) => [s.id, s.timeZone]));
    // Records of no school (a refused sign-in, the admin token's form) read in the only school's zone, else UTC.
    const fallbackZone = cfg.schools.length === 1 ? cfg.schools[0]!.timeZone : 'UTC';
    const records = await withStore(cfg, async (store) => {
      await knownFilters(
        store,
        cfg.schools.map((s) => s.id),
        values,
        teamId,
        cfg.rosterTemplatesDir,
      );
      const out: AuditRecord[] = [];
      let beforeId: number | undefined;
      for (;;) {
        const want = Math.min(PAGE, limit === undefined ? PAGE : limit - out.length);
        if (want <= 0) break;
        const page = await store.access.listAudit({
          ...(since !== undefined ? { since } : {}),
          ...(values.person !== undefined ? { actor: values.person } : {}),
          ...(values.action !== undefined && isAuditAction(values.action) ? { action: values.action } : {}),
          ...(teamId !== undefined ? { teamId } : {}),
          ...(values.template !== undefined ? { template: values.template } : {}),
          ...(values.school !== undefined ? { schoolId: values.school } : {}),
          ...(beforeId !== undefined ? { beforeId } : {}),
          limit: want,
        });
        out.push(...page);
        if (page.length < want) break;
        beforeId = page.at(-1)!.id;
      }
      return out;
    });
    const zoneOf = (r: AuditRecord) => (r.schoolId ? zones.get(r.schoolId) : undefined) ?? fallbackZone;

    if (values.json) {
      printJson(records.map((r) => ({ ...r, local: localTime(r.at, zoneOf(r)), timeZone: zoneOf(r) })));
      return EXIT.ok;
    }
    if (!records.length) {
      printLines(`no audit records${since ? ` since ${since}` : ''}`);
      return EXIT.ok;
    }
    printLines(
      columns(
        ['when', 'what', 'who', 'school', 'team', 'session', 'template', 'client', 'detail'],
        records.map((r) =>
          [
            localTime(r.at, zoneOf(r)),
            r.action,
            r.actor,
            r.schoolId ?? '-',
            r.teamId ?? '-',
            r.sessionId ?? '-',
            r.template ?? '-',
            r.clientAddress ?? '-',
            r.detail ?? '',
          ].map(String),
        ),
      ),
    );
    return EXIT.ok;
  },
});

/**
 * Every filter names something it can match (identity/audit-filters.ts): a typo would print "no audit records"
 * and exit 0, read as "nobody did anything".
 */
async function knownFilters(
  store: Pick<Store, 'access' | 'records'>,
  schools: readonly string[],
  values: { person?: string | undefined; action?: string | undefined; template?: string | undefined },
  teamId: number | undefined,
  dir: string | null | undefined,
): Promise<void> {
  const all = () => true;
  const refuse = (flag: string, problem: string | null) => {
    if (problem) throw new UsageError(`${flag}: ${terminalSafe(problem)}`);
  };
  if (values.action !== undefined) {
    const problem = actionProblem(values.action);
    refuse('--action', problem && `${problem} (${Object.keys(ACTION_LABELS).join(', ')})`);
  }
  if (values.person !== undefined)
    refuse('--person', await personProblem(store, schools, values.person, all));
  if (teamId !== undefined) {
    const problem = await teamProblem(store, schools, teamId, all);
    refuse('--team', problem && `${problem} (rostercal feeds list shows each team's id beside its name)`);
  }
  if (values.template !== undefined)
    refuse(
      '--template',
      await templateProblem(store, templateNames({ dir: dir ?? null }), values.template, all),
    );
}

/** An ISO date or date-time; one without an offset is UTC. */
function parseSince(text: string): string {
  const iso = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.exec(text.trim());
  if (!iso)
    throw new UsageError(
      `--since must be an ISO date or date-time (2026-11-01, 2026-11-01T08:00Z), got ${JSON.stringify(terminalSafe(text))}`,
    );
  const withZone =
    iso[1] === undefined ? `${text.trim()}T00:00Z` : iso[4] === undefined ? `${text.trim()}Z` : text.trim();
  const ms = Date.parse(withZone);
  if (!Number.isFinite(ms) || !realDay(text.trim().slice(0, 10)))
    throw new UsageError(`--since is not a real date: ${JSON.stringify(terminalSafe(text))}`);
  // Nothing is recorded after now: a future --since would print "no audit records", read as "nobody did
  // anything" (an outside tester's --since 2099-01-01). A bare date may be today somewhere (UTC+14) before it
  // is today in UTC, so a date is refused only past the furthest zone's today; a time past now plus a minute.
  const latest = Date.now() + (iso[1] === undefined ? FURTHEST_AHEAD_MS : CLOCK_SLACK_MS);
  if (ms > latest)
    throw new UsageError(
      `--since ${JSON.stringify(terminalSafe(text))} is in the future (now is ${new Date().toISOString().slice(0, 16)}Z): nothing is recorded after now`,
    );
  return new Date(ms).toISOString();
}

/** How far the furthest zone's clock runs ahead of UTC (Kiribati, UTC+14). */
const FURTHEST_AHEAD_MS = 14 * 3_600_000;
/** A little leeway for a clock read on another machine. */
const CLOCK_SLACK_MS = 60_000;

const pad = (n: number) => String(n).padStart(2, '0');

/** `2026-11-23 22:40:05 +11:00` in the zone. */
function localTime(at: string, timeZone: string): string {
  const ms = Date.parse(at);
  const w = localClock(ms, timeZone);
  const off = offsetMinutes(ms, timeZone);
  const a = Math.abs(off);
  return `${w.year}-${pad(w.month)}-${pad(w.day)} ${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)} ${off < 0 ? '-' : '+'}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}
