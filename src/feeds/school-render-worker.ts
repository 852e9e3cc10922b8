// The worker thread behind school-renderer.ts (run by piscina): passes of FeedService.renderSchool, one at a time,
// over a store connection of its own, opened with a pass and kept for the passes that follow. Everything it
// renders goes to the store, where the server's requests find it. Each pass gets a FeedService of its own, so
// nothing one pass renders stays in memory for the next; what stays is the module graph and the connection, the
// cost a new thread would pay again (~250-400 ms of CPU on these hosts, more than a pass that finds little to render).
import { workerData } from 'node:worker_threads';
import { openStore } from '../store/index.ts';
import type { Store } from '../store/types.ts';
import { isStoreUnreachable } from '../store/unreachable.ts';
import { lowerThisThreadsPriority } from '../util/thread-priority.ts';
import { FeedService } from './feed-service.ts';
import { IDLE_MS, type PassOutcome, type PassTask, type RenderStore } from './school-renderer.ts';

const storeOptions = workerData as RenderStore;
// A pass is background work: on a busy core the thread that answers requests goes first (thread-priority.ts).
lowerThisThreadsPriority();
let store: Store | null = null;
let idle: NodeJS.Timeout | undefined;

/**
 * Closes the thread's store (SQLite's file, PostgreSQL's pool) between two statements: asked by a stop, which
 * ends the pass under way, or once the thread has been idle for half the time piscina keeps it, so that it is
 * never terminated holding an open store.
 */
async function closeStore(): Promise<void> {
  const open = store;
  store = null;
  await open?.close();
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export default async function renderPass({ job, port }: PassTask): Promise<PassOutcome> {
  clearTimeout(idle);
  port.on('message', () => void closeStore());
  try {
    let db: Store;
    try {
      // Two connections at most on PostgreSQL: the pass reads and writes one statement at a time.
      db = store ??= await openStore({ ...storeOptions, migrate: false, poolSize: 2 });
    } catch (err) {
      // Not the pass's fault: the renderer runs it in-process instead.
      return { type: 'unable', message: message(err) };
    }
    const feeds = new FeedService({
      store: db,
      window: job.window,
      now: () => new Date(Date.now() + job.clockOffsetMs),
      ...(job.templates ? { templates: () => job.templates ?? undefined } : {}),
      ...(job.locationOwnerIds ? { locationOwnerIds: () => job.locationOwnerIds ?? undefined } : {}),
      onRender: (info) => port.postMessage(info),
    });
    return { type: 'done', result: await feeds.renderSchool(job.schoolId, job.opts) };
  } catch (err) {
    return { type: 'failed', message: message(err), unreachable: isStoreUnreachable(err) };
  } finally {
    port.close();
    idle = setTimeout(() => void closeStore(), IDLE_MS / 2);
  }
}
