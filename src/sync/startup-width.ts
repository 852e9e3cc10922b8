// How many start-up pulls run at once, following what the machine has to spare. A fixed bound was wrong both
// ways: against an upstream across a network a small school's pull is mostly waiting on answers (a few tenths of a
// CPU second over seconds of wall), so 6 at once left the cores idle while 500 schools queued; on a machine whose
// cores are already busy, more at once only made each pull slower (bench:fleet, 100 schools at load 17-24: 16 at
// once took 99 s, 6 took 67 s). So the width starts at 6, widens while the machine's CPUs have idle time and
// serve's event loop has room, and narrows back when the loop is nearly always busy (requests would wait behind
// pulls). Never below 6: on a machine shared with busy neighbours the loop reads as busy while it waits for a core
// (its utilisation counts time it was ready but not running), and narrowing to 2 there made the start-up 3× slower
// (100 schools behind 100 ms upstreams: 99 s against 35 s at 6).
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';

export interface WidthBounds {
  start: number;
  min: number;
  /** The PostgreSQL pool has 10 connections by default; a pull holds one only while it writes. */
  max: number;
}

export const DEFAULT_WIDTH: WidthBounds = { start: 6, min: 6, max: 24 };

/** One second's reading: the event loop's utilisation (0..1) and the share of the machine's CPU time left idle. */
export interface Reading {
  loop: number;
  machineIdle: number;
}

/** Above this, serve's loop has no room: a request would wait behind the pulls' work. */
const LOOP_FULL = 0.9;
/** Below this, the loop spends most of its time waiting (on the upstream's answers, on the store). */
const LOOP_ROOM = 0.7;
/** Idle CPU (share of all cores) the machine must have before more pulls are started. */
const MACHINE_ROOM = 0.25;

/** The next width from the current one and the last second's reading. */
export function nextWidth(width: number, r: Reading, b: WidthBounds = DEFAULT_WIDTH): number {
  if (r.loop > LOOP_FULL) return Math.max(b.min, width - 1);
  if (r.loop < LOOP_ROOM && r.machineIdle > MACHINE_ROOM) return Math.min(b.max, width + 2);
  return width;
}

/** The machine's idle and total CPU time so far, all cores (ms). */
function cpuTimes(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const c of cpus()) {
    idle += c.times.idle;
    total += c.times.user + c.times.nice + c.times.sys + c.times.idle + c.times.irq;
  }
  return { idle, total };
}

/** A width that follows the readings taken every `everyMs` until stopped. */
export function startupWidth(
  bounds: WidthBounds = DEFAULT_WIDTH,
  everyMs = 1000,
): { now(): number; stop(): void } {
  let width = bounds.start;
  let elu = performance.eventLoopUtilization();
  let times = cpuTimes();
  const timer = setInterval(() => {
    const nowElu = performance.eventLoopUtilization();
    const nowTimes = cpuTimes();
    const total = nowTimes.total - times.total;
    const reading = {
      loop: performance.eventLoopUtilization(nowElu, elu).utilization,
      machineIdle: total > 0 ? (nowTimes.idle - times.idle) / total : 0,
    };
    elu = nowElu;
    times = nowTimes;
    width = nextWidth(width, reading, bounds);
  }, everyMs);
  timer.unref();
  return { now: () => width, stop: () => clearInterval(timer) };
}
