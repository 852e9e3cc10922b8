// A new SQLite store is made with PAGE_SIZE pages; one made before keeps its own page size and works on.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, PAGE_SIZE } from '../../src/store/index.ts';
import { writeAndFindSession } from './fixtures.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'rostercal-page-size-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pageSize = (file: string) => {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return (db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size;
  } finally {
    db.close();
  }
};

describe('SQLite page size', () => {
  it('is PAGE_SIZE for a new store', async () => {
    const file = path.join(dir, 'new.sqlite');
    const store = await openStore({ file });
    await writeAndFindSession(store);
    await store.close();
    expect(PAGE_SIZE).toBe(16_384);
    expect(pageSize(file)).toBe(PAGE_SIZE);
  });

  it('stays as it was for a store made before, which reads and writes as ever', async () => {
    const file = path.join(dir, 'old.sqlite');
    const old = new DatabaseSync(file);
    old.exec('PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; CREATE TABLE made_before (x)');
    old.close();
    const store = await openStore({ file });
    await writeAndFindSession(store);
    await store.close();
    expect(pageSize(file)).toBe(4096);
  });
});
