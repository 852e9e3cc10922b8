// node bench/backup.ts [SCALE…] — how long `rostercal backup` takes and how large the backup is (issue 44), at the
// demo's `school` scale and at `district` scale by default: a sandbox school of that scale pulled by the real
// `rostercal sync --full` (feeds rendered, as a serving store holds them) into a temporary DATA_DIR, then the
// real `rostercal backup --out DIR` as a child process (its own start-up included), and `rostercal restore` of it
// into an empty DATA_DIR. With BENCH_DATABASE_URL (an admin URL: a database per scale is created and dropped) the
// same on PostgreSQL by pg_dump and pg_restore. Prints the figures and the load average they were taken at.
import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startSandbox } from '../src/sandbox/index.ts';
import type { Scale as SandboxScale } from '../src/sandbox/model.ts';
import { createTestDatabase, useTestPostgres } from '../test/support/pg.ts';

const ROOT = path.join(import.meta.dirname, '..');
const scales = (
  process.argv.slice(2).length ? process.argv.slice(2) : ['school', 'district']
) as SandboxScale[];
const pgAdmin = process.env.BENCH_DATABASE_URL;
if (pgAdmin) useTestPostgres(pgAdmin);

const exec = promisify(execFile);

/** The real CLI as a child process (asynchronously: the sandbox answering it lives in this process). */
async function rostercal(args: string[], env: Record<string, string>): Promise<{ ms: number; out: string }> {
  const started = performance.now();
  const { stdout } = await exec(process.execPath, [path.join(ROOT, 'bin/rostercal.js'), ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { ms: performance.now() - started, out: stdout.trim() };
}

const mb = (dir: string) =>
  readdirSync(dir).reduce((n, f) => n + statSync(path.join(dir, f)).size, 0) / 1_048_576;

for (const scale of scales) {
  for (const kind of pgAdmin ? (['SQLite', 'PostgreSQL'] as const) : (['SQLite'] as const)) {
    const sandbox = await startSandbox({ seed: 1, scale });
    const dir = await mkdtemp(path.join(tmpdir(), 'rostercal-backup-bench-'));
    const db = kind === 'PostgreSQL' ? await createTestDatabase() : null;
    const fresh = kind === 'PostgreSQL' ? await createTestDatabase() : null;
    try {
      const env = {
        UPSTREAM_URL: sandbox.url,
        UPSTREAM_TOKEN: sandbox.token,
        SCHOOL_TZ: 'Australia/Sydney',
        SCHOOL_ID: 'bench',
        SCHOOL_NAME: 'Bench College',
        PUBLIC_URL: 'https://cal.example.org',
        DATA_DIR: path.join(dir, 'data'),
        ...(db ? { DATABASE_URL: db.url } : {}),
      };
      const sync = await rostercal(['sync', '--full'], env);
      const feeds = (JSON.parse((await rostercal(['feeds', 'list', '--json'], env)).out) as unknown[]).length;
      const store = db ? null : statSync(path.join(env.DATA_DIR, 'rostercal.sqlite')).size / 1_048_576;
      const out = path.join(dir, 'backup');
      const backup = await rostercal(['backup', '--out', out], env);
      const restore = await rostercal(['restore', '--from', out, '--without-newer-record'], {
        ...env,
        DATA_DIR: path.join(dir, 'restored'),
        ...(fresh ? { DATABASE_URL: fresh.url } : {}),
      });
      console.log(
        `${scale} (${feeds} feeds), ${kind}: pulled in ${(sync.ms / 1000).toFixed(1)} s${store === null ? '' : `, store ${store.toFixed(1)} MB`}; ` +
          `backup ${(backup.ms / 1000).toFixed(1)} s whole command (${/in ([\d.]+ s)/.exec(backup.out)?.[1]} copying), ${mb(out).toFixed(1)} MB; ` +
          `restore ${(restore.ms / 1000).toFixed(1)} s whole command; load ${loadavg()[0]!.toFixed(1)}`,
      );
    } finally {
      await sandbox.close();
      await db?.drop();
      await fresh?.drop();
      await rm(dir, { recursive: true, force: true });
    }
  }
}
