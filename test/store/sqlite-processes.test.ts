// Several processes on one SQLite file (e.g. `rostercal sync` while `rostercal serve` runs): migrations
// and write transactions queue on the file lock instead of failing.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { until } from '../support/until.ts';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'rostercal-procs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('lets several processes share one SQLite file', async () => {
  const file = join(dir, 'shared.sqlite');
  const worker = join(import.meta.dirname, 'sqlite-worker.ts');
  const names = ['a', 'b', 'c'];
  await Promise.all(names.map((n) => run(process.execPath, [worker, file, n], { timeout: 60_000 })));

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
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
      child.on('exit', () => reject(new Error('holder exited before taking the lock')));
    });
    // The holder keeps the lock until told: the write must wait for it however slow the machine, and this process's
    // event loop must keep turning meanwhile (ten turns of a 50 ms timer, then the holder is let go).
    let ticks = 0;
    const timer = setInterval(() => ticks++, 50);
    let written = false;
    const writing = store.records.setCursor('s', 'mine', 'x').then(() => {
      written = true;
    });
    try {
      await until('ten turns of the event loop while the write waits', () => ticks >= 10 || written);
      expect(written, 'the write did not wait for the lock').toBe(false);
    } finally {
      child.stdin.end('release\n');
      clearInterval(timer);
    }
    await writing;
    expect(await exited).toBe(0);
    expect(await store.records.getCursor('s', 'held')).toBe('holder');
    expect(await store.records.getCursor('s', 'mine')).toBe('x');
  } finally {
    await store.close();
  }
});
