// The README's advice for PostgreSQL, run as written: its SQL block makes a least-privilege role (names made
// unique for this run), then `rostercal sync` works with that role, its tables land in its own schema, and the
// role can create nothing in `public` and is no superuser.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';

const name = `rc_${randomBytes(4).toString('hex')}`;
let scratch: TestDatabase;
let adminUrl: URL;
let sandbox: Sandbox;
let dataDir: string;

async function as<T>(url: URL | string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** The README's SQL block, split where it connects to the new database. */
async function readmeSql(): Promise<{ server: string; database: string }> {
  const readme = await readFile('README.md', 'utf8');
  const block = /PostgreSQL: give rostercal a role of its own[\s\S]*?```sql\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block)
    throw new Error('README.md: no ```sql block after "PostgreSQL: give rostercal a role of its own"');
  const sql = block.replace(/\brostercal\b/g, name);
  const [server, database] = sql.split(new RegExp(`^\\\\c ${name}$`, 'm'));
  if (database === undefined) throw new Error(`README.md: the SQL block has no "\\c rostercal" line`);
  return { server: server!, database };
}

beforeAll(async () => {
  scratch = await createTestDatabase();
  adminUrl = new URL(scratch.url);
  adminUrl.pathname = '/postgres';
  sandbox = await startWeekSandbox({ seed: 43, scale: 'small' });
  dataDir = await mkdtemp(path.join(tmpdir(), 'rostercal-pgrole-'));
}, 60_000);
afterAll(async () => {
  await as(adminUrl, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.query(`DROP ROLE IF EXISTS ${name}`);
  }).catch(() => {});
  await scratch?.drop();
  await sandbox?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("the README's dedicated PostgreSQL role", () => {
  it('is enough for rostercal, and no more', async () => {
    const { server, database } = await readmeSql();
    await as(adminUrl, async (c) => {
      for (const statement of server.split(';').map((s) => s.replace(/--.*$/gm, '').trim()))
        if (statement) await c.query(statement);
    });
    const dbUrl = new URL(adminUrl);
    dbUrl.pathname = `/${name}`;
    await as(dbUrl, (c) => c.query(database));

    const roleUrl = new URL(dbUrl);
    roleUrl.username = name;
    roleUrl.password = 'change-me';
    const sync = rostercal(
      ['sync', '--full'],
      schoolEnv(sandbox, { DATABASE_URL: roleUrl.toString(), DATA_DIR: dataDir }),
    );
    expect(await sync.exit, sync.output()).toBe(0);

    const tables = await as(dbUrl, (c) =>
      c.query<{ schemaname: string; n: string }>(
        'SELECT schemaname, count(*) AS n FROM pg_tables WHERE tableowner = $1 GROUP BY schemaname',
        [name],
      ),
    );
    expect(tables.rows.map((r) => r.schemaname)).toEqual([name]);
    expect(Number(tables.rows[0]!.n)).toBeGreaterThan(5);

    const role = await as(adminUrl, (c) =>
      c.query(
        'SELECT rolsuper, rolcreatedb, rolcreaterole, rolreplication FROM pg_roles WHERE rolname = $1',
        [name],
      ),
    );
    expect(role.rows[0]).toEqual({
      rolsuper: false,
      rolcreatedb: false,
      rolcreaterole: false,
      rolreplication: false,
    });
    await as(roleUrl, async (c) => {
      await expect(c.query('CREATE TABLE public.intruder (i int)')).rejects.toThrow(/permission denied/);
    });
  }, 120_000);
});
