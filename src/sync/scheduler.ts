// The schedule: node-cron jobs per school (incremental pull, full pull, and whatever later modules add, such as
// push), with overlap prevention, job status in the store, and — through node-cron's RunCoordinator backed by
// store.claimFire — exactly one runner per fire across every replica sharing the database.

import cron, { type RunCoordinator, type ScheduledTask } from 'node-cron';
import type { Config, SchoolConfig } from '../config.ts';
import { processOwner } from '../jobs/heartbeat.ts';
import type { JobDefinition, JobOutcome } from '../jobs/job.ts';
import type { PullKind, PullSummary } from '../jobs/pull-summary.ts';
import { type Logger, silentLogger } from '../log.ts';
import type { JobResult, JobStatusPatch, Store } from '../store/types.ts';
import type { UpstreamClient } from '../upstream/api.ts';
import { Pace, SLOWED_DOWN } from './pace.ts';
import { PullBusyError, PullInterruptedError, PullNotNeededError, pullSchool } from './pull.ts';

export type FireEvent =
  | { type: 'claimed'; schoolId: string; job: string; fireTime: string; owner: string }
  | { type: 'not-elected'; schoolId: string; job: string; fireTime: string; owner: string }
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
  store: Store;
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
  now?: () => Date;
  /** How long stop() waits for running jobs after interrupting the pulls (default 15 s). */
  stopWaitMs?: number;
}

export interface SchedulerHandle {
  /** Runs a job of a school now, outside the schedule (still serialised with that school's other pulls). */
  runNow(schoolId: string, job: string): Promise<JobOutcome>;
  /**
   * Fires a job as its schedule would at `fireTime`, elected across replicas like every fire; null when another
   * replica runs it. For tests and tools that drive fires themselves instead of waiting for the clock.
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

/** Serialises the pulls of one school inside this process: a full pull and an incremental one never overlap. */
class SchoolLock {
  #tail: Promise<unknown> = Promise.resolve();
  #busy = 0;
  get busy(): boolean {
    return this.#busy > 0;
  }
  run<T>(fn: () => Promise<T>): Promise<T> {
    this.#busy++;
    const result = this.#tail.then(fn).finally(() => {
      this.#busy--;
    });
    this.#tail = result.catch(() => {});
    return result;
  }
}

function pullJob(
  opts: SchedulerOptions,
  school: SchoolConfig,
  kind: PullKind,
  lock: SchoolLock,
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
    skipReason: () => (kind === 'incremental' && lock.busy ? 'another pull of this school is running' : null),
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
      const pulled = await lock.run(async (): Promise<{ outcome: JobOutcome; summary?: PullSummary }> => {
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
      });
      // After the school's lock is let go: a slow push must not make the next pulls' fires pass (they find the
      // lock busy) and so hold back the next edit's way to the feeds. Pushes keep their own order (push/triggers.ts).
      const { summary } = pulled;
      if (summary && opts.onPull) following((async () => opts.onPull!(school, summary))());
      return pulled.outcome;
    },
  };
}

export async function startScheduler(opts: SchedulerOptions): Promise<SchedulerHandle> {
  const { store } = opts;
  const log = (opts.log ?? silentLogger).child({ component: 'scheduler' });
  const owner = opts.owner ?? processOwner().id;
  const now = opts.now ?? (() => new Date());
  const running = new Set<Promise<unknown>>();
  const entries: {
    school: SchoolConfig;
    job: JobDefinition;
    task: ScheduledTask;
    elect: (fireTime: string) => Promise<boolean>;
  }[] = [];
  const problems = new Map<string, string>();
  const stopping = new AbortController();
  let stopped = false;

  const saveStatus = async (
    schoolId: string,
    job: string,
    patch: Omit<JobStatusPatch, 'schoolId' | 'job'>,
  ) => {
    try {
      await store.runs.saveJobStatus({ schoolId, job, ...patch });
    } catch (err) {
      log.error({ err, schoolId, job }, 'could not save job status');
    }
  };

  /** A fire let pass: said in the log, the job's status (with why) and to onFire; the job's last run stands. */
  const skipped = async (school: SchoolConfig, job: string, fireTime: string | null, reason: string) => {
    log.info({ schoolId: school.id, job, ...(fireTime ? { fireTime } : {}) }, `fire skipped: ${reason}`);
    await saveStatus(school.id, job, { lastSkippedAt: now().toISOString(), lastSkipReason: reason });
    opts.onFire?.({ type: 'skipped', schoolId: school.id, job, fireTime, owner, reason });
  };

  const track = <T>(p: Promise<T>): Promise<T> => {
    running.add(p);
    p.finally(() => running.delete(p)).catch(() => {});
    return p;
  };

  /** A job's fire; `after` settles when the work that follows its run (see JobContext.following) has too. */
  const execute = (
    school: SchoolConfig,
    job: JobDefinition,
    task: ScheduledTask | null,
    fireTime: string | null,
  ): { outcome: Promise<JobOutcome>; after: Promise<unknown> } => {
    const following: Promise<unknown>[] = [];
    const outcome = track(
      executeJob(school, job, task, fireTime, (work) => {
        following.push(
          track(
            work.catch((err: unknown) =>
              log.error({ err, schoolId: school.id, job: job.name }, 'the work after a job failed'),
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
  };

  const executeJob = async (
    school: SchoolConfig,
    job: JobDefinition,
    task: ScheduledTask | null,
    fireTime: string | null,
    following: (work: Promise<unknown>) => void,
  ) => {
    const jobLog = log.child({ schoolId: school.id, job: job.name, ...(fireTime ? { fireTime } : {}) });
    const deferred = fireTime ? (job.deferredUntil?.(new Date(fireTime)) ?? null) : null;
    // A deferred fire names the first fire of the schedule at or after the deferral: status shows it as next run.
    const resumes = deferred
      ? (task?.getNextRuns(64).find((d) => d.getTime() >= deferred.until.getTime()) ?? deferred.until)
      : null;
    const skip =
      deferred && resumes
        ? `slowed down: ${deferred.why} — next pull at ${resumes.toISOString()}`
        : (job.skipReason?.() ?? null);
    if (skip) {
      await skipped(school, job.name, fireTime, skip);
      if (resumes) await saveStatus(school.id, job.name, { nextRunAt: resumes.toISOString() });
      const outcome = { status: 'skipped', error: skip } satisfies JobOutcome;
      opts.onFire?.({ type: 'finished', schoolId: school.id, job: job.name, fireTime, owner, outcome });
      return outcome;
    }
    let began = false;
    const started = async () => {
      if (began) return;
      began = true;
      // The next fire, not this one: a replica that dies now leaves a next run still ahead, and the run itself
      // reads as interrupted once this process stops beating (the owner below).
      const next = task?.getNextRun() ?? null;
      await saveStatus(school.id, job.name, {
        lastStartedAt: now().toISOString(),
        owner: processOwner().id,
        ...(next ? { nextRunAt: next.toISOString() } : {}),
      });
      opts.onFire?.({ type: 'started', schoolId: school.id, job: job.name, fireTime, owner });
    };
    if (!job.reportsStart) await started();
    let outcome: JobOutcome;
    try {
      outcome = await job.run({ fireTime, log: jobLog, started, following });
    } catch (err) {
      jobLog.error({ err }, 'job failed');
      outcome = { status: 'failed', error: err instanceof Error ? err.message : String(err) };
    }
    const next = task?.getNextRun() ?? null;
    if (outcome.status === 'skipped') {
      await skipped(school, job.name, fireTime, outcome.error ?? 'no reason given');
      if (next) await saveStatus(school.id, job.name, { nextRunAt: next.toISOString() });
    } else {
      await saveStatus(school.id, job.name, {
        ...(began ? {} : { lastStartedAt: now().toISOString(), owner: processOwner().id }),
        lastFinishedAt: now().toISOString(),
        lastStatus: outcome.status,
        lastError: outcome.error ?? null,
        ...(next ? { nextRunAt: next.toISOString() } : {}),
      });
    }
    opts.onFire?.({ type: 'finished', schoolId: school.id, job: job.name, fireTime, owner, outcome });
    return outcome;
  };

  /** runNow and fire: the outcome once the work after the run has settled too (a pull's pushes). */
  const executeAll = async (...args: Parameters<typeof execute>): Promise<JobOutcome> => {
    const { outcome, after } = execute(...args);
    await after;
    return outcome;
  };

  for (const school of opts.config.schools) {
    const lock = new SchoolLock();
    const pace = new Pace();
    let client: UpstreamClient | null = null;
    const clientOnce = () => {
      client ??= opts.clientFor(school);
      return client;
    };
    const jobs = [
      pullJob(opts, school, 'incremental', lock, clientOnce, stopping.signal, owner, pace),
      pullJob(opts, school, 'full', lock, clientOnce, stopping.signal, owner, pace),
      ...(opts.extraJobs?.(school) ?? []),
    ];
    for (const job of jobs) {
      const name = `${school.id}:${job.name}`;
      // The fire this process won, handed from the coordinator to the task (noOverlap: one at a time per task).
      let claimed: string | null = null;
      /** Whether this replica runs the fire: exactly one replica sharing the store does. */
      const elect = async (fireTime: string): Promise<boolean> => {
        let won: boolean;
        try {
          won = await store.runs.claimFire(name, fireTime, owner);
        } catch (err) {
          // node-cron would print this to the console and skip the fire: say it through our logger, keep it
          // for /readyz (no run can record it when the store is what failed), and skip.
          const why = err instanceof Error ? err.message : String(err);
          problems.set(
            school.id,
            `scheduled ${job.name} fire of ${fireTime} skipped: the store failed (${why})`,
          );
          log.error({ err, schoolId: school.id, job: job.name, fireTime }, 'fire skipped: the store failed');
          opts.onFire?.({
            type: 'skipped',
            schoolId: school.id,
            job: job.name,
            fireTime,
            owner,
            reason: `store: ${why}`,
          });
          return false;
        }
        problems.delete(school.id);
        opts.onFire?.({
          type: won ? 'claimed' : 'not-elected',
          schoolId: school.id,
          job: job.name,
          fireTime,
          owner,
        });
        return won;
      };
      const coordinator: RunCoordinator = {
        shouldRun: async (key: string) => {
          const fireTime = key.slice(name.length + 1);
          const won = await elect(fireTime);
          if (won) claimed = fireTime;
          return won;
        },
      };
      const task = cron.createTask(
        job.cron,
        () => {
          const fireTime = claimed;
          claimed = null;
          // Only the run: cron's next fire of this job must not wait for the work after it.
          return execute(school, job, task, fireTime).outcome;
        },
        {
          name,
          timezone: school.timeZone,
          noOverlap: true,
          distributed: true,
          runCoordinator: coordinator,
        },
      );
      task.on('execution:overlap', () => {
        // A full fire waiting its turn already stands for this one (its request is in the store).
        void skipped(
          school,
          job.name,
          null,
          'overlap: the previous fire of this job is still running or waiting',
        );
      });
      entries.push({ school, job, task, elect });
    }
  }

  for (const { school, job, task } of entries) {
    await task.start();
    const next = task.getNextRun();
    await saveStatus(school.id, job.name, { nextRunAt: next ? next.toISOString() : null });
    log.info({ schoolId: school.id, job: job.name, cron: job.cron, next }, 'job scheduled');
  }

  return {
    runNow: (schoolId, jobName) => {
      const entry = entries.find((e) => e.school.id === schoolId && e.job.name === jobName);
      if (!entry) return Promise.reject(new Error(`no job ${jobName} for school ${schoolId}`));
      return executeAll(entry.school, entry.job, entry.task, null);
    },
    fire: async (schoolId, jobName, fireTime) => {
      const entry = entries.find((e) => e.school.id === schoolId && e.job.name === jobName);
      if (!entry) throw new Error(`no job ${jobName} for school ${schoolId}`);
      if (stopped || !(await entry.elect(fireTime))) return null;
      return executeAll(entry.school, entry.job, entry.task, fireTime);
    },
    problems: () => Object.fromEntries(problems),
    incrementalIntervalMs: (schoolId) => {
      const task = entries.find((e) => e.school.id === schoolId && e.job.name === 'incremental')?.task;
      const runs = task?.getNextRuns(4) ?? [];
      let gap = 0;
      for (let i = 1; i < runs.length; i++) gap = Math.max(gap, runs[i]!.getTime() - runs[i - 1]!.getTime());
      return gap > 0 ? gap : null;
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
      for (const { task } of entries) await task.destroy();
      stopping.abort(new Error('the service is stopping'));
      // Pulls end at once when interrupted; a push (or a store that hangs) gets a bounded wait, never an endless one.
      const waitMs = opts.stopWaitMs ?? 15_000;
      let timer: NodeJS.Timeout | undefined;
      const late = await Promise.race([
        Promise.allSettled([...running]).then(() => false),
        new Promise<boolean>((r) => {
          timer = setTimeout(() => r(true), waitMs);
        }),
      ]);
      clearTimeout(timer);
      if (late) log.warn({ jobs: running.size, waitMs }, 'scheduler stopped with jobs still running');
      else log.info('scheduler stopped');
    },
  };
}
