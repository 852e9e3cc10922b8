// `rostercal roster`: print a team's roster, a session's attendance sheet or a fixture's match-day sheet as PDF,
// from the local store (run `rostercal sync` first), or every visible team's roster into a directory.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { auditCommandLine } from '../identity/command-line-audit.ts';
import {
  fontSources,
  generateRoster,
  loadAllTemplates,
  preloadFonts,
  type RosterOptions,
  templateFor,
  visibleTeams,
} from '../rosters/index.ts';
import type { RosterTemplate } from '../rosters/template.ts';
import type { Store } from '../store/index.ts';
import { printError, printLines } from '../terminal.ts';
import { defineCommand, EXIT, numberOption, UsageError, withStore } from './command.ts';

const USAGE = `usage: rostercal roster --team ID [--session ID] [--template NAME] [--school ID] -o FILE.pdf
       rostercal roster --all [--template NAME] [--school ID] -o DIR/
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
  -o, --output PATH    the PDF file, "-" for standard output, or a directory with --all
  --templates-dir DIR  the school's own templates (default: $ROSTER_TEMPLATES_DIR)
  --templates          list the available templates (and any invalid template files) and exit
  --fonts              list the embedded fonts and their licences and exit
  -h, --help           this help`;

async function writeAtomically(path: string, data: Buffer): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, data);
  await rename(tmp, path);
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
        'say where the PDF goes: -o FILE.pdf, -o - (standard output), or -o DIR/ with --all',
      );
    const teamId = numberOption('--team', values.team);
    const sessionId = numberOption('--session', values.session);
    const school = values.school ?? (config.schools.length === 1 ? config.schools[0]!.id : null);
    const sensitiveRosters = (id: string) => config.schools.some((s) => s.id === id && s.rosters.sensitive);
    const eventTemplates = (id: string) => config.schools.find((s) => s.id === id)?.eventTemplates;
    // Whoever runs the command reads the store itself, medical data included: sheets mark it where the school keeps it.
    const mayShowMedical = true;
    if (values.all) {
      if (teamId !== undefined || sessionId !== undefined)
        throw new UsageError('--all prints every team: leave out --team and --session');
      if (values.output === '-')
        throw new UsageError('--all writes one file per team: -o must be a directory');
      const template = templateFor(values.template ?? 'team-roster', source);
      if (template.session === 'required' || template.session === 'fixture')
        throw new UsageError(
          `the "${template.name}" template is for one session; --all prints team templates`,
        );
      return withStore(config, (store) =>
        printAll(store, values.output!, template, school, {
          ...source,
          sensitiveRosters,
          eventTemplates,
          mayShowMedical,
        }),
      );
    }
    if (teamId === undefined) throw new UsageError('say which team: --team ID (or --all)');
    const output = values.output;
    return withStore(config, async (store) => {
      const roster = await generateRoster(store, {
        schoolId: school,
        sensitiveRosters,
        eventTemplates,
        mayShowMedical,
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
        const s = roster.data.session;
        const session = s
          ? `, session ${s.id} on ${s.start.slice(0, 10)}${s.cancelled ? ', CANCELLED' : ''}`
          : '';
        printError(
          `wrote ${output} (${roster.template.title}, ${roster.data.team.name}${session}, ${roster.pdf.length} bytes)`,
        );
      }
      return EXIT.ok;
    });
  },
});

async function printAll(
  store: Store,
  dir: string,
  template: RosterTemplate,
  school: string | null,
  source: Pick<RosterOptions, 'dir' | 'sensitiveRosters' | 'eventTemplates' | 'mayShowMedical'>,
): Promise<number> {
  const outDir = resolve(dir);
  await mkdir(outDir, { recursive: true });
  const { school: s, teams } = await visibleTeams(store, school);
  preloadFonts();
  const started = performance.now();
  const tty = process.stderr.isTTY;
  let failed = 0;
  let done = 0;
  for (const team of teams) {
    try {
      const roster = await generateRoster(store, {
        schoolId: s.id,
        teamId: team.id,
        template: template.name,
        ...source,
      });
      // Audited before the file exists: no record, no roster.
      await auditCommandLine(store, {
        action: 'roster',
        schoolId: s.id,
        teamId: team.id,
        template: roster.template.name,
        detail: 'rostercal roster --all',
      });
      await writeAtomically(join(outDir, roster.fileName), roster.pdf);
    } catch (err) {
      failed++;
      if (tty) process.stderr.write('\n');
      printError(`team ${team.id} (${team.name}): ${(err as Error).message}`);
    }
    done++;
    if (tty) process.stderr.write(`\r${done}/${teams.length} rosters`);
  }
  if (tty) process.stderr.write('\n');
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  printError(
    `wrote ${done - failed} of ${teams.length} ${template.name} PDFs for ${s.name} to ${outDir} in ${secs} s`,
  );
  return failed > 0 ? EXIT.failure : EXIT.ok;
}
