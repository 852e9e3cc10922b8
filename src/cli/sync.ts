// `rostercal sync`: pull every configured school (or one) into the store now, then run the after-pull steps
// listed in STEPS (pushing, with its --dry-run & co.).

import { clockStartingAt } from '../config/sandbox-clock.ts';
import { type Config, describeConfig } from '../config.ts';
import type { AfterPullStep } from '../jobs/after-pull-step.ts';
import type { PullSummary } from '../jobs/pull-summary.ts';
import { createLogger } from '../log.ts';
import { pushStep } from '../push/triggers.ts';
import type { Store } from '../store/types.ts';
import { PullBusyError, PullLeaseLostError, pullSchool } from '../sync/pull.ts';
import { formatSummary, progressWriter } from '../sync/report.ts';
import { clientForSchool, startDemoUpstream } from '../sync/school-upstream.ts';
import { printError, printJson, printLines } from '../terminal.ts';
import { defineCommand, EXIT, numberOption, UsageError, withStore } from './command.ts';

/** What runs after each pull here, in order. (`rostercal serve` also re-renders feeds: see src/running-service.ts.) */
const STEPS: readonly AfterPullStep[] = [pushStep];

function usage(): string {
  const extra = STEPS.flatMap((s) =>
    Object.entries(s.options ?? {}).map(([name, o]) => `  --${name.padEnd(15)} ${o.help}`),
  );
  return [
    'usage: rostercal sync [--school ID] [--full] [--json] [--wait SECONDS]',
    '',
    'Pulls each configured school (or the one named) from its upstream service into the store now.',
    'Without a configuration it pulls the demo school from an in-process sandbox into DATA_DIR.',
    '',
    'options:',
    '  --school ID       only this school',
    '  --full            a full pull: everything in the sync window, deletions detected (default: changes only;',
    "                    a school's first pull is always full)",
    '  --json            print the run summaries as JSON on stdout (progress still goes to stderr)',
    '  --wait SECONDS    when another process is pulling the school, wait up to this long for it to end',
    '                    (default: say so and exit 1 at once)',
    ...extra,
    '  -h, --help        this help',
    '',
    'Exit status: 0 when every pull succeeded (a suspicious run, which deleted nothing, counts as done),',
    '1 when any pull or after-pull step failed, 2 for bad usage or configuration.',
  ].join('\n');
}

const stepOptions: Record<string, { type: 'boolean' | 'string' }> = Object.fromEntries(
  STEPS.flatMap((s) => Object.entries(s.options ?? {}).map(([name, o]) => [name, { type: o.type }])),
);

type Flags = Record<string, string | boolean | undefined>;

export const run = defineCommand({
  name: 'sync',
  usage,
  options: {
    school: { type: 'string' },
    full: { type: 'boolean' },
    json: { type: 'boolean' },
    wait: { type: 'string' },
    ...stepOptions,
  },
  async run({ values, config: loadConfig }) {
    const flags = values as Flags;
    const wait = numberOption('--wait', values.wait, { integer: false });
    const config = await loadConfig();
    const wanted = typeof flags.school === 'string' ? flags.school : undefined;
    const selected = wanted ? config.schools.filter((s) => s.id === wanted) : config.schools;
    if (selected.length === 0) {
      const known = config.schools.map((s) => s.id).join(', ');
      throw new UsageError(`no school "${wanted}" in the configuration (known: ${known})`);
    }
    return withStore(config, (store) => syncSchools(store, { ...config, schools: selected }, flags, wait));
  },
});

// Ctrl-C is not intercepted: dying mid-resource rolls that resource back, which is what an interrupted pull
// should do; the run record is closed as interrupted by a later pull.
async function syncSchools(
  store: Store,
  config: Config,
  flags: Flags,
  waitSeconds: number | undefined,
): Promise<number> {
  // A pull records its run before anything else: a store that refuses writes gets no run, so say it here.
  if (store.readOnly)
    throw new Error(
      `nothing was pulled, and no run could be recorded: the store can be read but not written (${store.readOnly})`,
    );
  // Text, not JSON: these lines share the terminal (or the pipe) with the progress and the summary.
  const log = createLogger({
    name: 'sync',
    level: config.logLevel ?? 'warn',
    destination: 2,
    format: 'text',
  });
  log.debug({ config: describeConfig(config) }, 'configuration');
  const print = (line: string) => printLines(line, flags.json ? 'stderr' : 'stdout');
  const demo = await startDemoUpstream(config);
  // The pull's window and stamps on serve's clock: SANDBOX_NOW against the sandbox, else the real one.
  const now = clockStartingAt(config.sandboxNow ?? null);
  const summaries: PullSummary[] = [];
  let ok = true;
  try {
    for (const school of demo.config.schools) {
      if (school.demo && !flags.json) printError(`${school.id}: demo sandbox at ${demo.url}`);
      const progress = progressWriter(process.stderr, school.id);
      let summary: PullSummary;
      try {
        summary = await pullSchool({
          store,
          client: clientForSchool(school, log),
          school,
          kind: flags.full ? 'full' : 'incremental',
          now,
          onProgress: progress,
          log,
          ...(waitSeconds === undefined ? {} : { whenBusy: waitSeconds * 1000 }),
          onWait: (holder) =>
            printError(
              `${school.id}: waiting for the pull already running (${holder.owner}, since ${holder.since})…`,
            ),
        });
      } catch (err) {
        if (err instanceof PullLeaseLostError) {
          // Stalled past its lease and taken over: it wrote nothing since, and the pull that took over goes on.
          progress.clear();
          printError(`rostercal sync: ${school.id}: ${err.message}`);
          ok = false;
          continue;
        }
        if (!(err instanceof PullBusyError)) throw err;
        progress.clear();
        printError(
          `rostercal sync: ${school.id}: ${err.message}; nothing was pulled. ` +
            (waitSeconds === undefined
              ? 'Try again when it ends, or use --wait SECONDS.'
              : `It did not end within ${waitSeconds} s.`),
        );
        ok = false;
        continue;
      }
      progress.clear();
      summaries.push(summary);
      if (summary.status === 'failed') ok = false;
      if (!flags.json) printLines(formatSummary(summary, school.name));
      for (const step of STEPS) {
        if (!(await step.run({ store, school, summary, log, flags, print, now, dataDir: config.dataDir })))
          ok = false;
      }
    }
  } finally {
    await demo.close();
  }
  if (flags.json) printJson(summaries.length === 1 ? summaries[0] : summaries);
  return ok ? EXIT.ok : EXIT.failure;
}
