// Files that hold children's data or secrets (the SQLite database and its -wal/-shm, the feed secret, the
// rotation record) are readable by the service's user alone: 0600 files in a 0700 directory.
import { chmodSync, mkdirSync, statSync } from 'node:fs';

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** Creates the directory 0700, or narrows an existing one that others can read. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  narrow(dir, PRIVATE_DIR_MODE);
}

/** Narrows a file (if it exists) to 0600. */
export function ensurePrivateFile(file: string): void {
  narrow(file, PRIVATE_FILE_MODE);
}

function narrow(p: string, mode: number): void {
  try {
    if ((statSync(p).mode & 0o077) !== 0) chmodSync(p, mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
