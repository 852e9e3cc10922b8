// Issue 46: the feed re-render worker runs below the request thread's priority (src/util/thread-priority.ts).
import { getPriority } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { BACKGROUND_NICE_STEPS, backgroundNice } from '../../src/util/thread-priority.ts';

const moduleUrl = pathToFileURL(new URL('../../src/util/thread-priority.ts', import.meta.url).pathname).href;

/** In a worker thread of its own: the module's call, and the thread's nice value read after it. */
function lowerInAWorker(): Promise<{ returned: number | null; after: number }> {
  const code = `const { parentPort } = require('node:worker_threads');
const { getPriority } = require('node:os');
import(${JSON.stringify(moduleUrl)}).then((m) => {
  const returned = m.lowerThisThreadsPriority();
  parentPort.postMessage({ returned, after: getPriority(0) });
});`;
  const worker = new Worker(code, { eval: true });
  return new Promise((resolve, reject) => {
    worker.once('message', (m) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

describe('a background thread’s priority', () => {
  it('is BACKGROUND_NICE_STEPS nice steps below its starter’s, never past the lowest (19)', () => {
    expect(BACKGROUND_NICE_STEPS).toBeGreaterThan(0);
    expect(backgroundNice(0)).toBe(BACKGROUND_NICE_STEPS);
    expect(backgroundNice(5)).toBe(5 + BACKGROUND_NICE_STEPS);
    expect(backgroundNice(15)).toBe(19);
    expect(backgroundNice(19)).toBe(19);
  });

  it('is lowered for the calling thread alone, on Linux: the thread that started it keeps its own', async () => {
    const mine = getPriority(0);
    const linux = process.platform === 'linux';
    const { returned, after } = await lowerInAWorker();
    // Elsewhere nice is the whole process's: it is left alone there.
    expect(after).toBe(linux ? backgroundNice(mine) : mine);
    expect(returned).toBe(linux ? after : null);
    // setpriority on the whole process would have lowered this thread too (where it can still be lowered).
    expect(getPriority(0)).toBe(mine);
  });
});
