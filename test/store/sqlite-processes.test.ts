// Several processes on one SQLite file (e.g. `rostercal sync` while `rostercal serve` runs): migrations,
// write transactions and fire claims queue on the file lock instead of failing or double-running.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'rostercal-procs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('lets several processes share one SQLite file', async () => {
  const file = join(dir, 'shared.sqlite');
  const worker = join(import.meta.dirname, 'sqlite-worker.ts');
  const names = ['a', 'b', 'c'];
  const outputs = await Promise.all(
    names.map((n) => run(process.execPath, [worker, file, n], { timeout: 60_000 })),
  );
  const won = outputs.map((o) => JSON.parse(o.stdout.trim()) as string[]);
  // Each of the 10 fires was claimed by exactly one process.
  const all = won.flat();
  expect(all).toHaveLength(10);
  expect(new Set(all).size).toBe(10);

  const store = await openStore({ file, migrate: false });
  try {
    expect(await store.migrate()).toEqual([]);
    expect(await store.liveIds('s', 'sessions')).toHaveLength(10);
    for (const n of names) expect(await store.getCursor('s', `cursor-${n}`)).toBe('9');
  } finally {
    await store.close();
  }
});
