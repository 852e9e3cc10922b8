// Where `serve` re-renders a school's feeds after a pull: on a worker thread with a store connection of its own,
// so the event loop that answers feed requests does none of it. In-process, with every step cut into ~10 ms
// slices, a district's forced re-render of 13,731 feeds still held the loop up to 99–278 ms and requests up to
// 363–437 ms; on the worker, the loop waited 36–39 ms at most and requests 208–400 ms (p99 40–44 ms, against
// 50–59 ms), the rest being two cores shared by both threads and the client (bench:feeds, two runs). The
// worker's heap is its own: serve peaked at 767 MB during that pass, 596 MB in-process. The worker writes
// rendered feeds to the store as the in-process pass does; requests then read them from there (FeedService.get
// checks the data version on every request).
// One worker per pass, ended when the pass ends: its memory goes with it. Should a worker fail to start or
// die, the pass runs in-process instead, as before.
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

/** What the worker needs to render as `feeds` would: all of it plain data, cloned into the thread. */
export interface RenderJob {
  store: Pick<OpenStoreOptions, 'databaseUrl' | 'dataDir' | 'file'>;
  schoolId: SchoolId;
  opts: { all?: boolean; force?: boolean };
  window: FeedWindow;
  /** The caller's clock (a test's or a benchmark's may differ from the system's), as an offset from it. */
  clockOffsetMs: number;
  templates: EventTemplates | null;
  locationOwnerIds: Id[] | null;
}

/** Messages from the worker: each render for the observer (metrics), then the pass's result or its failure. */
export type RenderMessage =
  | { type: 'rendered'; info: Parameters<FeedRenderObserver>[0] }
  | { type: 'done'; result: RenderSchoolResult }
  | { type: 'failed'; message: string };

export interface WorkerRendererOptions {
  /** The service's own feeds: its window, clock and wording are the worker's; it renders when a worker cannot. */
  feeds: FeedService;
  /** The store `feeds` reads, as it was opened. */
  store: RenderJob['store'];
  templates?: (schoolId: SchoolId) => EventTemplates | undefined;
  locationOwnerIds?: (schoolId: SchoolId) => Id[] | undefined;
  onRender?: FeedRenderObserver;
  /** Told when a pass ran in-process because the worker could not (the reason, for the log). */
  onFallback?: (reason: string) => void;
}

export function workerRenderer(opts: WorkerRendererOptions): SchoolRenderer {
  const running = new Set<Worker>();
  let closed = false;

  const inWorker = (job: RenderJob) =>
    new Promise<RenderSchoolResult>((resolve, reject) => {
      const worker = new Worker(new URL('./school-render-worker.ts', import.meta.url), { workerData: job });
      running.add(worker);
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        fn();
      };
      worker.on('message', (m: RenderMessage) => {
        if (m.type === 'rendered') opts.onRender?.(m.info);
        else if (m.type === 'done') settle(() => resolve(m.result));
        // The pass itself failed: in-process it would fail the same way.
        else settle(() => reject(new Error(m.message)));
      });
      worker.on('error', (err) => settle(() => reject(new WorkerFailed(err.message))));
      worker.on('exit', (code) => {
        running.delete(worker);
        settle(() =>
          reject(closed ? new Error('the server is stopping') : new WorkerFailed(`exited ${code}`)),
        );
      });
    });

  return {
    async renderSchool(schoolId, passOpts = {}) {
      if (closed) throw new Error('the server is stopping');
      // A worker costs a thread, a module graph and a store connection; most pulls change nothing.
      const skipped = await opts.feeds.skippedRender(schoolId, passOpts);
      if (skipped) return skipped;
      const job: RenderJob = {
        store: opts.store,
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
    },
    async close() {
      closed = true;
      await Promise.all([...running].map((w) => w.terminate()));
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
