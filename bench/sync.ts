// npm run bench:sync — the pull at `school` scale: a first full sync into SQLite and into PostgreSQL, and an
// unchanged incremental run after each, against the baseline of paging the very same endpoints (same listings,
// same parameters, same single-team reads, same client and pacing) and throwing the data away, in the same run.
//
// The sandbox runs in its own child process (its CPU would otherwise sit on the event loop under test), and
// every measured phase runs in a fresh child process of its own, so each phase's peak memory (maxRSS) is its
// own and no phase inherits another's warm heap or caches.
//
// Goals (issue 3): full sync ≤ 1.5× the baseline; peak memory ≤ 250 MB; unchanged incremental < 1 s.
// Options (environment): BENCH_SCALE (default school), BENCH_PG_ADMIN_URL (default the local test server),
// BENCH_NODE_FLAGS (default --max-semi-space-size=16; empty for V8's defaults).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { parseSchool } from '../src/config.ts';
import type { Team } from '../src/domain/types.ts';
import { openStore } from '../src/store/index.ts';
import { mapLimit } from '../src/sync/concurrency.ts';
import { pullSchool } from '../src/sync/pull.ts';
import { RESOURCES } from '../src/sync/resources.ts';
import { syncWindow } from '../src/sync/window.ts';
import { createUpstreamClient } from '../src/upstream/client.ts';

const NOW = '2026-03-02T00:00:00.000Z';
const SEED = 7;
const RATE = { requestsPerSecond: 1000, concurrency: 4 };
// V8's young generation grows to tens of MB per semi-space by default: with pages of 1,000 sessions that slack,
// not live data, is what pushes RSS past 250 MB (the live heap stays near 100 MB). rostercal is meant to run with
// NODE_OPTIONS=--max-semi-space-size=16; every phase, baseline included, runs with the same flags.
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '--max-semi-space-size=16').split(' ').filter(Boolean);

interface PhaseResult {
  ms: number;
  maxRssMb: number;
  /** Peak of the JavaScript heap in use, sampled every 20 ms: the live data, where RSS also counts V8's slack. */
  peakHeapMb: number;
  requests: number;
  records: number;
  status?: string;
}

const [, , mode, ...args] = process.argv;
if (mode === '--serve-sandbox') await serveSandbox(args[0] ?? 'school');
else if (mode === '--phase') await phase(args[0]!, JSON.parse(args[1]!) as PhaseArgs);
else await main();

async function serveSandbox(scale: string): Promise<void> {
  const { startSandbox } = await import('../src/sandbox/index.ts');
  const sb = await startSandbox({ port: 0, seed: SEED, scale: scale as 'school', now: NOW });
  process.stdout.write(`${JSON.stringify({ url: sb.url, token: sb.token })}\n`);
  process.stdin.resume();
  await once(process.stdin, 'end');
  await sb.close();
}

interface PhaseArgs {
  url: string;
  token: string;
  databaseUrl?: string;
  dataDir?: string;
}

function school(a: PhaseArgs) {
  return parseSchool({
    id: 'bench',
    name: 'Bench School',
    upstream: { url: a.url, token: a.token, rateLimit: RATE },
    timeZone: 'Australia/Sydney',
  });
}

/** One measured phase, alone in this process: prints its result as JSON. */
async function phase(name: string, a: PhaseArgs): Promise<void> {
  const client = createUpstreamClient({ baseUrl: a.url, token: a.token, rateLimit: RATE });
  const now = () => new Date(NOW);
  let peakHeap = 0;
  const sampler = setInterval(() => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  }, 20);
  let result: PhaseResult;
  if (name === 'baseline') {
    const cfg = school(a);
    const window = syncWindow(now(), cfg.syncWindow);
    const t0 = performance.now();
    let records = 0;
    for (const spec of RESOURCES) {
      for (const listing of spec.listings) {
        for await (const page of listing.pages({ client, window })) {
          records += page.records.length;
          // The pull reads every listed team singly (medical and guardian data): so does the baseline.
          if (spec.kind === 'teams') {
            const teams = page.records as Team[];
            await mapLimit(teams, cfg.pull.teamConcurrency, (t) => client.team(t.id));
          }
        }
      }
    }
    const ms = performance.now() - t0;
    result = { ms, maxRssMb: 0, peakHeapMb: 0, requests: client.totals().requests, records };
  } else {
    const store = await openStore(a.databaseUrl ? { databaseUrl: a.databaseUrl } : { dataDir: a.dataDir! });
    const t0 = performance.now();
    const summary = await pullSchool({
      store,
      client,
      school: school(a),
      kind: name.startsWith('full') ? 'full' : 'incremental',
      now,
    });
    const ms = performance.now() - t0;
    await store.close();
    const records = Object.values(summary.counts).reduce((n, c) => n + c.added + c.changed + c.unchanged, 0);
    result = {
      ms,
      maxRssMb: 0,
      peakHeapMb: 0,
      requests: summary.upstream.requests,
      records,
      status: summary.status,
    };
    if (summary.status !== 'succeeded')
      throw new Error(`${name}: ${summary.status}: ${summary.errors.join('; ')}`);
  }
  clearInterval(sampler);
  result.maxRssMb = process.resourceUsage().maxRSS / 1024;
  result.peakHeapMb = peakHeap / 1024 / 1024;
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function runPhase(name: string, a: PhaseArgs): Promise<PhaseResult> {
  const child = spawn(
    process.execPath,
    [...NODE_FLAGS, import.meta.filename, '--phase', name, JSON.stringify(a)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`phase ${name} exited ${code}`);
  return JSON.parse(out.trim().split('\n').at(-1)!) as PhaseResult;
}

async function startSandboxChild(
  scale: string,
): Promise<{ child: ChildProcess; url: string; token: string }> {
  const child = spawn(process.execPath, [import.meta.filename, '--serve-sandbox', scale], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const [first] = (await once(lines, 'line')) as [string];
  const { url, token } = JSON.parse(first) as { url: string; token: string };
  return { child, url, token };
}

async function main(): Promise<void> {
  const scale = process.env.BENCH_SCALE ?? 'school';
  const adminUrl = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const { child, url, token } = await startSandboxChild(scale);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'rostercal-bench-sync-'));
  const dbName = `rostercal_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/${dbName}`;
  try {
    console.log(`sandbox: scale ${scale}, seed ${SEED}, now ${NOW}, child process ${child.pid}`);
    console.log(`phases: one child process each, node ${NODE_FLAGS.join(' ') || '(no flags)'}`);
    const base = { url, token };
    // A warm-up read so the sandbox's first-request costs (JIT, list caches) land on neither side.
    await runPhase('baseline', base);
    const rows: [string, PhaseResult][] = [];
    rows.push(['baseline: page the same endpoints, discard', await runPhase('baseline', base)]);
    rows.push(['full sync → SQLite', await runPhase('full', { ...base, dataDir })]);
    rows.push(['unchanged incremental → SQLite', await runPhase('incremental', { ...base, dataDir })]);
    rows.push(['full sync → PostgreSQL', await runPhase('full', { ...base, databaseUrl: dbUrl.toString() })]);
    rows.push([
      'unchanged incremental → PostgreSQL',
      await runPhase('incremental', { ...base, databaseUrl: dbUrl.toString() }),
    ]);

    const baseline = rows[0]![1];
    const w = Math.max(...rows.map(([n]) => n.length));
    console.log(
      `\n${'phase'.padEnd(w)}  ${'wall'.padStart(9)}  ${'× base'.padStart(7)}  ${'peak RSS'.padStart(9)}  ${'peak heap'.padStart(9)}  ${'requests'.padStart(8)}  records`,
    );
    for (const [name, r] of rows) {
      const ratio = name.startsWith('full') ? `${(r.ms / baseline.ms).toFixed(2)}×` : '';
      console.log(
        `${name.padEnd(w)}  ${`${(r.ms / 1000).toFixed(2)} s`.padStart(9)}  ${ratio.padStart(7)}  ${`${r.maxRssMb.toFixed(0)} MB`.padStart(9)}  ${`${r.peakHeapMb.toFixed(0)} MB`.padStart(9)}  ${String(r.requests).padStart(8)}  ${r.records}`,
      );
    }
    const fulls = rows.filter(([n]) => n.startsWith('full'));
    const incs = rows.filter(([n]) => n.startsWith('unchanged'));
    const peak = Math.max(...rows.slice(1).map(([, r]) => r.maxRssMb));
    console.log('\ngoals:');
    for (const [n, r] of fulls) {
      const ratio = r.ms / baseline.ms;
      console.log(`  ${n}: ${ratio.toFixed(2)}× baseline (goal ≤ 1.5×) ${ratio <= 1.5 ? 'met' : 'NOT met'}`);
    }
    console.log(`  peak memory: ${peak.toFixed(0)} MB (goal ≤ 250 MB) ${peak <= 250 ? 'met' : 'NOT met'}`);
    for (const [n, r] of incs) {
      console.log(`  ${n}: ${(r.ms / 1000).toFixed(2)} s (goal < 1 s) ${r.ms < 1000 ? 'met' : 'NOT met'}`);
    }
  } finally {
    child.stdin!.end();
    await once(child, 'exit');
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
    await rm(dataDir, { recursive: true, force: true });
  }
}
