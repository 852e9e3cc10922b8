// The worker thread behind sqlite-integrity.ts: one `PRAGMA quick_check` of the SQLite file on a connection of its
// own, so reading every page of the file (the better part of a second for a district's) never blocks the event
// loop that serves requests. Posts null when the file is intact, else SQLite's description of the damage.
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

const port = parentPort;
if (!port) throw new Error('sqlite-integrity-worker.ts runs as a worker thread');

const { file, immutable } = workerData as { file: string; immutable: boolean };
let result: string | null;
try {
  const db = immutable
    ? new DatabaseSync(`file:${encodeURI(file)}?immutable=1`, { readOnly: true })
    : new DatabaseSync(file, { readOnly: true, timeout: 1000 });
  try {
    // At most 5 lines of what is wrong: enough to say where, not a page per damaged page.
    const rows = db.prepare('PRAGMA quick_check(5)').all() as { quick_check: string }[];
    const lines = rows.map((r) => r.quick_check.replace(/\s+/g, ' ').trim());
    result = lines.length === 1 && lines[0] === 'ok' ? null : lines.join('; ');
  } finally {
    db.close();
  }
} catch (err) {
  // Damage bad enough that the check cannot even start ("database disk image is malformed").
  result = err instanceof Error ? err.message : String(err);
}
port.postMessage(result);
