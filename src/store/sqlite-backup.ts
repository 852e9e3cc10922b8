// An online copy of the SQLite store: VACUUM INTO on a connection of its own writes the database as one read
// transaction saw it (WAL: serve keeps writing meanwhile, and the copy is consistent), compacted, into a new file.
//
// The copy's rotation record row (which secret it vouches for) is dropped: a backup knows only the rotations made
// before it, so it must never vouch for the secret on its own. Started by hand, it serves nothing (503) until a
// record does; `rostercal restore` gives it the newest record there is (feeds/rotations.ts).
import { existsSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';

/** Copies the SQLite database `file` into `dest` (which must not exist), consistent while others write. */
export function backupSqlite(file: string, dest: string): void {
  if (!existsSync(file)) throw new Error(`no store at ${file}`);
  const db = new DatabaseSync(file, { timeout: 30_000 });
  try {
    db.prepare('VACUUM INTO ?').run(dest);
  } finally {
    db.close();
  }
  const copy = new DatabaseSync(dest);
  try {
    copy.exec('DELETE FROM feed_rotation_record');
  } finally {
    copy.close();
  }
}
