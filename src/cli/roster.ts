// `rostercal roster`: print a team's roster, a session's attendance sheet or a fixture's match-day sheet as PDF,
// from the local store (run `rostercal sync` first), or every visible team's roster into a directory.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import {
  fontSources,
  generateRoster,
  loadAllTemplates,
  preloadFonts,
  RosterError,
  TemplateError,
  templateFor,
  visibleTeams,
} from '../rosters/index.ts';
import { openStore, type Store } from '../store/index.ts';

const USAGE = `usage: rostercal roster --team ID [--session ID] [--template NAME] [--school ID] -o FILE.pdf
       rostercal roster --all [--template NAME] [--school ID] -o DIR/
       rostercal roster --templates

Prints a PDF roster from the local store (fill it with \`rostercal sync\`).

options:
  --team ID            the team
  --session ID         one of the team's sessions (attendance and match-day sheets)
  --template NAME      team-roster (default), attendance-sheet (default with --session), match-day-sheet,
                       medical-and-guardian-contacts, or one of the school's own
  --school ID          the school (needed when the store holds several)
  --all                one PDF per visible (not hidden) team, into the directory given with -o
  -o, --output PATH    the PDF file, "-" for standard output, or a directory with --all
  --templates-dir DIR  the school's own templates (default: $ROSTER_TEMPLATES_DIR)
  --templates          list the available templates (and any invalid template files) and exit
  --fonts              list the embedded fonts and their licences and exit
  -h, --help           this help`;

function parseId(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`--${name} must be a number, got ${JSON.stringify(text)}`);
  return Number(text);
}

class UsageError extends Error {}

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

async function withStore<T>(fn: (store: Store, defaultSchool: string | null) => Promise<T>): Promise<T> {
  const config = await loadConfig();
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    return await fn(store, config.schools.length === 1 ? config.schools[0]!.id : null);
  } finally {
    await store.close();
  }
}

export async function run(argv: string[]): Promise<number> {
  let values: {
    team?: string;
    session?: string;
    template?: string;
    school?: string;
    all?: boolean;
    output?: string;
    'templates-dir'?: string;
    templates?: boolean;
    fonts?: boolean;
    help?: boolean;
  };
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
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
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    console.error(`rostercal roster: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const source = { dir: values['templates-dir'] ?? undefined };

  if (values.fonts) {
    for (const f of fontSources) console.log(`${f.package}: ${f.files.join(', ')} (${f.licence})`);
    return 0;
  }
  if (values.templates) {
    try {
      const { templates, errors } = loadAllTemplates(source);
      for (const t of templates) {
        const session = t.session === 'none' ? '' : ` [session: ${t.session}]`;
        console.log(`${t.name.padEnd(32)} ${t.title}${session}`);
      }
      for (const e of errors) console.error(e);
      return errors.length > 0 ? 1 : 0;
    } catch (err) {
      console.error(`rostercal roster: ${(err as Error).message}`);
      return 1;
    }
  }

  try {
    if (!values.output)
      throw new UsageError(
        'say where the PDF goes: -o FILE.pdf, -o - (standard output), or -o DIR/ with --all',
      );
    const teamId = parseId('team', values.team);
    const sessionId = parseId('session', values.session);
    if (values.all) {
      if (teamId !== undefined || sessionId !== undefined)
        throw new UsageError('--all prints every team: leave out --team and --session');
      if (values.output === '-')
        throw new UsageError('--all writes one file per team: -o must be a directory');
      return await printAll(values.output, values.template ?? 'team-roster', values.school, source);
    }
    if (teamId === undefined) throw new UsageError('say which team: --team ID (or --all)');
    const output = values.output;
    return await withStore(async (store, defaultSchool) => {
      const roster = await generateRoster(store, {
        schoolId: values.school ?? defaultSchool,
        teamId,
        sessionId: sessionId ?? null,
        template: values.template ?? null,
        ...source,
      });
      if (output === '-') {
        await writeStdout(roster.pdf);
      } else {
        await writeAtomically(resolve(output), roster.pdf);
        console.error(
          `wrote ${output} (${roster.template.title}, ${roster.data.team.name}, ${roster.pdf.length} bytes)`,
        );
      }
      return 0;
    });
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`rostercal roster: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof RosterError || err instanceof TemplateError) {
      console.error(`rostercal roster: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

async function printAll(
  dir: string,
  templateName: string,
  school: string | undefined,
  source: { dir?: string },
): Promise<number> {
  const template = templateFor(templateName, source);
  if (template.session === 'required' || template.session === 'fixture') {
    throw new UsageError(`the "${template.name}" template is for one session; --all prints team templates`);
  }
  const outDir = resolve(dir);
  await mkdir(outDir, { recursive: true });
  return withStore(async (store, defaultSchool) => {
    const { school: s, teams } = await visibleTeams(store, school ?? defaultSchool);
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
        await writeAtomically(join(outDir, roster.fileName), roster.pdf);
      } catch (err) {
        failed++;
        console.error(`\nteam ${team.id} (${team.name}): ${(err as Error).message}`);
      }
      done++;
      if (tty) process.stderr.write(`\r${done}/${teams.length} rosters`);
    }
    if (tty) process.stderr.write('\n');
    const secs = ((performance.now() - started) / 1000).toFixed(1);
    console.error(
      `wrote ${done - failed} of ${teams.length} ${template.name} PDFs for ${s.name} to ${outDir} in ${secs} s`,
    );
    return failed > 0 ? 1 : 0;
  });
}
