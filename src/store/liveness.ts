// Whether the process that owns a run is still alive. A process beats every OWNER_BEAT_MS; one silent for
// OWNER_SILENT_MS is gone (killed, crashed, its container stopped). On the same machine the process table
// answers at once; across replicas only the heartbeat can.
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

export const OWNER_BEAT_MS = 10_000;
/** Three beats missed and some slack for a busy machine; under a minute, as promised to operators. */
export const OWNER_SILENT_MS = 45_000;

export interface OwnerBeat {
  host: string;
  pid: number;
  heartbeatAt: string;
}

/**
 * This machine and process namespace: where a pid means the same process. Two containers on one host share a
 * host name with `--network host` but not their pids.
 */
export function processHost(): string {
  let ns = '';
  try {
    ns = readlinkSync('/proc/self/ns/pid').replace(/^pid:/, '');
  } catch {
    // Not Linux: the host name alone.
  }
  return ns ? `${hostname()} ${ns}` : hostname();
}

let thisHost: string | undefined;

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Alive: it beat recently and, when it ran on this machine, its process still exists. */
export function ownerAlive(beat: OwnerBeat | null, now: Date, silentMs = OWNER_SILENT_MS): boolean {
  if (!beat) return false;
  if (now.getTime() - Date.parse(beat.heartbeatAt) > silentMs) return false;
  thisHost ??= processHost();
  if (beat.host === thisHost && beat.pid !== process.pid && !processExists(beat.pid)) return false;
  return true;
}
