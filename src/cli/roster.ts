// `rostercal roster`: print a team's roster, a session's attendance sheet or a fixture's match-day sheet as PDF,
// from the local store (run `rostercal sync` first); or into a directory, every visible team's roster (--all) or
// the sheets of every session of a day (--date).
import { existsSync, statSync } from 'node:fs';
import { lstat, mkdir, readlink, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { clockStartingAt } from '../config/sandbox-clock.ts';
import { auditCommandLine } from '../identity/command-line-audit.ts';
import {
  fontSources,
  generateRoster,
  loadAllTemplates,
  preloadFonts,
  type Roster,
  type RosterOptions,
  sheetsOfDay,
  templateFor,
  visibleTeams,
} from '../rosters/index.ts';
import type { RosterTemplate } from '../rosters/template.ts';
import type { Store } from '../store/index.ts';
import { printError, printLines } from '../terminal.ts';
import { daysInMonth, hourMinute } from '../util/time-zone.ts';
import { defineCommand, EXIT, idOption, UsageError, withStore } from './command.ts';

const USAGE = `usage: rostercal roster --team ID [--session ID] [--template NAME] [--school ID] -o FILE.pdf
       rostercal roster --all [--template NAME] [--school ID] -o DIR/
       rostercal roster --date YYYY-MM-DD [--template NAME] [--school ID] -o DIR/
       rostercal roster --templates

Prints a PDF roster from the local store (fill it with \`rostercal sync\`).

options:
  --team ID            the team
  --session ID         one of the team's sessions (attendance and match-day sheets); without it, a session
                       template prints the next session that is not cancelled (\`rostercal sessions --team ID\`
                       lists them)
  --template NAME      team-roster (default), attendance-sheet (default with --session), match-day-sheet,
                       medical-and-guardian-contacts, or one of the school's own
  --school ID          the school (needed when the store holds several)
  --all                one PDF per visible (not hidden) team, into the directory given with -o
  --date YYYY-MM-DD    every session starting that day (the school's time zone): one PDF per session and team
                       into the directory given with -o, named from the start time (1600-u14-netball-…pdf) so
                       they list and print in the evening's order; the template defaults to attendance-sheet;
                       cancelled sessions (and practices, for match-day-sheet) are left out and counted
  -o, --output PATH    the PDF file, "-" for standard output, or a directory with --all or --date
  --templates-dir DIR  the school's own templates (default: $ROSTER_TEMPLATES_DIR)
  --templates          list the available templates (and any invalid template files) and exit
  --fonts              list the embedded fonts and their licences and exit
  -h, --help           this help`;

/**
 * A regular file is replaced whole (a reader never sees half a PDF); what is not one is never renamed over: a link
 * is written through, a device or pipe written into (renaming over /dev/full as root made it a plain file).
 */
async function writeAtomically(path: string, data: Buffer, links = 0): Promise<void> {
  const found = await lstat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (found?.isSymbolicLink()) {
    // Followed by hand: the file behind a link may not exist yet (realpath would refuse it).
    if (links >= 40) throw new Error(`${path}: too many symbolic links`);
    return writeAtomically(resolve(dirname(path), await readlink(path)), data, links + 1);
  }
  if (found?.isDirectory())
    throw new UsageError(
      `${path} is a directory: -o names the PDF file (a directory only with --all or --date)`,
    );
  if (found && !found.isFile()) return writeFile(path, data);
  if (!found && !existsSync(dirname(path)))
    throw new UsageError(`${dirname(path)} does not exist: -o names a file in a directory that does`);
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, data);
  await rename(tmp, path);
}

/** -o with --all or --date: a directory, never '-', a file, or a name that only a file would have (x.pdf). */
function outDirOption(what: string, output: string): void {
  const isDir = existsSync(output) && statSync(output).isDirectory();
  if (output === '-' || (existsSync(output) && !isDir) || (!isDir && /\.pdf$/i.test(output)))
    throw new UsageError(`${what}: -o must be a directory (-o DIR/), got ${JSON.stringify(output)}`);
}

function writeStdout(data: Buffer): Promise<void> {
  return new Promise((resolveWrite, reject) => {
    process.stdout.write(data, (err) => (err ? reject(err) : resolveWrite()));
  });
}

export const run = defineCommand({
  name: 'roster',
  usage: USAGE,
  options: {
    team: { type: 'string' },
    session: { type: 'string' },
    template: { type: 'string' },
    school: { type: 'string' },
    all: { type: 'boolean' },
    date: { type: 'string' },
    output: { type: 'string', short: 'o' },
    'templates-dir': { type: 'string' },
    templates: { type: 'boolean' },
    fonts: { type: 'boolean' },
  },
  async run({ values, config: loadConfig }) {
    if (values.fonts) {
      printLines(fontSources.map((f) => `${f.package}: ${f.files.join(', ')} (${f.licence})`));
      return EXIT.ok;
    }
    const config = await loadConfig();
    const source = { dir: values['templates-dir'] ?? config.rosterTemplatesDir ?? null };
    if (values.templates) {
      const { templates, errors } = loadAllTemplates(source);
      printLines(
        templates.map(
          (t) => `${t.name.padEnd(32)} ${t.title}${t.session === 'none' ? '' : ` [session: ${t.session}]`}`,
        ),
      );
      for (const e of errors) printError(e);
      return errors.length > 0 ? EXIT.failure : EXIT.ok;
    }
    if (!values.output)
      throw new UsageError(
        'say where the PDF goes: -o FILE.pdf, -o - (standard output), or -o DIR/ with --all or --date',
      );
    const teamId = idOption('--team', values.team, 'team');
    const sessionId = idOption('--session', values.session, 'session');
    const school = values.school ?? (config.schools.length === 1 ? config.schools[0]!.id : null);
    const sensitiveRosters = (id: string) => config.schools.some((s) => s.id === id && s.rosters.sensitive);
    const eventTemplates = (id: string) => config.schools.find((s) => s.id === id)?.eventTemplates;
    // Whoever runs the command reads the store itself, medical data included: sheets mark it where the school keeps it.
    const mayShowMedical = true;
    // "Next session" and a sheet's date on serve's clock: SANDBOX_NOW against the sandbox, else the real one.
    const now = clockStartingAt(config.sandboxNow ?? null)();
    const options = { ...source, sensitiveRosters, eventTemplates, mayShowMedical, now };
    if (values.date !== undefined) {
      if (values.all || teamId !== undefined || sessionId !== undefined)
        throw new UsageError('--date prints every session of the day: leave out --all, --team and --session');
      outDirOption('--date writes one file per session and team', values.output);
      dayOption(values.date); // a bad day is a usage error before the store opens
      const template = templateFor(values.template ?? 'attendance-sheet', source);
      if (template.session === 'none')
        throw new UsageError(
          `the "${template.name}" template is not for a session; --date prints session templates (attendance-sheet, match-day-sheet)`,
        );
      const batch = { outDir: resolve(values.output), template, source: options };
      return withStore(config, async (store) =>
        printEach(store, { ...batch, ...(await dayBatch(store, school, values.date!, template)) }),
      );
    }
    if (values.all) {
      if (teamId !== undefined || sessionId !== undefined)
        throw new UsageError('--all prints every team: leave out --team and --session');
      outDirOption('--all writes one file per team', values.output);
      const template = templateFor(values.template ?? 'team-roster', source);
      if (template.session === 'required' || template.session === 'fixture')
        throw new UsageError(
          `the "${template.name}" template is for one session; --all prints team templates (--date YYYY-MM-DD prints every session of a day)`,
        );
      const batch = { outDir: resolve(values.output), template, source: options };
      return withStore(config, async (store) =>
        printEach(store, { ...batch, ...(await teamsBatch(store, school)) }),
      );
    }
    if (teamId === undefined) throw new UsageError('say which team: --team ID (or --all, or --date)');
    const output = values.output;
    return withStore(config, async (store) => {
      const roster = await generateRoster(store, {
        schoolId: school,
        sensitiveRosters,
        eventTemplates,
        mayShowMedical,
        now,
        teamId,
        sessionId: sessionId ?? null,
        template: values.template ?? null,
        ...source,
      });
      await auditCommandLine(store, {
        action: 'roster',
        schoolId: roster.data.school.id,
        teamId: roster.data.team.id,
        sessionId: roster.data.session?.id ?? null,
        template: roster.template.name,
        detail: 'rostercal roster',
      });
      if (output === '-') {
        await writeStdout(roster.pdf);
      } else {
        await writeAtomically(resolve(output), roster.pdf);
        // The school's date and times as calendar/ decided them (the UTC date named Saturday a Sunday 02:30).
        const s = roster.data.session;
        const d = roster.data.decision;
        const session = s
          ? `, session ${s.id} on ${d ? `${d.date} ${d.time}` : s.start}${(d?.cancelled ?? s.cancelled) ? ', CANCELLED' : ''}`
          : '';
        printError(
          `wrote ${output} (${roster.template.title}, ${roster.data.team.name}${session}, ${roster.pdf.length} bytes)`,
        );
      }
      return EXIT.ok;
    });
  },
});

function dayOption(text: string): { year: number; month: number; day: number } {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m)
    throw new UsageError(`--date must be a day as YYYY-MM-DD, like 2026-12-02 (got "${text.slice(0, 40)}")`);
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // In the form asked for, but no such day: saying "must be YYYY-MM-DD" of it would contradict what they see.
  const days = daysInMonth(year, month);
  if (!days) throw new UsageError(`--date is not a real date: "${text}" (there is no month ${m[2]})`);
  if (day < 1 || day > days) {
    const name = new Date(Date.UTC(year, month - 1, 1)).toLocaleString('en', {
      month: 'long',
      timeZone: 'UTC',
    });
    throw new UsageError(`--date is not a real date: "${text}" (${name} ${year} has ${days} days)`);
  }
  return { year, month, day };
}

type PrintOptions = Pick<
  RosterOptions,
  'dir' | 'sensitiveRosters' | 'eventTemplates' | 'mayShowMedical' | 'now'
>;

/** One PDF to write: what to print, and what a failure names. */
interface Job {
  label: string;
  roster: Pick<RosterOptions, 'teamId' | 'sessionId'>;
  /** The file name, from the roster made (default its own). */
  fileName?: (roster: Roster) => string;
}

/** What to print: the school, the PDFs, and how the audit and the summary name them. */
interface Plan {
  school: { id: string; name: string };
  jobs: Job[];
  /** The audit record's detail: which command line. */
  detail: string;
  /** What the summary says beside the school ("on 2026-12-02"), and what was left out. */
  scope?: string;
  leftOut?: string[];
}

interface Batch extends Plan {
  outDir: string;
  template: RosterTemplate;
  source: PrintOptions;
}

/**
 * Writes each job's PDF into the directory, each audited before its file exists (no record, no roster); a job that
 * fails is reported and the rest go on. Exit 1 when any failed.
 */
async function printEach(store: Pick<Store, 'records' | 'feeds' | 'access'>, b: Batch): Promise<number> {
  await mkdir(b.outDir, { recursive: true });
  preloadFonts();
  const started = performance.now();
  const tty = process.stderr.isTTY;
  const written = new Set<string>();
  let failed = 0;
  let done = 0;
  for (const job of b.jobs) {
    try {
      const roster = await generateRoster(store, {
        schoolId: b.school.id,
        template: b.template.name,
        ...job.roster,
        ...b.source,
      });
      await auditCommandLine(store, {
        action: 'roster',
        schoolId: b.school.id,
        teamId: roster.data.team.id,
        sessionId: roster.data.session?.id ?? null,
        template: roster.template.name,
        detail: b.detail,
      });
      let name = job.fileName?.(roster) ?? roster.fileName;
      // Two sessions of one team starting at the same minute: the second file says which session it is.
      if (written.has(name)) name = name.replace(/\.pdf$/, `-session-${roster.data.session?.id ?? 0}.pdf`);
      written.add(name);
      await writeAtomically(join(b.outDir, name), roster.pdf);
    } catch (err) {
      failed++;
      if (tty) process.stderr.write('\n');
      printError(`${job.label}: ${(err as Error).message}`);
    }
    done++;
    if (tty) process.stderr.write(`\r${done}/${b.jobs.length} PDFs`);
  }
  if (tty && b.jobs.length > 0) process.stderr.write('\n');
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  const left = b.leftOut?.length ? ` (left out: ${b.leftOut.join(', ')})` : '';
  printError(
    `wrote ${b.jobs.length - failed} of ${b.jobs.length} ${b.template.name} PDFs for ${b.school.name}${b.scope ?? ''} to ${b.outDir} in ${secs} s${left}`,
  );
  return failed > 0 ? EXIT.failure : EXIT.ok;
}

/** Every visible team's roster. */
async function teamsBatch(store: Pick<Store, 'records'>, school: string | null): Promise<Plan> {
  const { school: s, teams } = await visibleTeams(store, school);
  const jobs = teams.map((team) => ({
    label: `team ${team.id} (${team.name})`,
    roster: { teamId: team.id },
  }));
  return { school: s, jobs, detail: 'rostercal roster --all' };
}

/** Every sheet of a day, each file named from its session's start so the folder lists in the evening's order. */
async function dayBatch(
  store: Pick<Store, 'records'>,
  school: string | null,
  dayText: string,
  template: RosterTemplate,
): Promise<Plan> {
  const {
    school: s,
    sheets,
    cancelled,
    notFixtures,
  } = await sheetsOfDay(store, school, dayOption(dayText), template);
  const jobs: Job[] = sheets.map(({ session, team }) => {
    const time = hourMinute(Date.parse(session.start), s.timeZone);
    return {
      label: `session ${session.id} at ${time}, team ${team.id} (${team.name})`,
      roster: { teamId: team.id, sessionId: session.id },
      fileName: (roster) => `${time.replace(':', '')}-${roster.fileName}`,
    };
  });
  const leftOut = [
    cancelled > 0 ? `${cancelled} cancelled session${cancelled === 1 ? '' : 's'}` : '',
    notFixtures > 0 ? `${notFixtures} session${notFixtures === 1 ? '' : 's'} that are not fixtures` : '',
  ].filter(Boolean);
  return { school: s, jobs, detail: 'rostercal roster --date', scope: ` on ${dayText}`, leftOut };
}
