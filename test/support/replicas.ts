// Scheduler replicas as child processes (test/sync/fixtures/replica.ts) for the tests that run several on one
// database: what each has said, a way to wait for a line (seen or to come), and a way to fire its jobs.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

/** A fire event (`queued`, `queued-elsewhere`, `started`, `waiting`, `finished`, `skipped`), `pulled` or `ready`. */
export interface ReplicaLine {
  type: string;
  at: string;
  owner: string;
  job?: string;
  fireTime?: string | null;
  outcome?: { status: string; error?: string | null };
  reason?: string;
  kind?: string;
  requestedKind?: string;
  upgradedBecause?: string | null;
  runId?: number;
}

export interface Replica {
  name: string;
  proc: ChildProcess;
  lines: ReplicaLine[];
  /** Fires a job as its schedule would at `fireTime` (elected across replicas). */
  fire(job: string, fireTime: string): void;
  /** The first line (seen or to come) that matches. */
  next(match: (l: ReplicaLine) => boolean): Promise<ReplicaLine>;
  exit: Promise<unknown>;
}

/** Starts a replica; `env` names the database and the upstream (and the cron schedules, when its own). */
export function startReplica(name: string, env: Record<string, string>): Replica {
  const proc = spawn(process.execPath, ['test/sync/fixtures/replica.ts'], {
    env: { ...process.env, ...env, REPLICA_NAME: name },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: ReplicaLine[] = [];
  const waiters: { match: (l: ReplicaLine) => boolean; resolve: (l: ReplicaLine) => void }[] = [];
  let buffer = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => {
    buffer += d.toString();
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = JSON.parse(buffer.slice(0, nl)) as ReplicaLine;
      buffer = buffer.slice(nl + 1);
      lines.push(line);
      for (const w of [...waiters])
        if (w.match(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
    }
  });
  proc.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exit = once(proc, 'exit');
  proc.on('exit', (code) => {
    if (code) console.error(`replica ${name} exited ${code}: ${stderr}`);
  });
  return {
    name,
    proc,
    lines,
    fire: (job, fireTime) => proc.stdin!.write(`${JSON.stringify({ job, fireTime })}\n`),
    next: (match) => {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      // A replica that dies first never says it: fail then, naming what was awaited, instead of hanging.
      return Promise.race([
        new Promise<ReplicaLine>((resolve) => waiters.push({ match, resolve })),
        exit.then(() => {
          const late = lines.find(match);
          if (late) return late;
          throw new Error(`replica ${name} exited before the line awaited; stderr: ${stderr.slice(-2000)}`);
        }),
      ]);
    },
    exit,
  };
}

/** The replica among `rs` that won the fire, once one has. */
export function winner(rs: Replica[], job: string, fireTime: string): Promise<Replica> {
  return Promise.race(
    rs.map((r) =>
      r.next((l) => l.type === 'queued' && l.job === job && l.fireTime === fireTime).then(() => r),
    ),
  );
}

/** Matches the line of that type about that fire. */
export const is = (type: string, job: string, fireTime: string) => (l: ReplicaLine) =>
  l.type === type && l.job === job && l.fireTime === fireTime;

/** Kills every replica still running (afterAll). */
export function killReplicas(rs: Replica[]): void {
  for (const r of rs) if (r.proc.exitCode === null && r.proc.signalCode === null) r.proc.kill('SIGKILL');
}
