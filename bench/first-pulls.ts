// npm run bench:first-pulls — what a fresh replica's first pull of each school costs in CPU (issue 46: 500
// schools served within 2 minutes of a start). One `serve` (startService, in this process, no start-up pulls) with
// BENCH_SCHOOLS (40) small sandbox schools, each its own port in an upstream process of its own (bench/fleet.ts
// --upstreams, so the upstream's CPU is not counted); each school's first full pull run by the scheduler as the
// start-up runs it (runNow 'full': lease, run record, re-render, after-pull steps), one after another, and this
// process's CPU time (user + system, all threads) read around each, with its PostgreSQL backends' (/proc). Then
// each school's second full pull (unchanged), then an incremental fire of each (nothing changed; through the job
// queue's election on PostgreSQL, as a served school's fires during a start-up). Prints the 1st, 2nd, 10th, 100th
// first pull and the medians after the tenth (the code warm), with the load average: CPU time, since the machine
// is shared. BENCH_DATABASE_URL=postgres://…/db: the store in a database of its own on that server (dropped at the
// end), else SQLite in a temporary directory. BENCH_PROFILE=file.cpuprofile: a V8 CPU profile of the main thread
// over the first pulls after the tenth (BENCH_PROFILE_STEP=unchanged or fires: over those). Not run in CI.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import type { JobOutcome } from '../src/jobs/job.ts';
import { startService } from '../src/running-service.ts';
import { SCHOOL_TIME_ZONE } from '../src/sandbox/index.ts';
import { cpuSecondsOf } from './support/proc.ts';

const SCHOOLS = Number(process.env.BENCH_SCHOOLS ?? 40);
const PROFILE = process.env.BENCH_PROFILE;
/** Which step BENCH_PROFILE covers: first (the default), unchanged or fires. */
const PROFILE_STEP = process.env.BENCH_PROFILE_STEP ?? 'first';
/** The first pulls a profile leaves out: the code's first runs (JIT, module loading). */
const WARM_AFTER = 10;

const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
/** The CPU s the store's PostgreSQL backends (its database's) have used so far; 0 on SQLite. */
function storeBackends(admin: pg.Client | null, db: string | null) {
  return {
    async cpu(): Promise<number> {
      if (!admin || !db) return 0;
      const r = await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [
        db,
      ]);
      let sum = 0;
      for (const { pid } of r.rows) {
        try {
          sum += cpuSecondsOf(pid);
        } catch {
          // Ended between the query and the read.
        }
      }
      return sum;
    },
  };
}

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
  const backends = storeBackends(admin, env.DATABASE_URL ? dbName : null);
  const session = PROFILE ? new Session() : null;
  try {
    /** Runs `one` for each school in turn; per school this process's CPU s and its store backends'. */
    const each = async (step: string, label: string, one: (id: string) => Promise<JobOutcome | null>) => {
      const cpu: number[] = [];
      const store: number[] = [];
      for (const [i, id] of ids.entries()) {
        if (session && step === PROFILE_STEP && i === WARM_AFTER) {
          session.connect();
          await session.post('Profiler.enable');
          await session.post('Profiler.start');
        }
        const before = [cpuSeconds(), await backends.cpu()] as const;
        const outcome = await one(id);
        cpu.push(cpuSeconds() - before[0]);
        store.push((await backends.cpu()) - before[1]);
        if (outcome?.status !== 'succeeded') throw new Error(`${label} of ${id}: ${JSON.stringify(outcome)}`);
      }
      if (session && PROFILE && step === PROFILE_STEP) {
        const { profile } = await session.post('Profiler.stop');
        await writeFile(PROFILE, JSON.stringify(profile));
        session.disconnect();
      }
      return { cpu, store };
    };
    const first = await each('first', 'first pull', (id) => service.scheduler.runNow(id, 'full'));
    const again = await each('unchanged', 'unchanged full pull', (id) =>
      service.scheduler.runNow(id, 'full'),
    );
    // As the schedule fires it (elected through the job queue on PostgreSQL), at a moment of its own.
    const fireAt = new Date(Math.ceil(Date.now() / 1000) * 1000).toISOString();
    const fired = await each('fires', 'incremental fire', (id) =>
      service.scheduler.fire(id, 'incremental', fireAt),
    );
    const at = (n: number) => (first.cpu[n - 1] === undefined ? 'n/a' : `${first.cpu[n - 1]!.toFixed(3)} s`);
    const warm = (xs: number[]) => median(xs.slice(WARM_AFTER)).toFixed(3);
    const pg = env.DATABASE_URL ? ', PostgreSQL' : '';
    console.log(
      `store: ${pg ? 'PostgreSQL' : 'SQLite'}, ${SCHOOLS} small schools; CPU s per school of this process${pg ? " (and of the store's backends)" : ''}`,
    );
    console.log(`first pull of the 1st school ${at(1)}, 2nd ${at(2)}, 10th ${at(10)}, 100th ${at(100)}`);
    const line = (what: string, r: { cpu: number[]; store: number[] }) =>
      console.log(
        `${what}: median ${warm(r.cpu)} s${pg ? ` (${warm(r.store)} s)` : ''} over ${r.cpu.length - WARM_AFTER} (after the ${WARM_AFTER}th)`,
      );
    line('first pulls', first);
    line('unchanged full pulls', again);
    line('incremental fires, nothing changed', fired);
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
