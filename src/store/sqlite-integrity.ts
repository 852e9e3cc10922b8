// Whether an SQLite file is intact, checked the way serving would find out but all at once: SQLite's quick_check
// reads every page, where /readyz's few reads touched only the pages of the rows they asked for (20 blocks of
// 2 KB overwritten mid-file left /readyz 200 while feeds failed). On a worker thread, one per check, so a
// district's file (~100 MB) is read without holding up requests; its memory goes when the check ends.
import { Worker } from 'node:worker_threads';

/** null when the file is intact, else what is wrong in SQLite's words. Never rejects. */
export function sqliteQuickCheck(file: string, opts: { immutable?: boolean } = {}): Promise<string | null> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = new Worker(new URL('./sqlite-integrity-worker.ts', import.meta.url), {
        workerData: { file, immutable: opts.immutable === true },
      });
    } catch (err) {
      resolve(`the integrity check could not start: ${(err as Error).message}`);
      return;
    }
    // Never what keeps a process alive.
    worker.unref();
    let settled = false;
    const settle = (value: string | null) => {
      if (settled) return;
      settled = true;
      resolve(value);
    };
    worker.once('message', (m: string | null) => settle(m));
    worker.once('error', (err) => settle(`the integrity check failed: ${err.message}`));
    worker.once('exit', (code) => settle(`the integrity check ended without an answer (exit ${code})`));
  });
}
