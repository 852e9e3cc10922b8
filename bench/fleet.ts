// npm run bench:fleet — fifty schools on one replica (issue 28). One `rostercal serve` child process with
// BENCH_SCHOOLS (50) schools, each its own sandbox school at small scale (60 students, 5 teams, 174 sessions),
// all served by one upstream process of their own (one emulator serving every school, each on its own port, so
// each school's requests are counted apart and the upstream's CPU is not serve's).
//
// 1. serve with schedules that never fire in the run: its start-up pulls every school (timed; goal ≤ 120 s), then feeds and
//    their pages are requested at BENCH_RPS (20/s, by 4 clients each paced to its share, one request at a time)
//    for BENCH_IDLE_SECONDS (60): the idle latency and CPU.
// 2. serve again on the same store with the DEFAULT schedules (incremental `*/10 * * * * *`, full `0 */6 * * *`;
//    BENCH_INCREMENTAL overrides the incremental one) for BENCH_MINUTES (5), the same requests at the same rate:
//    - for every school, the lag from each incremental fire (its fire time, from serve's log) to its pull's
//      start ('pull started'), and fires let pass; goal: worst lag ≤ 60 s, where a fire let pass is a pull that
//      never started, so a miss like a late one (printed with why it was let pass);
//    - feed and page latency p50/p99/max busy against idle; goals: busy p99 ≤ 2× idle p99, busy max ≤ 2× idle max;
//    - serve's CPU seconds and each school's upstream requests, per school per hour (the CPU also net of the
//      idle phase's rate, which is the feed requests' own); serve's RSS, per school; the store's size per school.
// BENCH_DATABASE_URL=postgres://…/db: the store in PostgreSQL (a database of its own is created on that server
// and dropped at the end) instead of SQLite. BENCH_LOG=file keeps serve's log of phase 2. Not run in CI.
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
import { printIdleBusyTable } from './support/latency-table.ts';
import { cpuSecondsOf, quantile, rssOf } from './support/proc.ts';

const SCHOOLS = Number(process.env.BENCH_SCHOOLS ?? 50);
const MINUTES = Number(process.env.BENCH_MINUTES ?? 5);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const RPS = Number(process.env.BENCH_RPS ?? 20);
/** Clients requesting at once (bench:feeds uses 4). */
const WORKERS = 4;
const INCREMENTAL = process.env.BENCH_INCREMENTAL;
// The incremental fires' interval in seconds (a schedule of every N seconds; the default's 10).
const INTERVAL_S = Number(/^\*\/(\d+) /.exec(INCREMENTAL ?? '*/10 * * * * *')?.[1] ?? 60);
/** Feeds requested per school (a mix of its scopes), each as .ics and as its landing page. */
const FEEDS_PER_SCHOOL = 6;
/** A schedule that never fires during the run (1 January, midnight). */
const NEVER = '0 0 0 1 1 *';
const TOKEN = 'sandbox-token';

// --- the upstream process: SCHOOLS sandboxes, one line of JSON with their URLs, then serves until SIGTERM. ---
async function upstreams(n: number): Promise<void> {
  const all: Sandbox[] = [];
  for (let i = 0; i < n; i++) all.push(await startSandbox({ seed: 1000 + i, scale: 'small', token: TOKEN }));
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

  try {
    console.log(
      `${SCHOOLS} schools at small scale, ${databaseUrl ? 'PostgreSQL' : 'SQLite'}; upstream process up in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );
    // 1. Start-up pulls of every school, then idle.
    await writeConfig({ incremental: NEVER, full: NEVER });
    let t = Date.now();
    run = startServe(env);
    await run.serve.waitFor(/Stop with Ctrl-C/, 3_600_000);
    const startUpS = (Date.now() - t) / 1000;
    console.log(
      `serve up with every school's first full pull (in parallel across upstreams) in ${startUpS.toFixed(0)} s (${((startUpS / SCHOOLS) * 1000).toFixed(0)} ms a school); ` +
        `goal ≤ 120 s: ${startUpS <= 120 ? 'met' : 'NOT met'}; load average ${loadavg()[0]!.toFixed(1)}`,
    );
    const list = rostercal(['feeds', 'list', '--json'], env);
    if ((await list.exit) !== 0) throw new Error(list.output());
    const feeds = JSON.parse(list.stdout()) as { school: string; scope: string; url: string }[];
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
    // Interleaved across schools, so every second touches many of them.
    sample.sort((a, b) => a.localeCompare(b));
    console.log(`${feeds.length} feeds in all; ${sample.length} requested (.ics and page), ${RPS}/s`);
    // Every feed once, so that each has its stored render at the store's data version (a feed is rendered on its
    // first request): a pull that changes nothing then renders nothing, as in a service that has been running.
    // Without this the schedule's first round would render every feed whose URL `feeds list` just issued.
    t = Date.now();
    await requestAll(feeds.map((f) => f.url));
    console.log(`every feed requested once (rendered and stored): ${((Date.now() - t) / 1000).toFixed(0)} s`);
    let pid = run.serve.proc.pid!;
    let cpu = cpuSecondsOf(pid);
    t = Date.now();
    const idle = await steadyLoad(sample, IDLE_SECONDS * 1000);
    const idleCpuPerS = (cpuSecondsOf(pid) - cpu) / ((Date.now() - t) / 1000);
    const idleRss = rssOf(pid);
    const idleLoad = loadavg()[0]!;
    await stopServe(run);

    // 2. The default schedules (no startup pull: every school was pulled completely).
    await writeConfig(INCREMENTAL ? { incremental: INCREMENTAL } : null);
    run = startServe(env);
    await run.serve.waitFor(/Stop with Ctrl-C/, 600_000);
    pid = run.serve.proc.pid!;
    await steadyLoad(sample, 5_000); // the same warm-up
    const rssAtStart = rssOf(pid).rss;
    await resetStats();
    const from = Date.now();
    cpu = cpuSecondsOf(pid);
    let rssMax = 0;
    const busy = await steadyLoad(sample, MINUTES * 60_000, () => {
      rssMax = Math.max(rssMax, rssOf(pid).rss);
    });
    const seconds = (Date.now() - from) / 1000;
    const busyCpu = cpuSecondsOf(pid) - cpu;
    const requests = await upstreamRequests();
    const rssEnd = rssOf(pid);
    // Fires near the end may not have started yet: only those at least a minute before it are judged.
    const judgedUntil = Date.now() - 60_000;
    const bytes = await storeBytes(dataDir, admin, dbName);
    await stopServe(run);
    const log = run.log;
    run = null;

    report({
      log,
      from,
      judgedUntil,
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
  log: Record<string, unknown>[];
  from: number;
  judgedUntil: number;
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

const met = (ok: boolean) => (ok ? 'met' : 'NOT met');

function report(f: Figures): void {
  const perHour = 3600 / f.seconds;
  // Each school's incremental fires in the window: the pull each started, or why it was let pass (an overlap's
  // skip names no fire time: those are counted by the time they were said).
  const lags = new Map<string, number[]>();
  const passed = new Map<string, number>();
  const why = new Map<string, number>();
  const fired = new Set<number>();
  let rendered = 0;
  let passes = 0;
  /** Every incremental pull of the run, judged or not: what serve's CPU was spent on. */
  let started = 0;
  for (const line of f.log) {
    const at = Date.parse(String(line.time));
    if (line.msg === 'feeds re-rendered' && at >= f.from) {
      rendered += Number(line.rendered ?? 0);
      passes++;
    }
    if (line.job !== 'incremental') continue;
    const school = String(line.schoolId);
    const fireTime = typeof line.fireTime === 'string' ? Date.parse(line.fireTime) : null;
    if (line.msg === 'pull started' && fireTime !== null && fireTime >= f.from) started++;
    if (line.msg === 'pull started' && fireTime !== null && fireTime >= f.from && fireTime <= f.judgedUntil) {
      lags.set(school, [...(lags.get(school) ?? []), (at - fireTime) / 1000]);
      fired.add(fireTime % (INTERVAL_S * 1000));
    } else if (String(line.msg).startsWith('fire skipped') && at >= f.from && at <= f.judgedUntil) {
      passed.set(school, (passed.get(school) ?? 0) + 1);
      // The reason without its instants (a deferral names the next pull's).
      const reason = String(line.msg)
        .slice('fire skipped: '.length)
        .replace(/ — next pull at .*$/, '');
      why.set(reason, (why.get(reason) ?? 0) + 1);
    }
  }
  const ids = Array.from({ length: SCHOOLS }, (_, i) => schoolId(i));
  const judgedS = (f.judgedUntil - f.from) / 1000;
  console.log(
    `\nfleet: ${SCHOOLS} schools, ${(f.seconds / 60).toFixed(1)} min, incremental ${INCREMENTAL ?? '*/10 * * * * * (the default)'}; ` +
      `fires judged: those of the first ${judgedS.toFixed(0)} s (each had a minute to start); ` +
      `pulls began at ${fired.size} distinct seconds of the ${INTERVAL_S} s interval (1: every school in one burst)`,
  );
  console.log(
    `${'school'.padEnd(11)}${'pulls'.padStart(6)}${'passed'.padStart(7)}${'lag p50'.padStart(9)}${'lag max'.padStart(9)}${'upstream/h'.padStart(12)}`,
  );
  let worst = 0;
  let worstSchool = '';
  let pulls = 0;
  const none: string[] = [];
  const s1 = (v: number | undefined) => (v === undefined ? '-' : `${v.toFixed(1)}s`);
  for (const [i, id] of ids.entries()) {
    const l = (lags.get(id) ?? []).sort((a, b) => a - b);
    pulls += l.length;
    if (!l.length) none.push(id);
    if ((l.at(-1) ?? 0) > worst) {
      worst = l.at(-1)!;
      worstSchool = id;
    }
    console.log(
      `${id.padEnd(11)}${String(l.length).padStart(6)}${String(passed.get(id) ?? 0).padStart(7)}${s1(l.length ? quantile(l, 0.5) : undefined).padStart(9)}${s1(l.at(-1)).padStart(9)}${(f.requests[i]! * perHour).toFixed(0).padStart(12)}`,
    );
  }
  const all = [...lags.values()].flat().sort((a, b) => a - b);
  const skipped = [...passed.values()].reduce((a, b) => a + b, 0);
  const late = all.filter((l) => l > 60).length;
  console.log(
    `fire → pull start: ${pulls} pulls of ${Math.floor(judgedS / INTERVAL_S) * SCHOOLS} or so fires, ${skipped} fires let pass; lag p50 ${quantile(all, 0.5).toFixed(1)} s, p99 ${quantile(all, 0.99).toFixed(1)} s, ` +
      `worst ${worst.toFixed(1)} s (${worstSchool || '-'})${none.length ? `; ${none.length} schools started no pull at all` : ''}; ` +
      `missed (started over 60 s late, or let pass: never started): ${late + skipped}; ` +
      `goal worst ≤ 60 s, none missed: ${met(late + skipped === 0 && none.length === 0)}; feeds rendered by the pulls: ${rendered}, in ${passes} re-render passes`,
  );
  for (const [reason, n] of [...why.entries()].sort((a, b) => b[1] - a[1]))
    console.log(`  let pass ${String(n).padStart(5)}× ${reason}`);

  console.log();
  const { ratioOk, maxOk } = printIdleBusyTable(f.idle, f.busy);
  console.log(
    `requests failed: idle ${f.idle.failed}, busy ${f.busy.failed}; goals: busy p99 ≤ 2× idle: ${met(ratioOk)}; slowest busy request ≤ 2× the slowest idle one: ${met(maxOk)}`,
  );

  const cpuPerSchoolHour = (f.busyCpu * perHour) / SCHOOLS;
  const netPerSchoolHour = ((f.busyCpu - f.idleCpuPerS * f.seconds) * perHour) / SCHOOLS;
  const totalRequests = f.requests.reduce((a, b) => a + b, 0);
  const perSchoolMinute = totalRequests / SCHOOLS / (f.seconds / 60);
  const worstMinute = Math.max(...f.requests) / (f.seconds / 60);
  console.log(
    `\nserve CPU: ${f.busyCpu.toFixed(1)} s in ${f.seconds.toFixed(0)} s (${((f.busyCpu / f.seconds) * 100).toFixed(0)}% of one core; idle phase ${(f.idleCpuPerS * 100).toFixed(0)}%): ` +
      `${cpuPerSchoolHour.toFixed(1)} CPU s per school per hour, ${netPerSchoolHour.toFixed(1)} net of the feed requests' own (idle rate); ` +
      `${(((f.busyCpu - f.idleCpuPerS * f.seconds) / Math.max(1, started)) * 1000).toFixed(1)} ms net per incremental pull (${started} pulls)`,
  );
  console.log(
    `upstream: ${((totalRequests * perHour) / SCHOOLS).toFixed(0)} requests per school per hour (${perSchoolMinute.toFixed(1)}/min; busiest school ${worstMinute.toFixed(1)}/min); ` +
      `goal ≤ 8/min per school when nothing changes: ${met(worstMinute <= 8)}`,
  );
  console.log(
    `serve RSS: ${f.rss.idle.toFixed(0)} MB idle (no fires), ${f.rss.atStart.toFixed(0)} MB at the schedule's start, max ${f.rss.max.toFixed(0)} MB while it ran (peak ${f.rss.peak.toFixed(0)} MB): ` +
      `${(f.rss.max / SCHOOLS).toFixed(1)} MB per school (all of it divided by ${SCHOOLS}: an upper bound)`,
  );
  console.log(
    `store (${f.postgres ? 'PostgreSQL database' : 'SQLite files'}): ${(f.bytes / 1e6).toFixed(1)} MB, ${(f.bytes / 1e6 / SCHOOLS).toFixed(2)} MB per school`,
  );
  console.log(
    `load average (1 min) at the end of the idle phase ${f.idleLoad.toFixed(1)}; at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} (${cpus().length} cores)`,
  );
}

if (process.argv[2] === '--upstreams') await upstreams(Number(process.argv[3]));
else await main();
