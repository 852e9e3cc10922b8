// sqliteQuickCheck (src/store/sqlite-integrity.ts) on real SQLite files: an intact file is null, a file with damaged
// pages (the 2 KB blocks overwritten mid-file that left /readyz 200 while feeds failed) is SQLite's description
// of the damage, and a file that cannot be opened at all is a description too: the check never rejects.
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteQuickCheck } from '../../src/store/sqlite-integrity.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'rostercal-integrity-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PAGE = 4096;

/** A file of a few hundred pages: one table with an index, as a store's snapshot tables are. */
function makeFile(name: string): string {
  const file = path.join(dir, name);
  const db = new DatabaseSync(file);
  db.exec(`pragma page_size = ${PAGE}; pragma journal_mode = delete;
    create table rows (id integer primary key, school text not null, data text not null);
    create index rows_school on rows (school, id);`);
  const insert = db.prepare('insert into rows (school, data) values (?, ?)');
  db.exec('begin');
  for (let i = 0; i < 3000; i++) insert.run(`school-${i % 7}`, `row ${i} ${'.'.repeat(300)}`);
  db.exec('commit');
  db.close();
  return file;
}

/** Overwrites `pages` whole pages from the middle of the file with a repeating byte. */
function damage(file: string, pages: number): void {
  const middle = Math.floor(statSync(file).size / PAGE / 2);
  const fd = openSync(file, 'r+');
  try {
    for (let p = 0; p < pages; p++) writeSync(fd, Buffer.alloc(PAGE, 0x5a), 0, PAGE, (middle + p) * PAGE);
  } finally {
    closeSync(fd);
  }
}

describe('sqliteQuickCheck', () => {
  it('answers null for an intact file, opened normally or as immutable', async () => {
    const file = makeFile('intact.sqlite');
    expect(await sqliteQuickCheck(file)).toBeNull();
    expect(await sqliteQuickCheck(file, { immutable: true })).toBeNull();
  });

  it('names the damage of a file whose middle pages were overwritten, in at most five lines', async () => {
    const file = makeFile('damaged.sqlite');
    damage(file, 5);
    const found = await sqliteQuickCheck(file);
    expect(found).toEqual(expect.any(String));
    expect(found).not.toBe('');
    // quick_check(5): at most five findings, joined on one line.
    expect(found!.split('; ').length).toBeLessThanOrEqual(5);
    expect(found).not.toContain('\n');
  });

  it('answers, never rejects, for a file that is not a database or is not there', async () => {
    const junk = path.join(dir, 'junk.sqlite');
    writeFileSync(junk, Buffer.alloc(3 * PAGE, 0x41));
    expect(await sqliteQuickCheck(junk)).toMatch(/not a database|malformed/);
    // Read-only: a missing file is not created to be checked.
    const missing = path.join(dir, 'missing', 'rostercal.sqlite');
    expect(await sqliteQuickCheck(missing)).toMatch(/unable to open/);
  });
});
