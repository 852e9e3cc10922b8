// The worker thread behind school-renderer.ts: one pass of FeedService.renderSchool over a store connection of
// its own, then it ends. Everything it renders goes to the store, where the server's requests find it.
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from '../store/index.ts';
import { FeedService } from './feed-service.ts';
import type { RenderJob, RenderMessage } from './school-renderer.ts';

const port = parentPort;
if (!port) throw new Error('school-render-worker.ts runs as a worker thread');
const job = workerData as RenderJob;
const send = (m: RenderMessage) => port.postMessage(m);

// Two connections at most on PostgreSQL: the pass reads and writes one statement at a time.
const store = await openStore({ ...job.store, migrate: false, poolSize: 2 });
try {
  const feeds = new FeedService({
    store,
    window: job.window,
    now: () => new Date(Date.now() + job.clockOffsetMs),
    ...(job.templates ? { templates: () => job.templates ?? undefined } : {}),
    ...(job.locationOwnerIds ? { locationOwnerIds: () => job.locationOwnerIds ?? undefined } : {}),
    onRender: (info) => send({ type: 'rendered', info }),
  });
  send({ type: 'done', result: await feeds.renderSchool(job.schoolId, job.opts) });
} catch (err) {
  send({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
} finally {
  await store.close();
}
