// Issue 28: bench:fleet's fifty schools each asked for a feed re-render pass at about the same moment after
// serve started, and nothing limited how many ran: fifty worker threads at once (RSS peak 1,130 MB, a feed request
// of 21 s, pulls past their next fire). Passes of all schools now share maxWorkers workers, first asked first run,
// one waiting pass per school; every school's feeds still end current, and a stop ends the waiting ones.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SchoolConfig } from '../../src/config.ts';
import { listFeedDefs } from '../../src/feeds/feed-defs.ts';
import { type RenderLoad, workerRenderer } from '../../src/feeds/school-renderer.ts';
import { createMetrics } from '../../src/metrics.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { type Harness, startHarness } from './harness.ts';

let h: Harness;
/** Three schools in one store, each pulled from the same emulator under its own id. */
const SCHOOLS = ['hill', 'dale', 'fern'];

beforeAll(async () => {
  h = await startHarness({ scale: 'small' });
  for (const id of SCHOOLS.slice(1)) {
    const school: SchoolConfig = { ...h.school, id };
    const summary = await pullSchool({
      store: h.store,
      client: h.client,
      school,
      kind: 'full',
      now: () => new Date(h.sandbox.now()),
    });
    expect(summary.status).toBe('succeeded');
  }
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const sqlite = () => ({ file: path.join(h.dir, 'rostercal.sqlite') });
/** One worker for every school's passes, counting the threads it starts; a pass run in-process fails the test. */
const oneWorker = (onWorkerStart: () => void) => ({
  feeds: h.feeds,
  store: sqlite(),
  maxWorkers: 1,
  onWorkerStart,
  onFallback: (why: string) => {
    throw new Error(`fell back: ${why}`);
  },
});

/** Feeds of the school whose stored bytes are not for its current data version and today's window. */
async function staleFeeds(schoolId: string): Promise<string[]> {
  const version = await h.store.records.dataVersion(schoolId);
  const day = h.feeds.currentWindow().key;
  const stale: string[] = [];
  for (const d of await listFeedDefs(h.store, schoolId)) {
    const r = await h.store.feeds.getRenderedFeed(schoolId, d.scope, d.scopeId);
    if (!r || r.dataVersion !== version || r.windowKey !== day) stale.push(`${d.scope}:${d.scopeId}`);
  }
  return stale;
}

describe('feed re-render passes of several schools', () => {
  it('run one worker at a time, in the order asked, a second request joining its school’s waiting pass; all feeds end current', async () => {
    const loads: RenderLoad[] = [];
    /** The school of each feed rendered, in the order the workers reported them. */
    const renders: string[] = [];
    let again: Promise<unknown> | undefined;
    // As serve wires it: the gauge /metrics shows, read at the moment two passes wait.
    const metrics = createMetrics({ defaultMetrics: false });
    let gaugeAtPeak: Promise<string> | undefined;
    let threads = 0;
    const renderer = workerRenderer({
      ...oneWorker(() => threads++),
      onRender: (info) => renders.push(info.schoolId),
      onLoad: (load) => {
        loads.push(load);
        metrics.observeRenderLoad(load);
        // dale asked again while its pass waits behind hill's: it joins that pass.
        if (load.running === 1 && load.waiting === 2 && !again) {
          gaugeAtPeak = metrics.registry.getSingleMetricAsString('rostercal_feed_render_passes');
          again = renderer.renderSchool('dale', { all: true });
        }
      },
    });
    try {
      for (const id of SCHOOLS) expect(await staleFeeds(id)).not.toEqual([]);
      const results = await Promise.all(SCHOOLS.map((id) => renderer.renderSchool(id, { all: true })));
      for (const r of results) expect(r.rendered).toBeGreaterThan(0);
      for (const id of SCHOOLS) expect(await staleFeeds(id)).toEqual([]);
      // The workers' own reports: each school's renders in one run (no two passes at once), in the order asked.
      const runs = renders.filter((s, i) => s !== renders[i - 1]);
      expect(runs).toEqual(SCHOOLS);

      // What the renderer tells the metrics: never more than one pass under way; three started, not four.
      expect(Math.max(...loads.map((l) => l.running))).toBe(1);
      const started = loads.filter((l, i) => l.running > (loads[i - 1]?.running ?? 0)).length;
      expect(started).toBe(3);
      expect(loads.at(-1)).toEqual({ running: 0, waiting: 0 });
      // The three passes, back to back, shared one thread: its modules and store connection were paid once.
      expect(threads).toBe(1);
      expect(await again).toBe(results[1]);
      const peak = await gaugeAtPeak;
      expect(peak).toContain('rostercal_feed_render_passes{state="running"} 1');
      expect(peak).toContain('rostercal_feed_render_passes{state="waiting"} 2');
    } finally {
      await renderer.close();
    }
  }, 180_000);

  it('keeps a thread for the next pass, ends it once idle, and a later pass starts a new one', async () => {
    let threads = 0;
    const renderer = workerRenderer(oneWorker(() => threads++));
    try {
      const first = await renderer.renderSchool('hill', { all: true, force: true });
      expect(first.rendered).toBeGreaterThan(0);
      await renderer.renderSchool('dale', { all: true, force: true });
      expect(threads).toBe(1);
      // Idle for longer than a thread is kept (10 s): the next pass needs a new one, and renders as well.
      await new Promise((r) => setTimeout(r, 11_000));
      const later = await renderer.renderSchool('fern', { all: true, force: true });
      expect(later.rendered).toBeGreaterThan(0);
      expect(threads).toBe(2);
    } finally {
      await renderer.close();
    }
  }, 180_000);

  it('ends the passes still waiting when closed, and starts no worker for them', async () => {
    const loads: RenderLoad[] = [];
    let closing: Promise<void> | undefined;
    const renderer = workerRenderer({
      feeds: h.feeds,
      store: sqlite(),
      maxWorkers: 1,
      onLoad: (load) => loads.push(load),
      // Closed when the first pass is under way by its worker's own word, the other two still waiting.
      onRender: () => {
        closing ??= renderer.close();
      },
    });
    const passes = await Promise.allSettled(
      SCHOOLS.map((id) => renderer.renderSchool(id, { all: true, force: true })),
    );
    for (const pass of passes)
      expect(pass.status === 'rejected' && (pass.reason as Error).message).toBe('the server is stopping');
    await closing;
    expect(Math.max(...loads.map((l) => l.running))).toBe(1);
    expect(loads.filter((l, i) => l.running > (loads[i - 1]?.running ?? 0))).toHaveLength(1);
    expect(loads.at(-1)).toEqual({ running: 0, waiting: 0 });
  }, 180_000);
});
