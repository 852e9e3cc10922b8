// `rostercal sync`: pull every configured school (or one) into the store now, then run the after-pull steps
// (pushing, once that module registers itself in src/sync/after-pull.ts).
import { parseArgs } from 'node:util';
import { type Config, describeConfig, loadConfig } from '../config.ts';
import { createLogger, type LogLevel } from '../log.ts';
import '../push/register.ts';
import { openStore } from '../store/index.ts';
import { afterPullSteps } from '../sync/after-pull.ts';
import { type PullSummary, pullSchool } from '../sync/pull.ts';
import { formatSummary, progressWriter } from '../sync/report.ts';
import { clientForSchool, startDemoUpstream } from '../sync/upstream.ts';

function usage(): string {
  const extra = afterPullSteps().flatMap((s) =>
    Object.entries(s.options ?? {}).map(([name, o]) => `  --${name.padEnd(15)} ${o.help}`),
  );
  return [
    'usage: rostercal sync [--school ID] [--full] [--json]',
    '',
    'Pulls each configured school (or the one named) from its upstream service into the store now.',
    'Without a configuration it pulls the demo school from an in-process sandbox into DATA_DIR.',
    '',
    'options:',
    '  --school ID       only this school',
    '  --full            a full pull: everything in the sync window, deletions detected (default: changes only;',
    "                    a school's first pull is always full)",
    '  --json            print the run summaries as JSON on stdout (progress still goes to stderr)',
    ...extra,
    '  -h, --help        this help',
    '',
    'Exit status: 0 when every pull succeeded (a suspicious run, which deleted nothing, counts as done),',
    '1 when any pull or after-pull step failed, 2 for bad usage.',
  ].join('\n');
}

export async function run(argv: string[]): Promise<number> {
  const stepOptions: Record<string, { type: 'boolean' | 'string' }> = {};
  for (const step of afterPullSteps()) {
    for (const [name, o] of Object.entries(step.options ?? {})) stepOptions[name] = { type: o.type };
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        school: { type: 'string' },
        full: { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        ...stepOptions,
      },
    }));
  } catch (err) {
    console.error(`rostercal sync: ${(err as Error).message}\n\n${usage()}`);
    return 2;
  }
  if (values.help) {
    console.log(usage());
    return 0;
  }

  const config = await loadConfig();
  const wanted = typeof values.school === 'string' ? values.school : undefined;
  const selected = wanted ? config.schools.filter((s) => s.id === wanted) : config.schools;
  if (selected.length === 0) {
    const known = config.schools.map((s) => s.id).join(', ');
    console.error(`rostercal sync: no school "${wanted}" in the configuration (known: ${known})`);
    return 2;
  }

  const level = (process.env.LOG_LEVEL as LogLevel | undefined) ?? 'warn';
  const log = createLogger({ name: 'sync', level, destination: 2 });
  log.debug({ config: describeConfig(config) }, 'configuration');

  const store = await openStore({
    ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
    dataDir: config.dataDir,
  });
  const demo = await startDemoUpstream({ ...config, schools: selected } as Config);

  // Ctrl-C is not intercepted: dying mid-resource rolls that resource back, which is what an interrupted pull
  // should do; the run record is closed as interrupted by a later pull.
  const summaries: PullSummary[] = [];
  let ok = true;
  try {
    for (const school of demo.config.schools) {
      if (school.demo && !values.json) process.stderr.write(`${school.id}: demo sandbox at ${demo.url}\n`);
      const progress = progressWriter(process.stderr, school.id);
      const summary = await pullSchool({
        store,
        client: clientForSchool(school, log),
        school,
        kind: values.full ? 'full' : 'incremental',
        onProgress: progress,
        log,
      });
      progress.clear();
      summaries.push(summary);
      if (summary.status === 'failed') ok = false;
      if (!values.json) console.log(formatSummary(summary, school.name));

      for (const step of afterPullSteps()) {
        const stepOk = await step.run({
          store,
          school,
          summary,
          log,
          flags: values,
          print: (line) => (values.json ? process.stderr : process.stdout).write(`${line}\n`),
        });
        if (!stepOk) ok = false;
      }
    }
  } finally {
    await demo.close();
    await store.close();
  }
  if (values.json) console.log(JSON.stringify(summaries.length === 1 ? summaries[0] : summaries, null, 2));
  return ok ? 0 : 1;
}
