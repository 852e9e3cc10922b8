// The worker thread behind sqlite-checkpoints.ts: a connection of its own to the SQLite file that copies the
// write-ahead log back into the database when asked. It runs on another thread, so the copy (the better part of a
// second after a district's pull) never blocks the event loop that serves requests.
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

const port = parentPort;
if (!port) throw new Error('sqlite-checkpoint-worker.ts runs as a worker thread');

const { file } = workerData as { file: string };
// PASSIVE never waits for readers or writers; a short timeout covers another checkpoint of the same file.
const db = new DatabaseSync(file, { timeout: 100 });
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

port.on('message', (message: unknown) => {
  if (message === 'checkpoint') {
    try {
      checkpoint.get();
      port.postMessage('done');
    } catch (err) {
      // Busy (another process's checkpoint) or the file gone: the next request tries again.
      port.postMessage({ failed: err instanceof Error ? err.message : String(err) });
    }
  } else if (message === 'close') {
    db.close();
    port.close();
  }
});
port.postMessage('ready');
