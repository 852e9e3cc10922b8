// The worker thread behind school-renderer.ts: passes of FeedService.renderSchool, one at a time, over a store
// connection of its own, opened with the first pass and kept until the thread ends. Everything it renders goes to
// the store, where the server's requests find it. Each pass gets a FeedService of its own, so nothing one pass
// renders stays in memory for the next; what stays is the module graph and the connection, the cost a new
// thread would pay again (~250-400 ms of CPU on these hosts, more than a pass that finds little to render).
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from '../store/index.ts';
import type { Store } from '../store/types.ts';
import { FeedService } from './feed-service.ts';
import type { RenderJob, RenderMessage, RenderStore, WorkerOrder } from './school-renderer.ts';

const port = parentPort;
if (!port) throw new Error('school-render-worker.ts runs as a worker thread');
const send = (m: RenderMessage) => port.postMessage(m);

const storeOptions = workerData as RenderStore;
let store: Store | null = null;

/** The thread's store, opened with its first pass. */
async function opened(): Promise<Store> {
  // Two connections at most on PostgreSQL: the pass reads and writes one statement at a time.
  store ??= await openStore({ ...storeOptions, migrate: false, poolSize: 2 });
  return store;
}

async function pass(job: RenderJob): Promise<void> {
  let db: Store;
  try {
    db = await opened();
  } catch (err) {
    // Not the pass's fault: the renderer runs it in-process instead and ends this thread.
    send({ type: 'unable', message: err instanceof Error ? err.message : String(err) });
    return;
  }
  try {
    const feeds = new FeedService({
      store: db,
      window: job.window,
      now: () => new Date(Date.now() + job.clockOffsetMs),
      ...(job.templates ? { templates: () => job.templates ?? undefined } : {}),
      ...(job.locationOwnerIds ? { locationOwnerIds: () => job.locationOwnerIds ?? undefined } : {}),
      onRender: (info) => send({ type: 'rendered', info }),
    });
    send({ type: 'done', result: await feeds.renderSchool(job.schoolId, job.opts) });
  } catch (err) {
    send({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
  }
}

port.on('message', (order: WorkerOrder) => {
  if (order.type === 'pass') void pass(order.job);
  // An idle thread is ended by asking, so that its store is closed (SQLite's file, PostgreSQL's pool); with the
  // port closed nothing is left to run and the thread exits.
  else void (store?.close() ?? Promise.resolve()).finally(() => port.close());
});
