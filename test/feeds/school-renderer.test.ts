// serve's re-render after a pull, on a worker thread (src/feeds/school-renderer.ts): the same stored feeds as the
// in-process pass, an event loop left free for requests, a fallback when the worker cannot run, a clean stop.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listFeedDefs } from '../../src/feeds/feed-defs.ts';
import { workerRenderer } from '../../src/feeds/school-renderer.ts';
import { type Harness, startHarness } from './harness.ts';

const SCHOOL = 'hill';
let h: Harness;

beforeAll(async () => {
  h = await startHarness({ scale: 'school' });
  await h.pull('full');
});
afterAll(async () => {
  await h?.close();
});

const sqlite = () => ({ file: path.join(h.dir, 'rostercal.sqlite') });

/** Each feed's stored ETag and rendering inputs, as requests will find them. */
async function storedFeeds(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const d of await listFeedDefs(h.store, SCHOOL)) {
    const r = await h.store.feeds.getRenderedFeed(SCHOOL, d.scope, d.scopeId);
    out.set(`${d.scope}:${d.scopeId}`, r ? `${r.etag}|${r.dataVersion}|${r.windowKey}` : 'none');
  }
  return out;
}

// Two whole-school renders per test: 54 s and then over 60 s for the first under load 15-20 on two cores.
describe('re-rendering on a worker thread', () => {
  it('stores exactly what the in-process pass stores, and reports every render to the observer', async () => {
    await h.feeds.renderSchool(SCHOOL, { all: true, force: true });
    const inProcess = await storedFeeds();
    expect([...inProcess.values()].every((v) => v !== 'none')).toBe(true);

    const observed: string[] = [];
    const renderer = workerRenderer({
      feeds: h.feeds,
      store: sqlite(),
      onRender: (info) => observed.push(`${info.scope}:${info.scopeId}`),
      onFallback: (why) => {
        throw new Error(`fell back: ${why}`);
      },
    });
    try {
      const r = await renderer.renderSchool(SCHOOL, { all: true, force: true });
      expect(r.rendered).toBe(inProcess.size);
      expect(observed.sort()).toEqual([...inProcess.keys()].sort());
      expect(await storedFeeds()).toEqual(inProcess);
      // A pass with nothing changed renders nothing.
      expect((await renderer.renderSchool(SCHOOL, { all: true })).rendered).toBe(0);
    } finally {
      await renderer.close();
    }
    // Requests read the worker's renders: every feed is served, with the stored ETag.
    h.feeds.invalidate();
    for (const [key, stored] of await storedFeeds()) {
      const [scope, id] = key.split(':') as ['team', string];
      expect((await h.feeds.get(SCHOOL, scope, Number(id)))?.etag).toBe(stored.split('|')[0]);
    }
  }, 180_000);

  it('leaves the event loop free while it renders (in-process, the same pass keeps it busy)', async () => {
    // The share of the pass during which this thread's event loop was running something, not waiting.
    const busyDuring = async (pass: () => Promise<unknown>) => {
      const before = performance.eventLoopUtilization();
      await pass();
      return performance.eventLoopUtilization(before).utilization;
    };
    const inProcess = await busyDuring(() => h.feeds.renderSchool(SCHOOL, { all: true, force: true }));
    const renderer = workerRenderer({ feeds: h.feeds, store: sqlite() });
    try {
      const inWorker = await busyDuring(() => renderer.renderSchool(SCHOOL, { all: true, force: true }));
      // Seen: 0.87 in-process, 0.01 with the worker (starting it, and the observer's messages).
      expect(inProcess).toBeGreaterThan(0.5);
      expect(inWorker).toBeLessThan(0.15);
    } finally {
      await renderer.close();
    }
  }, 180_000);

  it('renders in-process, and says so, when the worker cannot open the store', async () => {
    const reasons: string[] = [];
    const renderer = workerRenderer({
      feeds: h.feeds,
      // Under a regular file: no directory can be made there, no database opened.
      store: { file: path.join(h.dir, 'rostercal.sqlite', 'rostercal.sqlite') },
      onFallback: (why) => reasons.push(why),
    });
    try {
      const r = await renderer.renderSchool(SCHOOL, { all: true, force: true });
      expect(r.rendered).toBeGreaterThan(0);
      expect(reasons).toHaveLength(1);
      expect(reasons[0]).toMatch(/^feed render worker: /);
    } finally {
      await renderer.close();
    }
  }, 180_000);

  it('stops a pass under way when closed, and takes no more', async () => {
    // Closed when the worker reports its first rendered feed: under way by its own word, with the school's other
    // feeds still to come, however fast or loaded the machine.
    let closing: Promise<void> | undefined;
    const renderer = workerRenderer({
      feeds: h.feeds,
      store: sqlite(),
      onRender: () => {
        closing ??= renderer.close();
      },
    });
    const pass = renderer.renderSchool(SCHOOL, { all: true, force: true });
    await expect(pass).rejects.toThrow('the server is stopping');
    expect(closing).toBeDefined();
    await closing;
    await expect(renderer.renderSchool(SCHOOL)).rejects.toThrow('the server is stopping');
  });
});
