// CPU of the processes a benchmark phase involves, sampled once a second from /proc while it runs: which one (or
// which thread: serve's main thread is its event loop) limits the phase, and what the rest of the machine took
// meanwhile (the cores are shared with other work, and a phase that waits on them reads as slow).
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** utime + stime of /proc/<path>/stat in CPU seconds (USER_HZ, 100 on Linux); 0 once the process is gone. */
function ticksOf(statPath: string): number {
  try {
    const stat = readFileSync(statPath, 'utf8');
    // The command name (field 2) may hold spaces: fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The machine's busy CPU seconds, all cores (/proc/stat's first line: everything but idle and iowait). */
function machineBusySeconds(): number {
  const first = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = first.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - first[3]! - first[4]!) / 100;
}

/** A process sampled by pid; its threads apart when `threads` (a node process: its main thread, its workers). */
export interface Watched {
  name: string;
  /** The pids to sum (a set that may grow: PostgreSQL backends of one database). */
  pids: () => number[];
}

export interface CpuReport {
  seconds: number;
  /** CPU seconds used in the window, per watched name. */
  used: Map<string, number>;
  /** CPU seconds of serve's busiest thread, and its name, and how many seconds it was over 90 % of a core. */
  busiestThread: { name: string; seconds: number; saturatedS: number } | null;
  /** Every process on the machine, ours and others'. */
  machine: number;
}

export interface CpuSampler {
  stop(): CpuReport;
}

/** The CPU seconds each thread of `pid` has used, by "tid name". */
function threadsOf(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    let comm = '?';
    try {
      comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
    } catch {}
    out.set(`${tid} ${comm}`, ticksOf(`/proc/${pid}/task/${tid}/stat`));
  }
  return out;
}

/**
 * Samples every second until stopped. A pid's CPU counts from its first sample (a PostgreSQL backend started
 * meanwhile counts from 0: it is new); a pid gone before the end keeps its last sample.
 */
export function sampleCpu(watched: Watched[], threadsOfPid?: number): CpuSampler {
  const t0 = performance.now();
  const machine0 = machineBusySeconds();
  const first = new Map<string, number>();
  const last = new Map<string, number>();
  const seen = new Set<number>();
  const thread0 = threadsOfPid ? threadsOf(threadsOfPid) : new Map<string, number>();
  let threadPrev = new Map(thread0);
  let prevAt = t0;
  const threadLast = new Map(thread0);
  const saturated = new Map<string, number>();
  const sample = (initial: boolean) => {
    for (const w of watched)
      for (const pid of w.pids()) {
        const key = `${w.name}:${pid}`;
        const v = ticksOf(`/proc/${pid}/stat`);
        if (!first.has(key)) first.set(key, initial || seen.has(pid) ? v : 0);
        seen.add(pid);
        if (v > 0) last.set(key, v);
      }
    if (!threadsOfPid || initial) return;
    const now = threadsOf(threadsOfPid);
    const at = performance.now();
    const elapsed = Math.max(0.001, (at - prevAt) / 1000);
    prevAt = at;
    for (const [t, v] of now) {
      if ((v - (threadPrev.get(t) ?? 0)) / elapsed > 0.9) saturated.set(t, (saturated.get(t) ?? 0) + elapsed);
      threadLast.set(t, v);
    }
    threadPrev = now;
  };
  sample(true);
  const timer = setInterval(() => sample(false), 1000);
  return {
    stop() {
      clearInterval(timer);
      sample(false);
      const used = new Map<string, number>();
      for (const w of watched) used.set(w.name, 0);
      for (const [key, v] of last) {
        const name = key.slice(0, key.lastIndexOf(':'));
        used.set(name, (used.get(name) ?? 0) + v - (first.get(key) ?? 0));
      }
      let busiest: CpuReport['busiestThread'] = null;
      for (const [t, v] of threadLast) {
        const s = v - (thread0.get(t) ?? 0);
        if (!busiest || s > busiest.seconds)
          busiest = { name: t, seconds: s, saturatedS: saturated.get(t) ?? 0 };
      }
      return {
        seconds: (performance.now() - t0) / 1000,
        used,
        busiestThread: busiest,
        machine: machineBusySeconds() - machine0,
      };
    },
  };
}

/** One line: each process's CPU seconds and share of a core, the busiest thread, and the machine's cores. */
export function formatCpu(r: CpuReport): string {
  const parts = [...r.used].map(
    ([name, s]) => `${name} ${s.toFixed(1)} CPU s (${((s / r.seconds) * 100).toFixed(0)}% of a core)`,
  );
  const ours = [...r.used.values()].reduce((a, b) => a + b, 0);
  const t = r.busiestThread;
  return (
    `CPU over ${r.seconds.toFixed(0)} s: ${parts.join(', ')}; ` +
    (t
      ? `serve's busiest thread (${t.name}) ${t.seconds.toFixed(1)} s, over 90% of a core for ${t.saturatedS.toFixed(0)} s; `
      : '') +
    `the machine ${r.machine.toFixed(1)} CPU s of ${(r.seconds * cpus().length).toFixed(0)} (${cpus().length} cores), ` +
    `${(r.machine - ours).toFixed(1)} of it not ours`
  );
}
