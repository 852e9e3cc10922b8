// Files that hold children's data or secrets (the SQLite database and its -wal/-shm, the feed secret, the
// rotation record) are readable by the service's user alone: 0600 files in a 0700 directory.
import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/**
 * Creates the directory 0700, or narrows an existing one that others can read, unless it is a shared directory
 * (sticky, like /tmp, or the filesystem root), which is left alone: the files in it are still 0600.
 */
export function ensurePrivateDir(dir: string): void {
  const abs = path.resolve(dir);
  makeDirs(abs, PRIVATE_DIR_MODE);
  const st = statSync(abs);
  if ((st.mode & 0o1000) !== 0 || abs === path.parse(abs).root || abs === path.resolve(tmpdir())) return;
  narrow(abs, PRIVATE_DIR_MODE);
}

/**
 * mkdir -p one level at a time. Node's recursive mkdirSync never returns where a parent exists but refuses a child
 * with ENOENT: `rostercal backup --out /proc/nope` spun until killed (150 s seen); each level on its own fails at once.
 */
function makeDirs(abs: string, mode: number): void {
  const missing: string[] = [];
  for (let at = abs; !existsSync(at); at = path.dirname(at)) {
    missing.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const d of missing) {
    try {
      mkdirSync(d, { mode });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/** Narrows a file (if it exists) to 0600. */
export function ensurePrivateFile(file: string): void {
  narrow(file, PRIVATE_FILE_MODE);
}

function narrow(p: string, mode: number): void {
  try {
    if ((statSync(p).mode & 0o077) !== 0) chmodSync(p, mode);
  } catch (err) {
    // Gone, or not ours to change (the files inside are still created 0600).
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'EPERM') throw err;
  }
}
