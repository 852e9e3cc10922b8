// npm run bench:first-pulls — what a fresh replica's first pull of each school costs in CPU (issue 46: 500
// schools served within 2 minutes of a start). One `serve` (startService, in this process, no start-up pulls) with
// BENCH_SCHOOLS (40) small sandbox schools, each its own port in an upstream process of its own (bench/fleet.ts
// --upstreams, so the upstream's CPU is not counted); each school's first full pull run by the scheduler as the
// start-up runs it (runNow 'full': lease, run record, re-render, after-pull steps), one after another, and this
// process's CPU time (user + system, all threads) read around each. Then each school's second full pull (unchanged)
// likewise. Prints the 1st, 2nd, 10th, 100th first pull, the median over the first pulls after the tenth (the
// code warm) and over the unchanged ones, with the load average: CPU time, since the machine is shared.
// BENCH_DATABASE_URL=postgres://…/db: the store in a database of its own on that server (dropped at the end),
// else SQLite in a temporary directory. BENCH_PROFILE=file.cpuprofile: a V8 CPU profile of the main thread over
// the first pulls after the tenth. Not run in CI.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/running-service.ts';
import { SCHOOL_TIME_ZONE } from '../src/sandbox/index.ts';

const SCHOOLS = Number(process.env.BENCH_SCHOOLS ?? 40);
const PROFILE = process.env.BENCH_PROFILE;
/** The first pulls a profile leaves out: the code's first runs (JIT, module loading). */
const WARM_AFTER = 10;

const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : 0;
};

async function main(): Promise<void> {
  const upstream = spawn(
    process.execPath,
    [path.join(import.meta.dirname, 'fleet.ts'), '--upstreams', String(SCHOOLS)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const urls = await new Promise<string[]>((resolve, reject) => {
    createInterface({ input: upstream.stdout! }).once('line', (l) => resolve(JSON.parse(l) as string[]));
    upstream.once('exit', (code) => reject(new Error(`the upstream process exited (${code})`)));
  });
  const dir = await mkdtemp(path.join(tmpdir(), 'rostercal-first-pulls-'));
  let admin: pg.Client | null = null;
  const dbName = `rostercal_first_pulls_${process.pid}`;
  const env: NodeJS.ProcessEnv = {
    ROSTERCAL_CONFIG: path.join(dir, 'config.json'),
    FLEET_TOKEN: 'sandbox-token',
  };
  if (process.env.BENCH_DATABASE_URL) {
    admin = new pg.Client({ connectionString: process.env.BENCH_DATABASE_URL });
    await admin.connect();
    await admin.query(`create database ${dbName}`);
    const u = new URL(process.env.BENCH_DATABASE_URL);
    u.pathname = `/${dbName}`;
    env.DATABASE_URL = u.toString();
  }
  const ids = urls.map((_, i) => `school-${String(i + 1).padStart(3, '0')}`);
  await writeFile(
    env.ROSTERCAL_CONFIG!,
    JSON.stringify({
      dataDir: path.join(dir, 'data'),
      publicUrl: 'http://127.0.0.1:1',
      schools: urls.map((url, i) => ({
        id: ids[i],
        name: `School ${i + 1}`,
        upstream: { url, token: 'env:FLEET_TOKEN' },
        timeZone: SCHOOL_TIME_ZONE,
        // Never fires during the run: only the pulls asked for here.
        schedules: { incremental: '0 0 0 1 1 *', full: '0 0 0 1 1 *' },
      })),
    }),
  );
  const service = await startService({ config: await loadConfig(env), port: 0, initialPull: false });
  const session = PROFILE ? new Session() : null;
  try {
    const pullAll = async (label: string, profileFrom: number | null) => {
      const cpu: number[] = [];
      for (const [i, id] of ids.entries()) {
        if (session && i === profileFrom) {
          session.connect();
          await session.post('Profiler.enable');
          await session.post('Profiler.start');
        }
        const before = cpuSeconds();
        const outcome = await service.scheduler.runNow(id, 'full');
        cpu.push(cpuSeconds() - before);
        if (outcome.status !== 'succeeded') throw new Error(`${label} pull of ${id}: ${outcome.status}`);
      }
      return cpu;
    };
    const first = await pullAll('first', WARM_AFTER);
    if (session && PROFILE) {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(PROFILE, JSON.stringify(profile));
      session.disconnect();
    }
    const again = await pullAll('unchanged', null);
    const at = (n: number) => (first[n - 1] === undefined ? 'n/a' : `${first[n - 1]!.toFixed(3)} s`);
    console.log(
      `store: ${env.DATABASE_URL ? 'PostgreSQL' : 'SQLite'}, ${SCHOOLS} small schools, CPU s of this process per pull`,
    );
    console.log(`first pull of the 1st school ${at(1)}, 2nd ${at(2)}, 10th ${at(10)}, 100th ${at(100)}`);
    console.log(
      `first pulls after the ${WARM_AFTER}th: median ${median(first.slice(WARM_AFTER)).toFixed(3)} s over ${first.slice(WARM_AFTER).length}`,
    );
    console.log(
      `unchanged full pulls: median ${median(again).toFixed(3)} s over ${again.length} (1st ${again[0]!.toFixed(3)} s)`,
    );
    console.log(
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await service.close();
    upstream.kill('SIGTERM');
    if (admin) {
      await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => {});
      await admin.end();
    }
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
