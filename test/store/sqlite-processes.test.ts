// Several processes on one SQLite file (e.g. `rostercal sync` while `rostercal serve` runs): migrations,
// write transactions and fire claims queue on the file lock instead of failing or double-running.
import { execFile, spawn } from 'node:child_process';
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
    expect(await store.records.liveIds('s', 'sessions')).toHaveLength(10);
    for (const n of names) expect(await store.records.getCursor('s', `cursor-${n}`)).toBe('9');
  } finally {
    await store.close();
  }
});

it('waits for another process’s write lock without blocking this process', async () => {
  const file = join(dir, 'held.sqlite');
  const store = await openStore({ file });
  try {
    const worker = join(import.meta.dirname, 'sqlite-worker.ts');
    const child = spawn(process.execPath, [worker, file, 'holder', 'hold'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
      child.on('exit', () => reject(new Error('holder exited before taking the lock')));
    });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 50);
    const started = Date.now();
    await store.records.setCursor('s', 'mine', 'x');
    clearInterval(timer);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThan(300);
    // The event loop kept turning while the write waited for the lock.
    expect(ticks).toBeGreaterThan(waited / 50 / 3);
    expect(await exited).toBe(0);
    expect(await store.records.getCursor('s', 'held')).toBe('holder');
    expect(await store.records.getCursor('s', 'mine')).toBe('x');
  } finally {
    await store.close();
  }
});
