// npm run bench:fleet — many schools on one replica (issues 28 and 46). One `rostercal serve` child process with
// BENCH_SCHOOLS (50) schools, each its own sandbox school at small scale (60 students, 5 teams, 174 sessions),
// all served by one upstream process of their own (one emulator serving every school, each on its own port, so
// each school's requests are counted apart and the upstream's CPU is not serve's).
//
// 0. A fresh replica (empty store) with the DEFAULT schedules (incremental `*/10 * * * * *`, full `0 */6 * * *`;
//    BENCH_INCREMENTAL overrides the incremental one): from its spawn to its banner, printed once every school's
//    start-up pull has ended (goal ≤ 120 s), and the fires meanwhile. Then `feeds list` issues every feed, and the
//    next pulls' re-render passes store them (waited for up to BENCH_RENDER_WAIT_S, 600), as in a service that
//    has been running: a pull that changes nothing then renders nothing.
// 1. serve again with schedules that never fire in the run: a fair sample of the feeds (FEEDS_PER_SCHOOL a
//    school, a mix of its scopes; the rest are never requested) and their pages, requested once unmeasured, then
//    at BENCH_RPS (20/s, by 4 clients each paced to its share, one request at a time) for BENCH_IDLE_SECONDS (60):
//    the idle latency and CPU.
// 2. serve again with the default schedules for BENCH_MINUTES (5), the same requests at the same rate:
//    - for every school, the lag from each incremental fire (its fire time, from serve's log) to its pull's
//      start; goal ≤ 10 s. A fire is judged when its time is at least 10 s before the end; a run too short to
//      judge one says so. Fires let pass are counted by why (support/fleet-fires.ts): folded into a start-up pull
//      and paced by the upstream's 429 are printed apart; the rest (load, the store) are misses;
//    - feed and page latency p50/p99/max busy against idle; goals: busy p99 ≤ 2× idle p99, busy max ≤ 2× idle max;
//    - serve's CPU seconds and each school's upstream requests, per school per hour (the CPU also net of the
//      idle phase's rate, which is the feed requests' own); serve's RSS, per school; the store's size per school.
// At the end, each of issue 46's fleet goals with its figure and met, NOT met or why it could not be judged, and
// the load average. BENCH_PHASES=startup runs phase 0 only, to its banner, and says where its time went: per school
// the wait for a start-up slot, the pull, its re-render, and the CPU of serve (its busiest thread), the upstream
// process, the store's PostgreSQL backends and the rest of the machine. BENCH_DATABASE_URL=postgres://…/db: the store in PostgreSQL (a database of its own is created
// on that server and dropped at the end) instead of SQLite. BENCH_UPSTREAM_LATENCY_MS delays each upstream answer (default 0). BENCH_LOG=file keeps serve's log of phase 2 (of phase 0 with BENCH_PHASES=startup). Not run in CI.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { type Sandbox, SCHOOL_TIME_ZONE, startSandbox } from '../src/sandbox/index.ts';
import { type Child, rostercal } from '../test/support/cli.ts';
import { freePort } from '../test/support/ports.ts';
import { formatCpu, sampleCpu } from './support/cpu-sampler.ts';
import {
  type FireJudgement,
  type FireVerdict,
  fireVerdict,
  judgeFires,
  printSkips,
} from './support/fleet-fires.ts';
import { printIdleBusyTable } from './support/latency-table.ts';
import { cpuSecondsOf, quantile, rssOf } from './support/proc.ts';
import { printStartupBreakdown, startupBreakdown } from './support/startup-breakdown.ts';

const SCHOOLS = Number(process.env.BENCH_SCHOOLS ?? 50);
const MINUTES = Number(process.env.BENCH_MINUTES ?? 5);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const RPS = Number(process.env.BENCH_RPS ?? 20);
/** Clients requesting at once (bench:feeds uses 4). */
const WORKERS = 4;
const INCREMENTAL = process.env.BENCH_INCREMENTAL;
/** Issue 46: a fire's pull starts within this many seconds of its time. */
const FIRE_LIMIT_S = 10;
/** How long phase 0 waits for the re-render passes that store the issued feeds. */
const RENDER_WAIT_S = Number(process.env.BENCH_RENDER_WAIT_S ?? 600);
// The incremental fires' interval in seconds (a schedule of every N seconds; the default's 10).
const INTERVAL_S = Number(/^\*\/(\d+) /.exec(INCREMENTAL ?? '*/10 * * * * *')?.[1] ?? 60);
/** Feeds requested per school (a mix of its scopes), each as .ics and as its landing page. */
const FEEDS_PER_SCHOOL = 6;
/** A schedule that never fires during the run (1 January, midnight). */
const NEVER = '0 0 0 1 1 *';
const TOKEN = 'sandbox-token';
/** BENCH_PHASES=startup: phase 0 only, to the banner, with where its time went. */
const STARTUP_ONLY = process.env.BENCH_PHASES === 'startup';

// --- the upstream process: SCHOOLS sandboxes, one line of JSON with their URLs, then serves until SIGTERM. ---
async function upstreams(n: number): Promise<void> {
  const all: Sandbox[] = [];
  // BENCH_UPSTREAM_LATENCY_MS: each answer that much later, as a real upstream across a network answers.
  const latencyMs = Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 0);
  for (let i = 0; i < n; i++)
    all.push(await startSandbox({ seed: 1000 + i, scale: 'small', token: TOKEN, latencyMs }));
  process.stdout.write(`${JSON.stringify(all.map((s) => s.url))}\n`);
  process.on('SIGTERM', () => {
    Promise.allSettled(all.map((s) => s.close())).finally(() => process.exit(0));
  });
}

const schoolId = (i: number) => `school-${String(i + 1).padStart(2, '0')}`;

interface Run {
  serve: Child;
  /** serve's log, one parsed JSON object per line. */
  log: Record<string, unknown>[];
}

function startServe(env: Record<string, string>): Run {
  const serve = rostercal(['serve'], { ...env, LOG_LEVEL: 'info' });
  const log: Record<string, unknown>[] = [];
  createInterface({ input: serve.proc.stdout! }).on('line', (line) => {
    if (line.startsWith('{')) log.push(JSON.parse(line) as Record<string, unknown>);
  });
  return { serve, log };
}

async function stopServe(run: Run): Promise<void> {
  if (run.serve.proc.exitCode === null) {
    run.serve.proc.kill('SIGTERM');
    await run.serve.ended;
  }
}

interface Latencies {
  feed: number[];
  page: number[];
  failed: number;
}

/**
 * Feeds and their pages in turn from WORKERS clients, each paced to its share of RPS (a client whose answer came
 * late sends its next request at once, but never more than one at a time: a starved serve is not buried under a
 * growing backlog), until `ms` have passed; each latency (ms).
 */
async function steadyLoad(urls: string[], ms: number, onTick?: () => void): Promise<Latencies> {
  const out: Latencies = { feed: [], page: [], failed: 0 };
  const start = performance.now();
  const interval = (1000 * WORKERS) / RPS;
  let next = 0;
  const tick = setInterval(() => onTick?.(), 1000);
  const worker = async (w: number) => {
    await sleep((w * interval) / WORKERS);
    for (let due = performance.now(); performance.now() - start < ms; due += interval) {
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const i = next++;
      const ics = urls[Math.floor(i / 2) % urls.length]!;
      const page = i % 2 === 1;
      const t = performance.now();
      try {
        const res = await fetch(page ? ics.replace(/\.ics$/, '') : ics, {
          headers: { 'accept-encoding': 'gzip' },
        });
        await res.arrayBuffer();
        if (res.status !== 200) out.failed++;
        else (page ? out.page : out.feed).push(performance.now() - t);
      } catch {
        out.failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
  clearInterval(tick);
  out.feed.sort((a, b) => a - b);
  out.page.sort((a, b) => a - b);
  return out;
}

/** GETs every URL once, 8 at a time. */
async function requestAll(urls: string[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < urls.length) {
      const res = await fetch(urls[next++]!, { headers: { 'accept-encoding': 'gzip' } });
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

async function storeBytes(dataDir: string, db: pg.Client | null, dbName: string | null): Promise<number> {
  if (db && dbName) {
    const r = await db.query<{ size: string }>('select pg_database_size($1) as size', [dbName]);
    return Number(r.rows[0]!.size);
  }
  let total = 0;
  for (const f of await readdir(dataDir))
    if (f.includes('.sqlite')) total += (await stat(path.join(dataDir, f))).size;
  return total;
}

/** Waits until every school has logged `msg` (with its id in `key`) after `since`, or `ms` pass; the count. */
async function waitForEachSchool(
  log: Record<string, unknown>[],
  msg: string,
  key: string,
  since: number,
  ms: number,
) {
  const until = Date.now() + ms;
  const seen = new Set<string>();
  let read = 0;
  while (Date.now() < until) {
    for (; read < log.length; read++) {
      const l = log[read]!;
      if (l.msg === msg && Date.parse(String(l.time)) >= since) seen.add(String(l[key]));
    }
    if (seen.size >= SCHOOLS) break;
    await sleep(500);
  }
  return seen.size;
}

/** The sample: FEEDS_PER_SCHOOL feeds of each school, a mix of its scopes, interleaved across schools. */
function sampleOf(feeds: { school: string; url: string }[]): string[] {
  const sample: string[] = [];
  for (let i = 0; i < SCHOOLS; i++) {
    const mine = feeds.filter((f) => f.school === schoolId(i));
    const step = Math.max(1, Math.floor(mine.length / FEEDS_PER_SCHOOL));
    sample.push(
      ...mine
        .filter((_, k) => k % step === 0)
        .slice(0, FEEDS_PER_SCHOOL)
        .map((f) => f.url),
    );
  }
  return sample.sort((a, b) => a.localeCompare(b));
}

interface StartUp {
  /** From serve's spawn to its banner, which it prints once every school's start-up pull has ended. */
  seconds: number;
  /** From serve's spawn to the last school's start-up pull's end. */
  lastPullS: number;
  pulls: number;
  fires: FireJudgement;
  /** Feeds issued, the re-render passes that stored them, and how long that took. */
  feeds: number;
  renderedSchools: number;
  renderS: number;
  load: number;
}

/**
 * 0. A fresh replica with the default schedules: its start-up pulls while the fires come (start-up goal, and the
 * fires meanwhile), then every feed issued (`feeds list`) and stored by the passes its next pulls run.
 */
async function startUpPhase(
  env: Record<string, string>,
  setRun: (r: Run | null) => void,
  watch: { upstreamPid: number; pgPids: () => number[] },
) {
  const t = Date.now();
  const run = startServe(env);
  setRun(run);
  const servePid = run.serve.proc.pid!;
  const cpu = sampleCpu(
    [
      { name: 'serve', pids: () => [servePid] },
      { name: 'upstream', pids: () => [watch.upstreamPid] },
      { name: 'PostgreSQL', pids: watch.pgPids },
      { name: 'bench', pids: () => [process.pid] },
    ],
    servePid,
  );
  await run.serve.waitFor(/Stop with Ctrl-C/, 3_600_000);
  const up = Date.now();
  const cpuReport = cpu.stop();
  const ends = run.log
    .filter((l) => l.msg === 'start-up pull finished')
    .map((l) => Date.parse(String(l.time)));
  if (STARTUP_ONLY) {
    console.log(formatCpu(cpuReport));
    printStartupBreakdown(startupBreakdown(run.log, t));
    if (process.env.BENCH_LOG)
      await writeFile(process.env.BENCH_LOG, run.log.map((l) => JSON.stringify(l)).join('\n'));
  }
  // Phase 0 only: no feed is issued (the re-render passes are the later phases' cost).
  const list = STARTUP_ONLY ? null : rostercal(['feeds', 'list', '--json'], env);
  if (list && (await list.exit) !== 0) throw new Error(list.output());
  const feeds = list ? (JSON.parse(list.stdout()) as { school: string; scope: string; url: string }[]) : [];
  const listed = Date.now();
  const renderedSchools = list
    ? await waitForEachSchool(run.log, 'feeds re-rendered', 'school', listed, RENDER_WAIT_S * 1000)
    : 0;
  const s: StartUp = {
    seconds: (up - t) / 1000,
    lastPullS: ends.length ? (Math.max(...ends) - t) / 1000 : 0,
    pulls: ends.length,
    fires: judgeFires(run.log, { from: t, to: up, graceMs: FIRE_LIMIT_S * 1000 }, INTERVAL_S),
    feeds: feeds.length,
    renderedSchools,
    renderS: (Date.now() - listed) / 1000,
    load: loadavg()[0]!,
  };
  await stopServe(run);
  setRun(null);
  return { startUp: s, sample: sampleOf(feeds) };
}

/** The pids of the store's PostgreSQL backends (its database's), refreshed every second; none on SQLite. */
async function backendsOf(admin: pg.Client | null, dbName: string | null) {
  let pids: number[] = [];
  const refresh = async () => {
    if (!admin || !dbName) return;
    const r = await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [
      dbName,
    ]);
    pids = r.rows.map((row) => row.pid);
  };
  await refresh();
  const timer = setInterval(() => void refresh().catch(() => {}), 1000);
  return { current: () => pids, stop: () => clearInterval(timer) };
}

/** What the start-up asked of PostgreSQL: its transactions and rows written, per school. */
async function printStoreWork(admin: pg.Client, dbName: string): Promise<void> {
  const r = await admin.query<Record<string, string>>(
    'select xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted from pg_stat_database where datname = $1',
    [dbName],
  );
  const row = r.rows[0];
  if (!row) return;
  const per = (k: string) => (Number(row[k]) / SCHOOLS).toFixed(0);
  console.log(
    `PostgreSQL per school (start-up pull, its fires, serve's own start): ${per('xact_commit')} transactions, ` +
      `${per('tup_inserted')} rows inserted, ${per('tup_updated')} updated, ${per('tup_deleted')} deleted`,
  );
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const upstream = spawn(process.execPath, [process.argv[1]!, '--upstreams', String(SCHOOLS)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const urls = await new Promise<string[]>((resolve, reject) => {
    createInterface({ input: upstream.stdout! }).once('line', (l) => resolve(JSON.parse(l) as string[]));
    upstream.once('exit', (code) => reject(new Error(`the upstream process exited (${code})`)));
  });
  const dir = await mkdtemp(path.join(tmpdir(), 'rostercal-fleet-'));
  const dataDir = path.join(dir, 'data');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let admin: pg.Client | null = null;
  let dbName: string | null = null;
  let databaseUrl: string | null = null;
  if (process.env.BENCH_DATABASE_URL) {
    admin = new pg.Client({ connectionString: process.env.BENCH_DATABASE_URL });
    await admin.connect();
    dbName = `rostercal_fleet_${process.pid}`;
    await admin.query(`create database ${dbName}`);
    const u = new URL(process.env.BENCH_DATABASE_URL);
    u.pathname = `/${dbName}`;
    databaseUrl = u.toString();
  }
  const configFile = path.join(dir, 'config.json');
  const writeConfig = (schedules: { incremental?: string; full?: string } | null) =>
    writeFile(
      configFile,
      JSON.stringify({
        dataDir,
        publicUrl: base,
        port,
        schools: urls.map((url, i) => ({
          id: schoolId(i),
          name: `School ${i + 1}`,
          upstream: { url, token: 'env:FLEET_TOKEN' },
          timeZone: SCHOOL_TIME_ZONE,
          ...(schedules ? { schedules } : {}),
        })),
      }),
    );
  const env: Record<string, string> = {
    ROSTERCAL_CONFIG: configFile,
    FLEET_TOKEN: TOKEN,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  let run: Run | null = null;
  const cleanUp = async () => {
    if (run) await stopServe(run);
    upstream.kill('SIGTERM');
    if (admin) {
      await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => {});
      await admin.end();
    }
    await rm(dir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void cleanUp().then(() => process.exit(130)));
  const resetStats = () =>
    Promise.all(
      urls.map((u) => fetch(`${u}/_sandbox/stats/reset`, { method: 'POST' }).then((r) => r.text())),
    );
  const upstreamRequests = () =>
    Promise.all(
      urls.map(async (u) => ((await (await fetch(`${u}/_sandbox/stats`)).json()) as { total: number }).total),
    );
  const schedules = INCREMENTAL ? { incremental: INCREMENTAL } : null;

  try {
    console.log(
      `${SCHOOLS} schools at small scale, ${databaseUrl ? 'PostgreSQL' : 'SQLite'}; upstream answers after ${process.env.BENCH_UPSTREAM_LATENCY_MS ?? 0} ms; upstream process up in ${((Date.now() - t0) / 1000).toFixed(1)} s; load average ${loadavg()[0]!.toFixed(1)}`,
    );
    // 0. A fresh replica, the default schedules.
    await writeConfig(schedules);
    const pgPids = await backendsOf(admin, dbName);
    const { startUp, sample } = await startUpPhase(
      env,
      (r) => {
        run = r;
      },
      { upstreamPid: upstream.pid!, pgPids: pgPids.current },
    );
    pgPids.stop();
    printStartUp(startUp, sample.length);
    if (STARTUP_ONLY) {
      printFires('start-up', startUp.fires);
      if (admin) await printStoreWork(admin, dbName!);
      return;
    }

    // 1. Idle: no fire in the run (a restart: the start-up pulls of any school whose last pull the stop cut).
    await writeConfig({ incremental: NEVER, full: NEVER });
    run = startServe(env);
    await run.serve.waitFor(/Stop with Ctrl-C/, 3_600_000);
    let pid = run.serve.proc.pid!;
    // The sample's first requests (a replica's memory holds no render yet): not measured, in both phases alike.
    await requestAll(sample.flatMap((u) => [u, u.replace(/\.ics$/, '')]));
    let cpu = cpuSecondsOf(pid);
    let t = Date.now();
    const idle = await steadyLoad(sample, IDLE_SECONDS * 1000);
    const idleCpuPerS = (cpuSecondsOf(pid) - cpu) / ((Date.now() - t) / 1000);
    const idleRss = rssOf(pid);
    const idleLoad = loadavg()[0]!;
    await stopServe(run);

    // 2. The default schedules (no start-up pull: every school was pulled completely).
    await writeConfig(schedules);
    run = startServe(env);
    await run.serve.waitFor(/Stop with Ctrl-C/, 600_000);
    pid = run.serve.proc.pid!;
    await requestAll(sample.flatMap((u) => [u, u.replace(/\.ics$/, '')]));
    const rssAtStart = rssOf(pid).rss;
    await resetStats();
    const from = Date.now();
    cpu = cpuSecondsOf(pid);
    let rssMax = 0;
    const busy = await steadyLoad(sample, MINUTES * 60_000, () => {
      rssMax = Math.max(rssMax, rssOf(pid).rss);
    });
    t = Date.now();
    const seconds = (t - from) / 1000;
    const busyCpu = cpuSecondsOf(pid) - cpu;
    const requests = await upstreamRequests();
    const rssEnd = rssOf(pid);
    const bytes = await storeBytes(dataDir, admin, dbName);
    await stopServe(run);
    const log = run.log;
    run = null;

    report({
      startUp,
      fires: judgeFires(log, { from, to: t, graceMs: FIRE_LIMIT_S * 1000 }, INTERVAL_S),
      seconds,
      idle,
      busy,
      busyCpu,
      idleCpuPerS,
      requests,
      rss: { idle: idleRss.rss, atStart: rssAtStart, max: Math.max(rssMax, rssEnd.rss), peak: rssEnd.peak },
      bytes,
      postgres: databaseUrl !== null,
      idleLoad,
    });
    if (process.env.BENCH_LOG)
      await writeFile(process.env.BENCH_LOG, log.map((l) => JSON.stringify(l)).join('\n'));
  } finally {
    await cleanUp();
  }
}

interface Figures {
  startUp: StartUp;
  fires: FireJudgement;
  seconds: number;
  idle: Latencies;
  busy: Latencies;
  busyCpu: number;
  idleCpuPerS: number;
  requests: number[];
  rss: { idle: number; atStart: number; max: number; peak: number };
  bytes: number;
  postgres: boolean;
  /** The machine's 1-minute load average at the end of the idle phase. */
  idleLoad: number;
}

/** A goal's line: its figure, and met, NOT met, or why it could not be judged. */
function goal(name: string, figure: string, ok: boolean | string): void {
  const verdict = typeof ok === 'string' ? `could not judge: ${ok}` : ok ? 'met' : 'NOT met';
  console.log(`  ${name.padEnd(58)} ${figure.padEnd(56)} ${verdict}`);
}

const ids = () => Array.from({ length: SCHOOLS }, (_, i) => schoolId(i));

function printFires(title: string, j: FireJudgement): FireVerdict {
  const v = fireVerdict(j, ids(), FIRE_LIMIT_S);
  const judgedS = Math.max(0, (j.judgedUntil - j.from) / 1000);
  console.log(
    `${title}: fires judged: those of the first ${judgedS.toFixed(0)} s (each had ${FIRE_LIMIT_S} s to start); ` +
      `${v.pulls} pulls of ~${Math.floor(judgedS / INTERVAL_S) * SCHOOLS} fires, ${v.missed} let pass (a miss), ` +
      `${v.folded} folded into a start-up pull, ${v.paced} paced by a 429; lag p50 ${v.p50.toFixed(1)} s, ` +
      `p99 ${v.p99.toFixed(1)} s, worst ${v.worst.toFixed(1)} s (${v.worstSchool || '-'}); ` +
      `pulls began at ${j.phases} distinct seconds of the ${INTERVAL_S} s interval` +
      (v.silent.length ? `; ${v.silent.length} schools neither pulled nor let a fire pass` : ''),
  );
  printSkips(j);
  return v;
}

const noFires = (v: FireVerdict) => (v.judgeable ? null : 'no fire in the judged window (run longer)');

function printStartUp(s: StartUp, sampled: number): void {
  console.log(
    `start-up (fresh replica, default schedules): banner after ${s.seconds.toFixed(0)} s, last start-up pull ended at ${s.lastPullS.toFixed(0)} s ` +
      `(${s.pulls} pulls, ${((s.lastPullS / Math.max(1, s.pulls)) * 1000).toFixed(0)} ms a school); load average ${s.load.toFixed(1)}`,
  );
  if (STARTUP_ONLY) return;
  console.log(
    `${s.feeds} feeds issued (\`feeds list\`); the next pulls' re-render passes stored them for ${s.renderedSchools} of ${SCHOOLS} schools in ${s.renderS.toFixed(0)} s; ` +
      `measured: a fair sample of ${sampled} feeds (${FEEDS_PER_SCHOOL} a school), each as .ics and as its page, ${RPS}/s; the others are not requested`,
  );
}

function latencyGoals(f: Figures): void {
  const p99 = (xs: number[]) => quantile(xs, 0.99);
  for (const kind of ['feed', 'page'] as const) {
    const r = p99(f.busy[kind]) / Math.max(0.001, p99(f.idle[kind]));
    goal(
      `${kind} p99 busy ≤ 2× idle`,
      `${p99(f.idle[kind]).toFixed(1)} → ${p99(f.busy[kind]).toFixed(1)} ms (${r.toFixed(2)}×)`,
      f.busy[kind].length && f.idle[kind].length ? r <= 2 : 'no answered request',
    );
  }
  const slowest = (l: Latencies) => Math.max(l.feed.at(-1) ?? 0, l.page.at(-1) ?? 0);
  const r = slowest(f.busy) / Math.max(0.001, slowest(f.idle));
  goal(
    'slowest busy request ≤ 2× the idle slowest',
    `${slowest(f.idle).toFixed(0)} → ${slowest(f.busy).toFixed(0)} ms (${r.toFixed(2)}×)`,
    r <= 2,
  );
}

function report(f: Figures): void {
  const perHour = 3600 / f.seconds;
  console.log(
    `\nfleet: ${SCHOOLS} schools, ${(f.seconds / 60).toFixed(1)} min, incremental ${INCREMENTAL ?? '*/10 * * * * * (the default)'}`,
  );
  console.log(
    `${'school'.padEnd(11)}${'pulls'.padStart(6)}${'passed'.padStart(7)}${'lag p50'.padStart(9)}${'lag max'.padStart(9)}${'upstream/h'.padStart(12)}`,
  );
  const s1 = (v: number | undefined) => (v === undefined ? '-' : `${v.toFixed(1)}s`);
  for (const [i, id] of ids().entries()) {
    const l = f.fires.lags.get(id) ?? [];
    console.log(
      `${id.padEnd(11)}${String(l.length).padStart(6)}${String(f.fires.passed.get(id) ?? 0).padStart(7)}${s1(l.length ? quantile(l, 0.5) : undefined).padStart(9)}${s1(l.at(-1)).padStart(9)}${(f.requests[i]! * perHour).toFixed(0).padStart(12)}`,
    );
  }
  const sv = printFires('start-up', f.startUp.fires);
  const bv = printFires('busy', f.fires);
  console.log(
    `feeds rendered by the busy phase's pulls: ${f.fires.rendered}, in ${f.fires.passes} re-render passes`,
  );

  console.log();
  printIdleBusyTable(f.idle, f.busy);
  console.log(`requests failed: idle ${f.idle.failed}, busy ${f.busy.failed}`);

  const cpuPerSchoolHour = (f.busyCpu * perHour) / SCHOOLS;
  const netPerSchoolHour = ((f.busyCpu - f.idleCpuPerS * f.seconds) * perHour) / SCHOOLS;
  const totalRequests = f.requests.reduce((a, b) => a + b, 0);
  const worstMinute = Math.max(...f.requests) / (f.seconds / 60);
  console.log(
    `\nserve CPU: ${f.busyCpu.toFixed(1)} s in ${f.seconds.toFixed(0)} s (${((f.busyCpu / f.seconds) * 100).toFixed(0)}% of one core; idle phase ${(f.idleCpuPerS * 100).toFixed(0)}%); ` +
      `${(((f.busyCpu - f.idleCpuPerS * f.seconds) / Math.max(1, f.fires.started)) * 1000).toFixed(1)} ms net per incremental pull (${f.fires.started} pulls)`,
  );
  console.log(
    `serve RSS: ${f.rss.idle.toFixed(0)} MB idle (no fires), ${f.rss.atStart.toFixed(0)} MB at the schedule's start, max ${f.rss.max.toFixed(0)} MB while it ran (peak ${f.rss.peak.toFixed(0)} MB)`,
  );
  console.log(
    `store (${f.postgres ? 'PostgreSQL database' : 'SQLite files'}): ${(f.bytes / 1e6).toFixed(1)} MB, ${(f.bytes / 1e6 / SCHOOLS).toFixed(2)} MB per school; ` +
      `upstream ${((totalRequests * perHour) / SCHOOLS).toFixed(0)} requests per school per hour`,
  );

  console.log(`\nissue #46, five hundred schools on one replica (${SCHOOLS} schools here):`);
  goal(
    'a fresh replica serves every school ≤ 120 s from its start',
    `${f.startUp.seconds.toFixed(0)} s (last start-up pull ${f.startUp.lastPullS.toFixed(0)} s)`,
    f.startUp.seconds <= 120,
  );
  for (const [phase, v] of [
    ['start-up', sv],
    ['busy', bv],
  ] as const) {
    goal(
      `${phase}: every fire's pull starts ≤ ${FIRE_LIMIT_S} s after its time`,
      `worst ${v.worst.toFixed(1)} s, ${v.late} of ${v.pulls} late`,
      noFires(v) ?? (v.late === 0 && v.silent.length === 0),
    );
    goal(
      `${phase}: no fire let pass (folded and 429-paced apart)`,
      `${v.missed} let pass; ${v.folded} folded, ${v.paced} paced`,
      noFires(v) ?? v.missed === 0,
    );
  }
  latencyGoals(f);
  goal(
    'each school ≤ 8 upstream requests a minute (idle budget)',
    `busiest ${worstMinute.toFixed(1)}/min, mean ${(totalRequests / SCHOOLS / (f.seconds / 60)).toFixed(1)}/min`,
    worstMinute <= 8,
  );
  console.log(
    `  CPU: ${cpuPerSchoolHour.toFixed(1)} CPU s per school per hour (${netPerSchoolHour.toFixed(1)} net of the feed requests' own, the idle rate); ` +
      `memory: ${(f.rss.max / SCHOOLS).toFixed(2)} MB per school (max RSS ÷ ${SCHOOLS}: an upper bound; it does not grow by the hour)`,
  );
  console.log(
    `  load average (1 min): at the start-up's banner ${f.startUp.load.toFixed(1)}, at the end of the idle phase ${f.idleLoad.toFixed(1)}, at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} (${cpus().length} cores)`,
  );
}

if (process.argv[2] === '--upstreams') await upstreams(Number(process.argv[3]));
else await main();
