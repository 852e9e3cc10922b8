// Three `rostercal serve` replicas on one PostgreSQL, each with a DATA_DIR of its own (one Docker volume per
// container), sharing FEED_SECRET: the rotation record they trust is the store's, mirrored into each one's
// DATA_DIR. Every replica serves every valid feed; a rotation made on one stops the old URL on all of them by
// the time the admin is told; a replica's own file brings the rotation back into a new, empty database.
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { type Child, rostercal, runRostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { freePort } from '../support/ports.ts';

const ADMIN_TOKEN = 'replicas-admin-token-0123456789abcdefghijkl';
const FEED_SECRET = 'replicas-share-this-feed-secret-0123456789';
const PUBLIC = 'https://calendars.hillcrest.example';
let sandbox: Sandbox;
let db: TestDatabase;
let lostDb: TestDatabase | null = null;
const dirs: string[] = [];
const ports: number[] = [];
const replicas: Child[] = [];

function envOf(i: number, databaseUrl = db.url): Record<string, string> {
  return {
    ...schoolEnv(sandbox, { DATABASE_URL: databaseUrl, DATA_DIR: dirs[i]! }),
    PUBLIC_URL: PUBLIC,
    PORT: String(ports[i]),
    FEED_SECRET,
    ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
  };
}

const cli = runRostercal;

const local = (i: number, url: string) => `http://127.0.0.1:${ports[i]}${new URL(url).pathname}`;

async function status(i: number, url: string): Promise<number> {
  const res = await fetch(local(i, url));
  await res.arrayBuffer();
  return res.status;
}

beforeAll(async () => {
  // serve and the CLI run on the real clock: a school of this week's shape stays inside their windows.
  sandbox = await startWeekSandbox({ seed: 15, scale: 'small' });
  db = await createTestDatabase();
  for (let i = 0; i < 3; i++) {
    dirs.push(await mkdtemp(path.join(tmpdir(), `rostercal-replica-${i}-`)));
    ports.push(await freePort());
  }
  // The operator's first step with a FEED_SECRET of their own, from the first replica's container.
  const accepted = await cli(['feeds', 'accept-store'], envOf(0));
  expect(accepted.code, accepted.stderr).toBe(0);
  // One after the other: the first pulls the school, the others find it pulled.
  for (let i = 0; i < 3; i++) {
    const child = rostercal(['serve'], envOf(i));
    replicas.push(child);
    await child.waitFor(/Stop with Ctrl-C/, 90_000);
  }
}, 300_000);

afterAll(async () => {
  for (const r of replicas) if (r.proc.exitCode === null) r.proc.kill('SIGTERM');
  await Promise.all(replicas.map((r) => r.exit));
  await db?.drop();
  await lostDb?.drop();
  await sandbox?.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('three replicas, one PostgreSQL, a DATA_DIR each', () => {
  let rows: FeedListing[];
  let rotatedOld: string;
  let rotatedNew: string;

  it('every replica serves every valid feed and is ready; none says "gone"', async () => {
    rows = JSON.parse((await cli(['feeds', 'list', '--json'], envOf(0))).stdout) as FeedListing[];
    const sample = ['team', 'student', 'staff', 'activity'].map((s) => rows.find((r) => r.scope === s)!);
    for (let i = 0; i < 3; i++) {
      for (const r of sample) expect(await status(i, r.url!), `replica ${i}: ${r.scope}`).toBe(200);
      const ready = await fetch(`http://127.0.0.1:${ports[i]}/readyz`);
      expect(ready.status, `replica ${i}: ${await ready.clone().text()}`).toBe(200);
    }
  });

  it('a rotation on one replica: by the time the admin reads the answer, the old URL is dead on all three', async () => {
    const team = rows.find((r) => r.scope === 'team')!;
    rotatedOld = team.url!;
    // Every replica has the token in its cache.
    for (let i = 0; i < 3; i++) expect(await status(i, rotatedOld)).toBe(200);
    const res = await fetch(`http://127.0.0.1:${ports[0]}/admin/feeds/rotate`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${ADMIN_TOKEN}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ school: 'hillcrest', scope: 'team', id: String(team.id) }).toString(),
    });
    const page = await res.text();
    expect(res.status, page).toBe(200);
    rotatedNew = `${PUBLIC}/feeds/${/\/feeds\/([\w-]{32})"/.exec(page)![1]}.ics`;
    for (let i = 0; i < 3; i++) {
      expect(await status(i, rotatedOld), `replica ${i}`).toBe(404);
      expect(await status(i, rotatedNew), `replica ${i}`).toBe(200);
    }
  });

  it('each replica mirrors the store’s rotation record into its own DATA_DIR', async () => {
    // A replica writes what the store knows into its file at start, as rotations happen, and when it stops.
    const third = replicas[2]!;
    third.proc.kill('SIGTERM');
    expect(await third.exit).toBe(0);
    const file = path.join(dirs[2]!, 'feed-rotations.jsonl');
    expect(existsSync(file)).toBe(true);
    const team = rows.find((r) => r.scope === 'team')!;
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.some((l) => l.scope === 'team' && l.id === team.id && l.version === 2)).toBe(true);
  });

  it('a new, empty database: the replica’s own file keeps the rotated URL dead', async () => {
    lostDb = await createTestDatabase();
    const alone = rostercal(['serve'], envOf(2, lostDb.url));
    replicas.push(alone);
    await alone.waitFor(/Stop with Ctrl-C/, 90_000);
    expect(alone.output()).toMatch(/did not know 1 feed rotation/);
    expect(await status(2, rotatedOld)).toBe(404);
    expect(await status(2, rotatedNew)).toBe(200);
    const other = rows.find((r) => r.scope === 'team' && r.url !== rotatedOld)!;
    expect(await status(2, other.url!)).toBe(200);
  });
});
