// This process as the owner of the runs it records and the scheduled fires it wins (sync/scheduler.ts names
// itself with it too): one identity per process, and a heartbeat in the store while
// any run of it is going, so every other process (status, the admin page, another replica) can tell a run that
// is still going from one whose process died.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type Logger, silentLogger } from '../log.ts';
import { OWNER_BEAT_MS, processHost } from '../store/liveness.ts';
import type { RunOwner, Store } from '../store/types.ts';

let self: RunOwner | undefined;

/** This process: `host:pid:random` (the random part tells a restarted process with a reused pid apart). */
export function processOwner(): RunOwner {
  self ??= {
    id: `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
    host: processHost(),
    pid: process.pid,
    startedAt: new Date().toISOString(),
  };
  return self;
}

interface Beating {
  holders: number;
  timer: NodeJS.Timeout;
}
const beating = new Map<Pick<Store, 'runs'>, Beating>();

/**
 * Keeps this process's heartbeat going in `store` until the returned function is called (counted: the beat stops
 * when the last holder lets go). The first beat is written before this resolves, so a run started afterwards is
 * never mistaken for an orphan.
 */
export async function keepAlive(store: Pick<Store, 'runs'>, log: Logger = silentLogger): Promise<() => void> {
  const owner = processOwner();
  let entry = beating.get(store);
  if (!entry) {
    await store.runs.beat(owner, new Date().toISOString());
    entry = beating.get(store);
  }
  if (!entry) {
    const timer = setInterval(() => {
      store.runs.beat(owner, new Date().toISOString()).catch((err: unknown) => {
        log.warn({ err }, 'could not record this process as alive; its runs may read as interrupted');
      });
    }, OWNER_BEAT_MS);
    // The work being kept alive keeps the process running; the beat alone must not.
    timer.unref();
    entry = { holders: 0, timer };
    beating.set(store, entry);
  }
  entry.holders++;
  const held = entry;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    held.holders--;
    if (held.holders === 0) {
      clearInterval(held.timer);
      beating.delete(store);
    }
  };
}
