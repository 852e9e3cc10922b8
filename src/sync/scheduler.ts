// The schedule: node-cron jobs per school (incremental pull, full pull, and whatever later modules add, such as
// push), with overlap prevention, job status in the store, and — on PostgreSQL, through node-cron's RunCoordinator
// backed by the store's job queue (queued-fires.ts) — exactly one run per fire across every replica sharing the
// database. SQLite has one `serve` per file: its fires run where
// they fire, with no election (a `sync` beside it still meets the school's pull lease).

import cron, { type Logger as CronLogger, type RunCoordinator, type ScheduledTask } from 'node-cron';
import type { Config, SchoolConfig } from '../config.ts';
import { processOwner } from '../jobs/heartbeat.ts';
import type { JobDefinition, JobOutcome } from '../jobs/job.ts';
import type { PullKind, PullSummary } from '../jobs/pull-summary.ts';
import { SerialQueues } from '../jobs/serial.ts';
import { type Logger, silentLogger } from '../log.ts';
import type { FireQueue } from '../store/fire-queue.ts';
import type { JobStatusPatch, Store } from '../store/types.ts';
import type { UpstreamClient } from '../upstream/api.ts';
import { Pace, SLOWED_DOWN } from './pace.ts';
import { idleRequestsPerMinute } from './pull/beats.ts';
import { PullBusyError, PullInterruptedError, PullNotNeededError, pullSchool } from './pull.ts';
import { QueuedFires } from './queued-fires.ts';
import { spreadCron } from './spread.ts';

export type FireEvent =
  /** This process's send queued the fire's job: exactly one process's does (fire-queue.ts), which then runs a job. */
  | { type: 'queued'; schoolId: string; job: string; fireTime: string; owner: string }
  /** Another process had queued this fire already: it runs it (or a later fire takes it over). */
  | { type: 'queued-elsewhere'; schoolId: string; job: string; fireTime: string; owner: string }
  /** The job's run began (a pull: it holds the school's lease and recorded its run). */
  | { type: 'started'; schoolId: string; job: string; fireTime: string | null; owner: string }
  | {
      type: 'finished';
      schoolId: string;
      job: string;
      fireTime: string | null;
      owner: string;
      outcome: JobOutcome;
    }
  | {
      type: 'skipped';
      schoolId: string;
      job: string;
      fireTime: string | null;
      owner: string;
      reason: string;
    }
  /** A full fire found another pull running: it asked for a full pull in the store and waits its turn. */
  | {
      type: 'waiting';
      schoolId: string;
      job: string;
      fireTime: string | null;
      owner: string;
      holder: { owner: string; since: string };
    };

export interface SchedulerOptions {
  /** Its dialect decides the election: only a store that replicas share (PostgreSQL) holds one per fire. */
  store: Pick<Store, 'dialect' | 'fires' | 'pullTurns' | 'records' | 'runs' | 'transaction'>;
  config: Pick<Config, 'schools'>;
  /** The upstream client of each school (one per school, reused across runs so its pacing holds). */
  clientFor: (school: SchoolConfig) => UpstreamClient;
  log?: Logger;
  /** Names this replica in claims and logs; default this process's one identity (jobs/heartbeat.ts). */
  owner?: string;
  /** More jobs per school (the push module adds its own here). */
  extraJobs?: (school: SchoolConfig) => JobDefinition[];
  /** Observes every fire: for tests and metrics. */
  onFire?: (event: FireEvent) => void;
  /** Called with each finished pull (for metrics, push-after-pull, caches). */
  onPull?: (school: SchoolConfig, summary: PullSummary) => void | Promise<void>;
  /** A pull's PullOptions.storeOutputs, per school: its failure fails the run. */
  storeOutputs?: (school: SchoolConfig) => Promise<void>;
  /**
   * Called when a pull of the school begins writing (it holds the school's lease); the function it returns, when
   * that pull has ended, its storeOutputs included, whatever its result.
   */
  whilePulling?: (school: SchoolConfig) => () => void;
  /**
   * Why an incremental fire of the school is let pass because a pull still to come does its work (serve's
   * start-up pull, or the pull queued behind it while it runs: background-sync.ts), or null: asked before the
   * fire's pull takes anything, and before whether another pull of the school is running.
   */
  foldedInto?: (schoolId: string) => string | null;
  now?: () => Date;
  /** How long stop() waits for running jobs after interrupting the pulls (default 15 s). */
  stopWaitMs?: number;
}

export interface SchedulerHandle {
  /** Runs a job of a school now, outside the schedule (still serialised with that school's other pulls). */
  runNow(schoolId: string, job: string): Promise<JobOutcome>;
  /**
   * Fires a job as its schedule would at `fireTime`, elected across replicas like every fire (PostgreSQL); null when
   * another replica runs it. A fire this replica lets pass on its own knowledge is let pass before it is queued. For tests and tools that drive fires themselves instead of waiting for the clock.
   */
  fire(schoolId: string, job: string, fireTime: string): Promise<JobOutcome | null>;
  /** Next fire per job, for the admin pages. */
  nextRuns(): { schoolId: string; job: string; nextRunAt: string | null }[];
  /**
   * Fires that could not run and left no run behind (the store failed while electing a runner), by school:
   * cleared by the school's next fire that is elected.
   */
  problems(): Record<string, string>;
  /** The longest gap between a school's next few incremental fires (readiness allows three of them). */
  incrementalIntervalMs(schoolId: string): number | null;
  /** Stops firing, interrupts running pulls (recorded as interrupted), and waits a bounded time for jobs. */
  stop(): Promise<void>;
}

function pullJob(
  opts: SchedulerOptions,
  school: SchoolConfig,
  kind: PullKind,
  /** The pulls of each school in this process, one at a time: a full pull and an incremental one never overlap. */
  pulls: SerialQueues,
  client: () => UpstreamClient,
  signal: AbortSignal,
  owner: string,
  pace: Pace,
): JobDefinition {
  const now = opts.now ?? (() => new Date());
  return {
    name: kind,
    cron: kind === 'full' ? school.schedules.full : school.schedules.incremental,
    // An incremental pull queued behind a running pull would only repeat it. (A full one is never let pass.)
    // foldedInto first: behind serve's start-up pull, running, the fire is queued (one pull for all), not let pass.
    skipReason: () =>
      kind !== 'incremental'
        ? null
        : (opts.foldedInto?.(school.id) ??
          (pulls.busy(school.id) ? 'another pull of this school is running' : null)),
    ...(kind === 'incremental'
      ? {
          deferredUntil: (at: Date) => {
            const until = pace.deferredUntil(at);
            return until ? { until, why: SLOWED_DOWN } : null;
          },
        }
      : {}),
    reportsStart: true,
    run: async ({ fireTime, log, started, following }) => {
      // A full fire is written down before it waits for anything: if this replica dies first, or another pull
      // holds the school, the next pull to take the lease (any replica, any kind) runs full.
      const answers = kind === 'full' ? now().toISOString() : undefined;
      if (answers) await opts.store.runs.requestFullPull(school.id, answers, owner);
      const pulled = await pulls.run(
        school.id,
        async (): Promise<{ outcome: JobOutcome; summary?: PullSummary }> => {
          let summary: PullSummary;
          const hold: { release?: (() => void) | undefined } = {};
          try {
            summary = await pullSchool({
              store: opts.store,
              client: client(),
              school,
              kind,
              log,
              signal,
              onStart: async () => {
                hold.release = opts.whilePulling?.(school);
                await started();
              },
              ...(answers ? { answers, whenBusy: 'queue' as const } : {}),
              // Scheduled pulls keep each resource's beat, timed from fire to fire (a full one starts them again).
              beatsFrom: fireTime ? new Date(fireTime) : now(),
              onWait: (holder) => {
                log.info(
                  { holder },
                  'another pull of this school is running: this full pull runs when it ends',
                );
                opts.onFire?.({ type: 'waiting', schoolId: school.id, job: kind, fireTime, owner, holder });
              },
              ...(opts.now ? { now: opts.now } : {}),
              ...(opts.storeOutputs ? { storeOutputs: () => opts.storeOutputs!(school) } : {}),
            });
          } catch (err) {
            if (err instanceof PullInterruptedError)
              return {
                outcome:
                  err.runId === null
                    ? {
                        status: 'skipped',
                        error:
                          `stopped before it began: ${err.message}` +
                          (answers ? '; the full pull stays asked for, and the next pull runs it' : ''),
                      }
                    : { status: 'interrupted', error: err.message },
              };
            // The full pull this fire asked for was run by another pull (often this replica's own incremental fire
            // of the same minute, turned full): that run's result is this fire's, named.
            if (err instanceof PullNotNeededError)
              return {
                outcome:
                  err.run && err.run.status !== 'running'
                    ? { status: err.run.status, error: `done by ${err.message}` }
                    : { status: 'skipped', error: err.message },
              };
            // Another replica (or a `rostercal sync`) is pulling this school: this incremental fire would only
            // repeat it.
            if (!(err instanceof PullBusyError)) throw err;
            return { outcome: { status: 'skipped', error: err.message } };
          } finally {
            hold.release?.();
          }
          // Counted from the fire (the schedule's clock), so the doubling lines up with the fires it lets pass.
          pace.afterPull(fireTime ? new Date(fireTime) : now(), summary.upstream.throttled);
          const error = summary.status === 'failed' ? (summary.errors.at(-1) ?? 'failed') : summary.warning;
          return { outcome: { status: summary.status, error }, summary };
        },
      );
      // After the school's lock is let go: a slow push must not make the next pulls' fires pass (they find the
      // lock busy) and so hold back the next edit's way to the feeds. Pushes keep their own order (push/triggers.ts).
      const { summary } = pulled;
      if (summary && opts.onPull) following((async () => opts.onPull!(school, summary))());
      return pulled.outcome;
    },
  };
}

/**
 * Queues a fire across replicas: its job's id when this replica's insert won it, else null; null itself where
 * nothing is shared to elect over (SQLite: one process).
 */
type Elect = ((fireTime: string) => Promise<string | null>) | null;

/** One scheduled job of a school: its cron task, and how a fire of it is elected across replicas. */
interface Entry {
  school: SchoolConfig;
  job: JobDefinition;
  task: ScheduledTask;
  elect: Elect;
}

/**
 * Runs the jobs' fires: what each run writes to the job's status, the fires it lets pass and why, and the runs still
 * going (stop waits for them).
 */
class JobRunner {
  readonly running = new Set<Promise<unknown>>();
  /** Fires that could not run and left no run behind, by school (SchedulerHandle.problems). */
  readonly problems = new Map<string, string>();
  readonly #opts: SchedulerOptions;
  readonly #log: Logger;
  readonly #owner: string;
  readonly #now: () => Date;

  constructor(opts: SchedulerOptions, log: Logger, owner: string) {
    this.#opts = opts;
    this.#log = log;
    this.#owner = owner;
    this.#now = opts.now ?? (() => new Date());
  }

  /**
   * A fire the store failed before any run of it was recorded (electing it, or a pull taking the school): said
   * through our logger, kept for /readyz (no run can record it), and told to onFire as a skip.
   */
  storeFailed(school: SchoolConfig, job: string, fireTime: string, err: unknown): JobOutcome {
    const why = err instanceof Error ? err.message : String(err);
    this.problems.set(school.id, `scheduled ${job} fire of ${fireTime} skipped: the store failed (${why})`);
    this.#log.error({ err, schoolId: school.id, job, fireTime }, 'fire skipped: the store failed');
    const reason = `store: ${why}`;
    // The job's status says it too when it can (a dry job-queue pool leaves the store's own pool working); not
    // awaited: node-cron waits on an election, and a store that is down would hold it into the next fire.
    this.#track(
      this.saveStatus(school.id, job, { lastSkippedAt: this.#now().toISOString(), lastSkipReason: reason }),
    );
    this.#opts.onFire?.({ type: 'skipped', schoolId: school.id, job, fireTime, owner: this.#owner, reason });
    return { status: 'skipped', error: reason };
  }

  async saveStatus(schoolId: string, job: string, patch: Omit<JobStatusPatch, 'schoolId' | 'job'>) {
    try {
      await this.#opts.store.runs.saveJobStatus({ schoolId, job, ...patch });
    } catch (err) {
      this.#log.error({ err, schoolId, job }, 'could not save job status');
    }
  }

  /** A fire let pass: said in the log, the job's status (with why) and to onFire; the job's last run stands. */
  async skipped(
    school: SchoolConfig,
    job: string,
    fireTime: string | null,
    reason: string,
    /** cron's own overlap: the skipped fire's moment and the fire after it. */
    overlap?: { at: Date; next: Date | null },
  ) {
    this.#log.info(
      { schoolId: school.id, job, ...(fireTime ? { fireTime } : {}) },
      `fire skipped: ${reason}`,
    );
    await this.saveStatus(school.id, job, {
      lastSkippedAt: (overlap?.at ?? this.#now()).toISOString(),
      lastSkipReason: reason,
      // The next run the fire still running saved is this skipped one: status would show it as still ahead.
      ...(overlap?.next ? { nextRunAt: overlap.next.toISOString() } : {}),
    });
    this.#opts.onFire?.({ type: 'skipped', schoolId: school.id, job, fireTime, owner: this.#owner, reason });
  }

  #track<T>(p: Promise<T>): Promise<T> {
    this.running.add(p);
    p.finally(() => this.running.delete(p)).catch(() => {});
    return p;
  }

  /** A job's fire; `after` settles when the work that follows its run (see JobContext.following) has too. */
  execute(
    school: SchoolConfig,
    job: JobDefinition,
    task: ScheduledTask | null,
    fireTime: string | null,
  ): { outcome: Promise<JobOutcome>; after: Promise<unknown> } {
    const following: Promise<unknown>[] = [];
    const outcome = this.#track(
      this.#executeJob(school, job, task, fireTime, (work) => {
        following.push(
          this.#track(
            work.catch((err: unknown) =>
              this.#log.error({ err, schoolId: school.id, job: job.name }, 'the work after a job failed'),
            ),
          ),
        );
      }),
    );
    // Whatever the run handed over while it ran (it is in `following` by the time the run has ended).
    const after = outcome.then(
      () => Promise.all(following),
      () => Promise.all(following),
    );
    return { outcome, after };
  }

  /** runNow and fire: the outcome once the work after the run has settled too (a pull's pushes). */
  async executeAll(...args: Parameters<JobRunner['execute']>): Promise<JobOutcome> {
    const { outcome, after } = this.execute(...args);
    await after;
    return outcome;
  }

  /**
   * A fire this replica lets pass on what it alone knows (the job's skipReason: folded into the school's start-up
   * pull, or another pull of the school running here), let pass before it is queued (PostgreSQL), or null. Queued,
   * each cost pg-boss an insert, a fetch, a completion and beats only to be let pass: a fresh replica's 500
   * schools waiting for their start-up pulls sent ~50 such fires a second through the job queue's pool, which ran
   * dry (bench:fleet, 8 Dec: 1,102 fires let pass as "the store failed"). A replica that would run the fire
   * queues it as ever, and runs it.
   */
  async passBeforeQueue(
    school: SchoolConfig,
    job: JobDefinition,
    fireTime: string,
  ): Promise<JobOutcome | null> {
    const reason = job.skipReason?.() ?? null;
    if (reason === null) return null;
    const outcome: JobOutcome = { status: 'skipped', error: reason };
    await this.#track(this.skipped(school, job.name, fireTime, reason));
    this.#opts.onFire?.({
      type: 'finished',
      schoolId: school.id,
      job: job.name,
      fireTime,
      owner: this.#owner,
      outcome,
    });
    return outcome;
  }

  /** Why a fire is let pass before it runs (the upstream asked us to slow down, or the job says so), or null. */
  async #letPass(
    school: SchoolConfig,
    job: JobDefinition,
    task: ScheduledTask | null,
    fireTime: string | null,
  ): Promise<JobOutcome | null> {
    const deferred = fireTime ? (job.deferredUntil?.(new Date(fireTime)) ?? null) : null;
    // A deferred fire names the first fire of the schedule at or after the deferral: status shows it as next run.
    const resumes = deferred
      ? (task?.getNextRuns(64).find((d) => d.getTime() >= deferred.until.getTime()) ?? deferred.until)
      : null;
    const skip =
      deferred && resumes
        ? `slowed down: ${deferred.why} — next pull at ${resumes.toISOString()}`
        : (job.skipReason?.() ?? null);
    if (!skip) return null;
    await this.skipped(school, job.name, fireTime, skip);
    if (resumes) await this.saveStatus(school.id, job.name, { nextRunAt: resumes.toISOString() });
    return { status: 'skipped', error: skip };
  }

  async #executeJob(
    school: SchoolConfig,
    job: JobDefinition,
    task: ScheduledTask | null,
    fireTime: string | null,
    following: (work: Promise<unknown>) => void,
  ): Promise<JobOutcome> {
    const owner = this.#owner;
    const fired = { schoolId: school.id, job: job.name, fireTime, owner };
    const jobLog = this.#log.child({ schoolId: school.id, job: job.name, ...(fireTime ? { fireTime } : {}) });
    const passed = await this.#letPass(school, job, task, fireTime);
    if (passed) {
      this.#opts.onFire?.({ type: 'finished', ...fired, outcome: passed });
      return passed;
    }
    let began = false;
    const started = async () => {
      if (began) return;
      began = true;
      this.problems.delete(school.id);
      // The next fire, not this one: a replica that dies now leaves a next run still ahead, and the run itself
      // reads as interrupted once this process stops beating (the owner below).
      const next = task?.getNextRun() ?? null;
      await this.saveStatus(school.id, job.name, {
        lastStartedAt: this.#now().toISOString(),
        owner: processOwner().id,
        ...(next ? { nextRunAt: next.toISOString() } : {}),
      });
      this.#opts.onFire?.({ type: 'started', ...fired });
    };
    if (!job.reportsStart) await started();
    let outcome: JobOutcome;
    try {
      outcome = await job.run({ fireTime, log: jobLog, started, following });
    } catch (err) {
      // A fire's pull that threw before recording its run: only the store can have failed there (pull.ts).
      if (fireTime && job.reportsStart && !began) return this.storeFailed(school, job.name, fireTime, err);
      jobLog.error({ err }, 'job failed');
      outcome = { status: 'failed', error: err instanceof Error ? err.message : String(err) };
    }
    const next = task?.getNextRun() ?? null;
    if (outcome.status === 'skipped') {
      await this.skipped(school, job.name, fireTime, outcome.error ?? 'no reason given');
      if (next) await this.saveStatus(school.id, job.name, { nextRunAt: next.toISOString() });
    } else {
      await this.saveStatus(school.id, job.name, {
        ...(began ? {} : { lastStartedAt: this.#now().toISOString(), owner: processOwner().id }),
        lastFinishedAt: this.#now().toISOString(),
        lastStatus: outcome.status,
        lastError: outcome.error ?? null,
        ...(next ? { nextRunAt: next.toISOString() } : {}),
      });
    }
    this.#opts.onFire?.({ type: 'finished', ...fired, outcome });
    return outcome;
  }
}

/**
 * Queues a fire of the school's job: exactly one replica sharing the store inserts its job (then takes one from the
 * queue at once). The job's id is made of the job and its fire time, which every replica computes alike (spread.ts:
 * the offset is the school's id's alone).
 */
function electorFor(
  opts: SchedulerOptions,
  runner: JobRunner,
  owner: string,
  queued: QueuedFires,
  school: SchoolConfig,
  job: JobDefinition,
): (fireTime: string) => Promise<string | null> {
  return async (fireTime) => {
    let id: string | null;
    try {
      id = await queued.enqueue({ schoolId: school.id, job: job.name, fireTime });
    } catch (err) {
      // node-cron would print this to the console and skip the fire: ours says it instead.
      runner.storeFailed(school, job.name, fireTime, err);
      return null;
    }
    runner.problems.delete(school.id);
    const won = id !== null;
    opts.onFire?.({
      type: won ? 'queued' : 'queued-elsewhere',
      schoolId: school.id,
      job: job.name,
      owner,
      fireTime,
    });
    return id;
  };
}

/** The cron task of a school's job, at the school's own moments of its schedule, elected across replicas. */
/**
 * node-cron's own messages, into our log: by default it prints coloured lines to the console, and under a slow pull
 * "task still running, new execution blocked by overlap prevention!" came every 10 s, unstructured, beside the
 * JSON log. That overlap is already told (a skipped fire, in the job's status and the run history): debug.
 */
function cronLogger(log: Logger, name: string): CronLogger {
  const at = log.child({ component: 'node-cron', job: name });
  return {
    info: (message) => at.debug(message),
    warn: (message) => (/overlap/.test(message) ? at.debug(message) : at.warn(message)),
    error: (message, err) => at.error({ err: err ?? message }, String(message)),
    debug: (message) => at.debug(String(message)),
  };
}

function scheduleJob(
  runner: JobRunner,
  school: SchoolConfig,
  job: JobDefinition,
  elect: Elect,
  takeNow: () => void,
  log: Logger,
): Entry {
  const name = `${school.id}:${job.name}`;
  // The fire's own moment is the coordinator's key (node-cron's slot): alike on every replica.
  const coordinator: RunCoordinator | null = elect && {
    shouldRun: async (key: string) => {
      const fireTime = key.slice(name.length + 1);
      if (await runner.passBeforeQueue(school, job, fireTime)) return false;
      return (await elect(fireTime)) !== null;
    },
  };
  const task = cron.createTask(
    spreadCron(job.cron, school.id),
    (context) => {
      // Queued (PostgreSQL): this replica inserted the fire's job, and takes one at once. Its run is tracked
      // by the runner, not by this task: a job it takes may be another's, whose run must not hold this task.
      if (coordinator) return takeNow();
      // Only the run: cron's next fire of this job must not wait for the work after it.
      return runner.execute(school, job, task, context.date.toISOString()).outcome;
    },
    {
      name,
      timezone: school.timeZone,
      noOverlap: true,
      logger: cronLogger(log, name),
      ...(coordinator ? { distributed: true, runCoordinator: coordinator } : {}),
    },
  );
  task.on('execution:overlap', (context) => {
    // A full fire waiting its turn already stands for this one (its request is in the store).
    void runner.skipped(
      school,
      job.name,
      null,
      'overlap: the previous fire of this job is still running or waiting',
      { at: context.date, next: task.getNextRun() },
    );
  });
  return { school, job, task, elect };
}

/** A school's jobs: its pulls, one at a time and paced together, and whatever later modules add. */
function schoolJobs(
  opts: SchedulerOptions,
  school: SchoolConfig,
  pulls: SerialQueues,
  signal: AbortSignal,
  owner: string,
): JobDefinition[] {
  const pace = new Pace();
  let client: UpstreamClient | null = null;
  const clientOnce = () => {
    client ??= opts.clientFor(school);
    return client;
  };
  return [
    pullJob(opts, school, 'incremental', pulls, clientOnce, signal, owner, pace),
    pullJob(opts, school, 'full', pulls, clientOnce, signal, owner, pace),
    ...(opts.extraJobs?.(school) ?? []),
  ];
}

/** Stops firing, interrupts the pulls, and waits a bounded time for what still runs. */
async function stopAll(
  entries: Entry[],
  runner: JobRunner,
  stopping: AbortController,
  log: Logger,
  waitMs: number,
): Promise<void> {
  for (const { task } of entries) await task.destroy();
  stopping.abort(new Error('the service is stopping'));
  // Pulls end at once when interrupted; a push (or a store that hangs) gets a bounded wait, never an endless one.
  let timer: NodeJS.Timeout | undefined;
  const late = await Promise.race([
    Promise.allSettled([...runner.running]).then(() => false),
    new Promise<boolean>((r) => {
      timer = setTimeout(() => r(true), waitMs);
    }),
  ]);
  clearTimeout(timer);
  if (late) log.warn({ jobs: runner.running.size, waitMs }, 'scheduler stopped with jobs still running');
  else log.info('scheduler stopped');
}

/** The queue's fires, run through this replica's own entries (the replicas share one configuration). */
function queuedFires(queue: FireQueue, runner: JobRunner, entries: Entry[], log: Logger): QueuedFires {
  return new QueuedFires({
    queue,
    log,
    run: (fire) => {
      const e = entries.find((x) => x.school.id === fire.schoolId && x.job.name === fire.job);
      return e ? runner.execute(e.school, e.job, e.task, fire.fireTime) : null;
    },
  });
}

/** The longest gap between a task's next few fires, or null. */
function longestGapMs(task: ScheduledTask): number | null {
  const runs = task.getNextRuns(4);
  let gap = 0;
  for (let i = 1; i < runs.length; i++) gap = Math.max(gap, runs[i]!.getTime() - runs[i - 1]!.getTime());
  return gap > 0 ? gap : null;
}

export async function startScheduler(opts: SchedulerOptions): Promise<SchedulerHandle> {
  const log = (opts.log ?? silentLogger).child({ component: 'scheduler' });
  const owner = opts.owner ?? processOwner().id;
  const runner = new JobRunner(opts, log, owner);
  const stopping = new AbortController();
  let stopped = false;

  const pulls = new SerialQueues();
  const entries: Entry[] = [];
  const queued = opts.store.fires && queuedFires(opts.store.fires, runner, entries, log);
  const takeNow = () => queued?.takeNow();
  for (const school of opts.config.schools)
    for (const job of schoolJobs(opts, school, pulls, stopping.signal, owner))
      entries.push(
        scheduleJob(
          runner,
          school,
          job,
          queued ? electorFor(opts, runner, owner, queued, school, job) : null,
          takeNow,
          log,
        ),
      );
  // Ready before the first fire: a fire's insert must not wait for pg-boss's start (on a new database, its schema).
  await opts.store.fires?.start();
  queued?.start();

  for (const { school, job, task } of entries) {
    await task.start();
    const next = task.getNextRun();
    await runner.saveStatus(school.id, job.name, { nextRunAt: next ? next.toISOString() : null });
    // What the incremental fires cost an idle school's upstream, from its beats (pull/beats.ts).
    const fireMs = job.name === 'incremental' ? longestGapMs(task) : null;
    const idle = fireMs ? { idleRequestsPerMinute: idleRequestsPerMinute(school, fireMs) } : {};
    log.info(
      { schoolId: school.id, job: job.name, cron: spreadCron(job.cron, school.id), next, ...idle },
      'job scheduled',
    );
  }

  const entry = (schoolId: string, jobName: string): Entry => {
    const found = entries.find((e) => e.school.id === schoolId && e.job.name === jobName);
    if (!found) throw new Error(`no job ${jobName} for school ${schoolId}`);
    return found;
  };
  return {
    runNow: async (schoolId, jobName) => {
      const { school, job, task } = entry(schoolId, jobName);
      return runner.executeAll(school, job, task, null);
    },
    fire: async (schoolId, jobName, fireTime) => {
      const { school, job, task, elect } = entry(schoolId, jobName);
      if (stopped) return null;
      if (!elect || !queued) return runner.executeAll(school, job, task, fireTime);
      const passed = await runner.passBeforeQueue(school, job, fireTime);
      if (passed) return passed;
      const id = await elect(fireTime);
      if (id === null) return null;
      queued.takeNow();
      return queued.outcome(id);
    },
    problems: () => Object.fromEntries(runner.problems),
    incrementalIntervalMs: (schoolId) => {
      const task = entries.find((e) => e.school.id === schoolId && e.job.name === 'incremental')?.task;
      return task ? longestGapMs(task) : null;
    },
    nextRuns: () =>
      entries.map(({ school, job, task }) => ({
        schoolId: school.id,
        job: job.name,
        nextRunAt: task.getNextRun()?.toISOString() ?? null,
      })),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      queued?.stop();
      await stopAll(entries, runner, stopping, log, opts.stopWaitMs ?? 15_000);
    },
  };
}
