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
// The threads are piscina's (started on demand, at most maxWorkers, reused, ended after IDLE_MS idle); what stays
// here is the waiting line, which piscina's queue cannot hold: a waiting pass stays open to joins until it starts,
// and a pass run in-process after a fallback takes a place in it as one on a worker does.
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { EventTemplates } from '../calendar/templates.ts';
import type { Id } from '../domain/types.ts';
import type { OpenStoreOptions } from '../store/index.ts';
import type { SchoolId } from '../store/types.ts';
import { StoreUnreachableError } from '../store/unreachable.ts';
import type { FeedRenderObserver, FeedService, FeedWindow } from './feed-service.ts';
import type { RenderSchoolResult } from './school-rerender.ts';

export interface SchoolRenderer {
  renderSchool(schoolId: SchoolId, opts?: { all?: boolean; force?: boolean }): Promise<RenderSchoolResult>;
  /** Ends any pass under way (its feeds are rendered again on request, or by the next pass). */
  close(): Promise<void>;
}

/** The store a worker thread opens for its passes (its workerData). */
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

/**
 * A pass as piscina hands it to a thread. `port` carries each render to the observer (metrics) and, the other
 * way, a stop; the thread closes it when the pass ends, after its last render.
 */
export interface PassTask {
  job: RenderJob;
  port: MessagePort;
}

/** How a pass ended on its thread; `unable`: the thread's store did not open, so the pass is worth doing here. */
export type PassOutcome =
  | { type: 'done'; result: RenderSchoolResult }
  /** unreachable: the store could not be reached (the class of the error does not cross the thread). */
  | { type: 'failed'; message: string; unreachable: boolean }
  | { type: 'unable'; message: string };

/** How long a worker thread with nothing to do is kept for the next pass. */
export const IDLE_MS = 10_000;
/** How long a stop waits for the passes under way to end before it terminates their threads. */
const STOP_WAIT_MS = 5_000;

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

const stopping = () => new Error('the server is stopping');

/** The pool of render threads, and the one call that runs a pass on it. */
function renderThreads(opts: WorkerRendererOptions, maxWorkers: number) {
  const pool = new Piscina<PassTask, PassOutcome>({
    filename: fileURLToPath(new URL('./school-render-worker.ts', import.meta.url)),
    workerData: opts.store,
    minThreads: 0,
    maxThreads: maxWorkers,
    idleTimeout: IDLE_MS,
    // A stop waits this long for the passes under way, then terminates their threads (see close below).
    closeTimeout: STOP_WAIT_MS,
    // An idle thread keeps its event loop (piscina's default blocks it in Atomics.wait): it closes its store then.
    atomics: 'disabled',
  });
  pool.on('workerCreate', () => opts.onWorkerStart?.());
  // A thread that failed with no pass (the next pass starts another), or a stop that had to terminate one.
  pool.on('error', () => {});
  /** The ports of the passes under way, to ask them to stop. */
  const underWay = new Set<MessagePort>();

  return {
    /** The pass on a thread; WorkerFailed if no thread could do it. */
    async run(job: RenderJob): Promise<PassOutcome> {
      const { port1, port2 } = new MessageChannel();
      port1.on('message', (info: Parameters<FeedRenderObserver>[0]) => opts.onRender?.(info));
      underWay.add(port1);
      try {
        // The thread closes its end after the pass's last render: every render is told before the pass ends.
        const [outcome] = await Promise.all([
          pool.run({ job, port: port2 }, { transferList: [port2] }),
          once(port1, 'close'),
        ]);
        return outcome;
      } catch (err) {
        return { type: 'unable', message: err instanceof Error ? err.message : String(err) };
      } finally {
        underWay.delete(port1);
        port1.close();
      }
    },
    /**
     * Asks each pass under way to stop: its thread closes its store, which ends the pass after the statement in
     * hand, and piscina ends the threads once their passes have. Terminating a thread in the middle of a
     * node:sqlite call can abort the whole process (a vitest fork running render-limit's close-during-a-pass
     * died so once, with no message), so piscina's terminate() comes first only after STOP_WAIT_MS.
     */
    async close() {
      for (const port of underWay) port.postMessage('stop');
      await pool.close();
    },
  };
}

export function workerRenderer(opts: WorkerRendererOptions): SchoolRenderer {
  const maxWorkers = Math.max(1, opts.maxWorkers ?? defaultMaxWorkers());
  const threads = renderThreads(opts, maxWorkers);
  let closed = false;
  /** First asked, first run; at most one per school. */
  const waiting: WaitingPass[] = [];
  let active = 0;
  const report = () => opts.onLoad?.({ running: active, waiting: waiting.length });

  const run = async (schoolId: SchoolId, passOpts: PassOpts): Promise<RenderSchoolResult> => {
    // The school's pass that just ended may have left nothing to do.
    const skipped = await opts.feeds.skippedRender(schoolId, passOpts);
    if (skipped) return skipped;
    if (closed) throw stopping();
    const outcome = await threads.run({
      schoolId,
      opts: passOpts,
      window: opts.feeds.window,
      clockOffsetMs: opts.feeds.now().getTime() - Date.now(),
      templates: opts.templates?.(schoolId) ?? null,
      locationOwnerIds: opts.locationOwnerIds?.(schoolId) ?? null,
    });
    // Stopping: whatever the pass's last word (its store was closed under it), it ends as stopped.
    if (closed) throw stopping();
    if (outcome.type === 'done') return outcome.result;
    // The pass itself failed: in-process it would fail the same way.
    if (outcome.type === 'failed')
      throw outcome.unreachable
        ? new StoreUnreachableError(new Error(outcome.message))
        : new Error(outcome.message);
    opts.onFallback?.(`feed render worker: ${outcome.message}`);
    return opts.feeds.renderSchool(schoolId, passOpts);
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
      if (closed) throw stopping();
      // A worker costs a thread, a module graph and a store connection; most pulls change nothing. Asked before
      // the pass waits, so that such a pull never waits behind other schools' passes.
      const skipped = await opts.feeds.skippedRender(schoolId, passOpts);
      if (skipped) return skipped;
      if (closed) throw stopping();
      const queued = waiting.find((p) => p.schoolId === schoolId);
      if (queued) {
        // A pass over every feed, or a forced one, covers the narrower one asked for.
        if (passOpts.all) queued.opts.all = true;
        if (passOpts.force) queued.opts.force = true;
        return queued.result;
      }
      const { promise: result, resolve, reject } = Promise.withResolvers<RenderSchoolResult>();
      waiting.push({ schoolId, opts: { ...passOpts }, resolve, reject, result });
      report();
      startNext();
      return result;
    },
    async close() {
      closed = true;
      // Passes still waiting end now, as one under way does: their feeds are rendered on request or next time.
      const dropped = waiting.splice(0);
      for (const pass of dropped) pass.reject(stopping());
      if (dropped.length) report();
      await threads.close();
    },
  };
}
