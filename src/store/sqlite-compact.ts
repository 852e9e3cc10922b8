// Rebuilding an SQLite store in place (`rostercal migrate --compact`): VACUUM gives back the space of deleted
// records and, for a store made before new files got 16 KB pages, moves it to PAGE_SIZE pages (a page size
// changes only outside WAL mode, by a VACUUM). Nothing else may have the file open meanwhile: leaving WAL
// mode needs every other connection gone, so a running `serve` or `sync` makes it refuse, not wait.
import { statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { PAGE_SIZE } from './index.ts';

export interface CompactResult {
  pageSizeBefore: number;
  pageSizeAfter: number;
  bytesBefore: number;
  bytesAfter: number;
}

/** Another process has the store open (a running `serve` or `sync`): it must be stopped first. */
export class StoreInUseError extends Error {
  constructor(file: string) {
    super(`${file} is open in another process (a running rostercal serve or sync?): stop it and try again`);
    this.name = 'StoreInUseError';
  }
}

const BUSY_WAIT_MS = 2_000;

function fileBytes(file: string): number {
  let total = 0;
  for (const f of [file, `${file}-wal`]) {
    try {
      total += statSync(f).size;
    } catch {
      // No write-ahead log: nothing to add.
    }
  }
  return total;
}

function pragma(db: DatabaseSync, name: string): string | number {
  const row = db.prepare(`PRAGMA ${name}`).get() as Record<string, string | number> | undefined;
  return row ? Object.values(row)[0]! : '';
}

export function compactSqlite(file: string): CompactResult {
  const bytesBefore = fileBytes(file);
  const db = new DatabaseSync(file, { timeout: BUSY_WAIT_MS });
  try {
    const pageSizeBefore = Number(pragma(db, 'page_size'));
    let mode: string | number;
    try {
      mode = pragma(db, 'journal_mode = DELETE');
    } catch (err) {
      if ((err as { errcode?: number }).errcode === 5) throw new StoreInUseError(file);
      throw err;
    }
    if (mode !== 'delete') throw new StoreInUseError(file);
    try {
      db.exec(`PRAGMA page_size = ${PAGE_SIZE}`);
      // The rebuilt copy in memory, never in a temporary file: it is children's data.
      db.exec('PRAGMA temp_store = MEMORY');
      db.exec('VACUUM');
    } finally {
      db.exec('PRAGMA journal_mode = WAL');
    }
    return {
      pageSizeBefore,
      pageSizeAfter: Number(pragma(db, 'page_size')),
      bytesBefore,
      bytesAfter: fileBytes(file),
    };
  } finally {
    db.close();
  }
}
