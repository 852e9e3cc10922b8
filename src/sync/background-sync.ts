// Everything `rostercal serve` needs from the sync side, in one call: the demo sandbox when the configuration
// has a demo school, one upstream client per school, the scheduler, and a first pull where one is due.
import type { Config, SchoolConfig } from '../config.ts';
import type { JobDefinition } from '../jobs/job.ts';
import type { PullSummary } from '../jobs/pull-summary.ts';
import { type Logger, silentLogger } from '../log.ts';
import type { Store } from '../store/types.ts';
import type { UpstreamClient } from '../upstream/api.ts';
import { type FireEvent, type SchedulerHandle, startScheduler } from './scheduler.ts';
import { clientForSchool, startDemoUpstream } from './school-upstream.ts';
import { runStartupPulls } from './startup-pulls.ts';
import { startupWidth } from './startup-width.ts';

export interface SyncServiceOptions {
  config: Config;
  store: Pick<Store, 'dialect' | 'fires' | 'pullTurns' | 'records' | 'runs' | 'transaction'>;
  log?: Logger;
  /**
   * `auto` (default): at start, a full pull of every demo school (its sandbox was just generated) and of every
   * school that has no run yet; the others wait for their schedule. `none`: only the schedule.
   */
  initialPull?: 'auto' | 'none';
  /** The demo sandbox's port (default: any free one). */
  demoPort?: number;
  extraJobs?: (school: Config['schools'][number]) => JobDefinition[];
  onPull?: (school: Config['schools'][number], summary: PullSummary) => void | Promise<void>;
  storeOutputs?: (school: Config['schools'][number]) => Promise<void>;
  whilePulling?: (school: Config['schools'][number]) => () => void;
  onFire?: (event: FireEvent) => void;
  /** The service's clock (config.sandboxNow): pulls' windows and stamps follow it. Default: the real one. */
  now?: () => Date;
}

export interface SyncService {
  /** The configuration with demo schools pointed at the running sandbox: hand this to the web app. */
  config: Config;
  /** The demo sandbox's base URL, or null. */
  demoUrl: string | null;
  scheduler: SchedulerHandle;
  /** Settles when the start-up pulls are done (never rejects; failures are in the runs and job status). */
  initialPulls: Promise<void>;
  /** The school's upstream client, shared with its pulls (one pace): for writes made on behalf of people. */
  clientFor(school: SchoolConfig): UpstreamClient;
  /** Stops the scheduler (waiting for running jobs), then the demo sandbox. */
  stop(): Promise<void>;
}

/** What an incremental fire of a school whose start-up pull has not started yet says (the log, the job's status). */
export const FOLDED =
  "folded into this school's start-up pull, still to start (a full pull: it reads everything)";

/**
 * What an incremental fire of a school whose start-up pull is running says: that pull began reading before the
 * fire, so it may miss what the fire would read; one incremental pull follows it for every such fire. (Let pass
 * as "another pull of this school is running", 500 schools' fires meanwhile read as misses in bench:fleet, and
 * an edit made during a school's start-up pull waited for the next fire.)
 */
export const QUEUED =
  "folded into the incremental pull queued behind this school's start-up pull, running (one for all such fires)";

/**
 * The schools serve pulls at start: every demo school (its sandbox was just generated), and each that never
 * completed a full pull or whose last pull died with its process; read for all schools in one query.
 */
async function startupDue(store: SyncServiceOptions['store'], schools: readonly SchoolConfig[]) {
  const pulls = await store.runs.lastPulls(schools.map((s) => s.id));
  return schools.filter((school) => {
    const p = pulls.get(school.id);
    return school.demo || !p?.completedFull || p.last?.status === 'interrupted';
  });
}

export async function startSyncService(opts: SyncServiceOptions): Promise<SyncService> {
  const log = (opts.log ?? silentLogger).child({ component: 'sync' });
  const demo = await startDemoUpstream(
    opts.config,
    opts.demoPort === undefined ? {} : { port: opts.demoPort },
  );
  const config = demo.config;
  if (demo.url) log.info({ url: demo.url }, 'demo sandbox started');

  const clients = new Map<string, UpstreamClient>();
  const clientFor = (school: SchoolConfig) => {
    let c = clients.get(school.id);
    if (!c) {
      c = clientForSchool(school, log);
      clients.set(school.id, c);
    }
    return c;
  };
  // Schools due a start-up pull (never pulled completely, or the last pull died with its process), read before
  // the first fire: until its start-up pull starts, a school's incremental fires are folded into it (that full
  // pull, after the fire's moment, reads everything the fire would), each said as such; with 500 schools they
  // would otherwise each start a full pull of their own at once, on top of the bounded start-up ones.
  const due = opts.initialPull === 'none' ? [] : await startupDue(opts.store, config.schools);
  const waiting = new Set(due.map((s) => s.id));
  // Schools whose start-up pull is running, and whether a fire came meanwhile (then one incremental follows).
  const running = new Map<string, { fired: boolean }>();
  const foldedInto = (id: string): string | null => {
    if (waiting.has(id)) return FOLDED;
    const r = running.get(id);
    if (!r) return null;
    r.fired = true;
    return QUEUED;
  };
  let scheduler: SchedulerHandle;
  try {
    scheduler = await startScheduler({
      store: opts.store,
      config,
      log,
      clientFor,
      ...(opts.extraJobs ? { extraJobs: opts.extraJobs } : {}),
      ...(opts.onPull ? { onPull: opts.onPull } : {}),
      ...(opts.storeOutputs ? { storeOutputs: opts.storeOutputs } : {}),
      ...(opts.whilePulling ? { whilePulling: opts.whilePulling } : {}),
      ...(opts.onFire ? { onFire: opts.onFire } : {}),
      foldedInto,
      ...(opts.now ? { now: opts.now } : {}),
    });
  } catch (err) {
    await demo.close();
    throw err;
  }

  const followUp = async (schoolId: string) => {
    try {
      const outcome = await scheduler.runNow(schoolId, 'incremental');
      log.info({ schoolId, status: outcome.status }, 'pull queued behind the start-up pull finished');
    } catch (err) {
      log.error({ err, schoolId }, 'pull queued behind the start-up pull failed');
    }
  };

  const initial = async () => {
    // As many at once as the machine has room for (startup-width.ts), one at a time behind each upstream.
    const width = startupWidth();
    try {
      await runStartupPulls(
        due,
        async (school) => {
          waiting.delete(school.id);
          const r = { fired: false };
          running.set(school.id, r);
          log.info({ schoolId: school.id, atOnce: width.now() }, 'start-up pull began');
          let outcome: Awaited<ReturnType<SchedulerHandle['runNow']>>;
          try {
            outcome = await scheduler.runNow(school.id, 'full');
          } finally {
            // Until here a fire is still queued behind it (not a pull of its own, then a second one from here).
            running.delete(school.id);
          }
          log.info({ schoolId: school.id, status: outcome.status }, 'start-up pull finished');
          // The fires' pull, outside the start-up slot (as their own would have been), not waited for.
          if (r.fired) void followUp(school.id);
        },
        {
          atOnce: width.now,
          onError: (school, err) => log.error({ err, schoolId: school.id }, 'start-up pull failed'),
        },
      );
    } finally {
      width.stop();
    }
  };
  const initialPulls = initial().catch((err) => log.error({ err }, 'start-up pulls failed'));

  return {
    config,
    demoUrl: demo.url,
    scheduler,
    initialPulls,
    clientFor,
    stop: async () => {
      await scheduler.stop();
      await demo.close();
    },
  };
}
