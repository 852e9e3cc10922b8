// Where `serve` re-renders a school's feeds after a pull: on a worker thread with a store connection of its own,
// so the event loop that answers feed requests does none of it. In-process, even with every step cut into ~10 ms
// slices, a district's forced re-render still held the loop and the requests waiting on it far longer than on a
// worker (bench:feeds prints the loop's delay and the request latencies during that pass). The worker's heap is
// its own, so serve peaks higher during a pass than in-process. The worker writes
// rendered feeds to the store as the in-process pass does; requests then read them from there (FeedService.get
// checks the data version on every request).
// A worker thread serves pass after pass while passes keep coming, and is ended once it has had nothing to do
// for IDLE_MS: a new thread costs a module graph and a store connection (~250-400 ms of CPU here), which fifty
// schools' passes queued after a start paid fifty times; an idle one ended gives its heap back. Should a worker
// fail to start or die, the pass runs in-process instead, as before.
// Passes of all schools share a few workers (maxWorkers): beyond that they wait their turn, first asked first
// run. Unbounded, fifty schools' first passes after serve started ran fifty workers at once (bench:fleet, issue
// 28): each a heap of its own, every one slowed by the others, and the pulls that await them ran past their
// next fire. A pass asked for while the same school's pass is still waiting joins it: it has read nothing yet,
// so it renders the newest data version when it starts.
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { EventTemplates } from '../calendar/templates.ts';
import type { Id } from '../domain/types.ts';
import type { OpenStoreOptions } from '../store/index.ts';
import type { SchoolId } from '../store/types.ts';
import type { FeedRenderObserver, FeedService, FeedWindow } from './feed-service.ts';
import type { RenderSchoolResult } from './school-rerender.ts';

export interface SchoolRenderer {
  renderSchool(schoolId: SchoolId, opts?: { all?: boolean; force?: boolean }): Promise<RenderSchoolResult>;
  /** Ends any pass under way (its feeds are rendered again on request, or by the next pass). */
  close(): Promise<void>;
}

/** The store a worker thread opens, once, for all its passes (its workerData). */
export type RenderStore = Pick<OpenStoreOptions, 'databaseUrl' | 'dataDir' | 'file'>;

/** What the worker needs to render a pass as `feeds` would: all of it plain data, cloned into the thread. */
export interface RenderJob {
  schoolId: SchoolId;
  opts: { all?: boolean; force?: boolean };
  window: FeedWindow;
  /** The caller's clock (a test's or a benchmark's may differ from the system's), as an offset from it. */
  clockOffsetMs: number;
  templates: EventTemplates | null;
  locationOwnerIds: Id[] | null;
}

/** What the renderer sends a worker: a pass (only to one that has answered its last), or the end of the thread. */
export type WorkerOrder = { type: 'pass'; job: RenderJob } | { type: 'end' };

/** How long a worker thread with nothing to do is kept for the next pass. */
const IDLE_MS = 10_000;
/** How long a stop waits for a thread to close its store and end before it terminates the thread. */
const STOP_WAIT_MS = 5_000;

/** Messages from the worker: each render for the observer (metrics), then the pass's result or its failure. */
export type RenderMessage =
  | { type: 'rendered'; info: Parameters<FeedRenderObserver>[0] }
  | { type: 'done'; result: RenderSchoolResult }
  | { type: 'failed'; message: string }
  /** The thread cannot do passes (its store did not open): worth doing in-process; the thread is ended. */
  | { type: 'unable'; message: string };

export interface WorkerRendererOptions {
  /** The service's own feeds: its window, clock and wording are the worker's; it renders when a worker cannot. */
  feeds: FeedService;
  /** The store `feeds` reads, as it was opened. */
  store: RenderStore;
  templates?: (schoolId: SchoolId) => EventTemplates | undefined;
  locationOwnerIds?: (schoolId: SchoolId) => Id[] | undefined;
  onRender?: FeedRenderObserver;
  /** Told when a pass ran in-process because the worker could not (the reason, for the log). */
  onFallback?: (reason: string) => void;
  /** Told when a worker thread is started (metrics: threads are kept for the passes that follow). */
  onWorkerStart?: () => void;
  /** How many passes run at once in this process (default: one fewer than the processors, at least one). */
  maxWorkers?: number;
  /** Told whenever a pass starts waiting, starts or ends (metrics). */
  onLoad?: (load: RenderLoad) => void;
}

/** The passes of this process: under way (each on a worker, or in-process after a fallback), or waiting for one. */
export interface RenderLoad {
  running: number;
  waiting: number;
}

type PassOpts = { all?: boolean; force?: boolean };

/** A pass waiting for a worker: what it was asked for (joined requests widen it) and who waits on its result. */
interface WaitingPass {
  schoolId: SchoolId;
  opts: PassOpts;
  resolve(r: RenderSchoolResult): void;
  reject(err: unknown): void;
  result: Promise<RenderSchoolResult>;
}

/** The renderer's default: the event loop that answers requests keeps a processor of its own. */
export function defaultMaxWorkers(): number {
  return Math.max(1, availableParallelism() - 1);
}

/** A worker thread and the pass it is doing, if any. */
interface Thread {
  worker: Worker;
  pass: { resolve(r: RenderSchoolResult): void; reject(err: unknown): void } | null;
  idleTimer: NodeJS.Timeout | null;
  /** Asked to end (idle for IDLE_MS): takes no more passes. */
  ending: boolean;
}

export function workerRenderer(opts: WorkerRendererOptions): SchoolRenderer {
  const threads = new Set<Thread>();
  let closed = false;

  const settle = (t: Thread, how: (pass: NonNullable<Thread['pass']>) => void) => {
    const pass = t.pass;
    t.pass = null;
    if (pass) how(pass);
  };
  /** Asks a thread to end: it closes its store (after the statement under way) and exits. */
  const askToEnd = (t: Thread) => {
    t.ending = true;
    t.worker.postMessage({ type: 'end' } satisfies WorkerOrder);
  };
  const rest = (t: Thread) => {
    // An idle thread keeps no process alive; it is ended when nothing has come for it.
    t.worker.unref();
    t.idleTimer = setTimeout(() => askToEnd(t), IDLE_MS);
    // Its one job is giving an idle thread back: a process that is leaving takes the thread with it.
    t.idleTimer.unref();
  };
  const spawn = (): Thread => {
    const t: Thread = {
      worker: new Worker(new URL('./school-render-worker.ts', import.meta.url), {
        workerData: opts.store,
      }),
      pass: null,
      idleTimer: null,
      ending: false,
    };
    threads.add(t);
    opts.onWorkerStart?.();
    t.worker.on('message', (m: RenderMessage) => {
      if (m.type === 'rendered') opts.onRender?.(m.info);
      else if (closed) {
        // Stopping: whatever the pass's last word (its store was closed under it), it ends as stopped.
        settle(t, (p) => p.reject(new Error('the server is stopping')));
      } else if (m.type === 'done') {
        settle(t, (p) => p.resolve(m.result));
        rest(t);
      } else if (m.type === 'failed') {
        // The pass itself failed: in-process it would fail the same way. The thread is still good.
        settle(t, (p) => p.reject(new Error(m.message)));
        rest(t);
      } else {
        t.ending = true;
        settle(t, (p) => p.reject(new WorkerFailed(m.message)));
        void t.worker.terminate();
      }
    });
    t.worker.on('error', (err) => settle(t, (p) => p.reject(new WorkerFailed(err.message))));
    t.worker.on('exit', (code) => {
      threads.delete(t);
      if (t.idleTimer) clearTimeout(t.idleTimer);
      settle(t, (p) =>
        p.reject(closed ? new Error('the server is stopping') : new WorkerFailed(`exited ${code}`)),
      );
    });
    return t;
  };

  const inWorker = (job: RenderJob) =>
    new Promise<RenderSchoolResult>((resolve, reject) => {
      const t = [...threads].find((x) => !x.pass && !x.ending) ?? spawn();
      if (t.idleTimer) clearTimeout(t.idleTimer);
      t.idleTimer = null;
      t.worker.ref();
      t.pass = { resolve, reject };
      t.worker.postMessage({ type: 'pass', job } satisfies WorkerOrder);
    });

  const maxWorkers = Math.max(1, opts.maxWorkers ?? defaultMaxWorkers());
  /** First asked, first run; at most one per school. */
  const waiting: WaitingPass[] = [];
  let active = 0;
  const report = () => opts.onLoad?.({ running: active, waiting: waiting.length });

  const run = async (schoolId: SchoolId, passOpts: PassOpts): Promise<RenderSchoolResult> => {
    // The school's pass that just ended may have left nothing to do.
    const skipped = await opts.feeds.skippedRender(schoolId, passOpts);
    if (skipped) return skipped;
    if (closed) throw new Error('the server is stopping');
    const job: RenderJob = {
      schoolId,
      opts: passOpts,
      window: opts.feeds.window,
      clockOffsetMs: opts.feeds.now().getTime() - Date.now(),
      templates: opts.templates?.(schoolId) ?? null,
      locationOwnerIds: opts.locationOwnerIds?.(schoolId) ?? null,
    };
    try {
      return await inWorker(job);
    } catch (err) {
      if (!(err instanceof WorkerFailed) || closed) throw err;
      opts.onFallback?.(err.message);
      return opts.feeds.renderSchool(schoolId, passOpts);
    }
  };

  const startNext = () => {
    while (!closed && active < maxWorkers) {
      const pass = waiting.shift();
      if (!pass) break;
      active++;
      report();
      run(pass.schoolId, pass.opts)
        .then(pass.resolve, pass.reject)
        .finally(() => {
          active--;
          report();
          startNext();
        });
    }
  };

  return {
    async renderSchool(schoolId, passOpts = {}) {
      if (closed) throw new Error('the server is stopping');
      // A worker costs a thread, a module graph and a store connection; most pulls change nothing. Asked before
      // the pass waits, so that such a pull never waits behind other schools' passes.
      const skipped = await opts.feeds.skippedRender(schoolId, passOpts);
      if (skipped) return skipped;
      if (closed) throw new Error('the server is stopping');
      const queued = waiting.find((p) => p.schoolId === schoolId);
      if (queued) {
        // A pass over every feed, or a forced one, covers the narrower one asked for.
        if (passOpts.all) queued.opts.all = true;
        if (passOpts.force) queued.opts.force = true;
        return queued.result;
      }
      let resolve!: (r: RenderSchoolResult) => void;
      let reject!: (err: unknown) => void;
      const result = new Promise<RenderSchoolResult>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      waiting.push({ schoolId, opts: { ...passOpts }, resolve, reject, result });
      report();
      startNext();
      return result;
    },
    async close() {
      closed = true;
      // Passes still waiting end now, as one under way does: their feeds are rendered on request or next time.
      const dropped = waiting.splice(0);
      for (const pass of dropped) pass.reject(new Error('the server is stopping'));
      if (dropped.length) report();
      // Each thread is asked to end as an idle one is: it closes its store (after the statement under way) and
      // exits, its pass with it. Terminating a thread in the middle of a node:sqlite call can abort the whole
      // process (a vitest fork running render-limit's close-during-a-pass died so once, with no message), so
      // terminate() is only the fallback for a thread that has not ended within STOP_WAIT_MS.
      await Promise.all(
        [...threads].map(async (t) => {
          if (t.idleTimer) clearTimeout(t.idleTimer);
          const exited = once(t.worker, 'exit');
          askToEnd(t);
          const ended = await Promise.race([exited.then(() => true), sleep(STOP_WAIT_MS, false)]);
          if (!ended) await t.worker.terminate();
        }),
      );
    },
  };
}

/** The worker could not do the pass (did not start, or died): worth doing in-process. */
class WorkerFailed extends Error {
  constructor(reason: string) {
    super(`feed render worker: ${reason}`);
    this.name = 'WorkerFailed';
  }
}
