// The render thread (src/feeds/school-render-worker.ts), run by piscina on a real worker thread over the pulled
// SQLite file, without the renderer around it: a pass renders as the in-process one does (on the job's clock),
// tells each render on its port and closes the port when it ends; a store it cannot open makes the pass `unable`
// (worth running in-process); a stop on the port ends the pass under way, and the next pass opens the store again.
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PassOutcome, PassTask, RenderJob, RenderStore } from '../../src/feeds/school-renderer.ts';
import { type Harness, startHarness } from './harness.ts';

const SCHOOL = 'hill';
const WORKER = fileURLToPath(new URL('../../src/feeds/school-render-worker.ts', import.meta.url));
let h: Harness;
const pools: Piscina[] = [];

beforeAll(async () => {
  h = await startHarness({ scale: 'small' });
}, 120_000);
afterAll(async () => {
  for (const pool of pools) await pool.destroy();
  await h?.close();
});

function threadOver(store: RenderStore) {
  const pool = new Piscina<PassTask, PassOutcome>({
    filename: WORKER,
    workerData: store,
    maxThreads: 1,
    atomics: 'disabled',
  });
  pools.push(pool);
  return pool;
}

/** One pass on `pool`: its outcome, the renders it told, and whether it closed its port; `onRender` may stop it. */
async function pass(
  pool: Piscina<PassTask, PassOutcome>,
  opts: RenderJob['opts'],
  onRender?: (port: MessagePort) => void,
) {
  const job: RenderJob = {
    schoolId: SCHOOL,
    opts,
    window: h.feeds.window,
    clockOffsetMs: h.feeds.now().getTime() - Date.now(),
    templates: null,
    locationOwnerIds: null,
  };
  const { port1, port2 } = new MessageChannel();
  const told: string[] = [];
  port1.on('message', (info: { scope: string; scopeId: number }) => {
    told.push(`${info.scope}:${info.scopeId}`);
    onRender?.(port1);
  });
  const closed = once(port1, 'close');
  const outcome = await pool.run({ job, port: port2 }, { transferList: [port2] });
  await closed;
  return { outcome, told };
}

/** Each stored feed's ETag, data version and window, as requests will find them. */
async function stored(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const s of await h.store.feeds.listRenderedFeedStates(SCHOOL))
    if (s.scope !== 'family') out.set(`${s.scope}:${s.scopeId}`, `${s.etag}|${s.dataVersion}|${s.windowKey}`);
  return out;
}

describe('the render thread', () => {
  it('renders a pass as the in-process one does, on the job clock, telling each render and closing its port', async () => {
    const inProcess = await h.feeds.renderSchool(SCHOOL, { all: true, force: true });
    const before = await stored();
    expect(before.size).toBe(inProcess.rendered);

    const { outcome, told } = await pass(threadOver({ file: path.join(h.dir, 'rostercal.sqlite') }), {
      all: true,
      force: true,
    });
    expect(outcome.type, JSON.stringify(outcome)).toBe('done');
    if (outcome.type !== 'done') return;
    expect(outcome.result.rendered).toBe(inProcess.rendered);
    expect(told.sort()).toEqual([...before.keys()].sort());
    // The same bytes for the same data version and window: the window is the job clock's day, not the thread's.
    expect(await stored()).toEqual(before);
  }, 180_000);

  it('is unable, not failed, when it cannot open the store', async () => {
    // Under a regular file: no directory can be made there, no database opened.
    const pool = threadOver({ file: path.join(h.dir, 'rostercal.sqlite', 'rostercal.sqlite') });
    const { outcome, told } = await pass(pool, { all: true, force: true });
    expect(outcome.type, JSON.stringify(outcome)).toBe('unable');
    expect(told).toEqual([]);
  });

  it('ends the pass under way when asked to stop, and opens the store again for the next pass', async () => {
    const pool = threadOver({ file: path.join(h.dir, 'rostercal.sqlite') });
    // Stopped at its first render: under way by its own word, with the school's other feeds still to come.
    let asked = false;
    const stopped = await pass(pool, { all: true, force: true }, (port) => {
      if (!asked) port.postMessage('stop');
      asked = true;
    });
    expect(stopped.outcome.type, JSON.stringify(stopped.outcome)).toBe('failed');
    const all = (await stored()).size;
    expect(stopped.told.length).toBeLessThan(all);

    const next = await pass(pool, { all: true, force: true });
    expect(next.outcome.type, JSON.stringify(next.outcome)).toBe('done');
    expect(next.told).toHaveLength(all);
  }, 180_000);
});
