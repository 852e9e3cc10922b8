// Reading never needs the database to be up (issue 41): `rostercal serve` replicas on a PostgreSQL of this test's
// own, which is stopped for a while and restarted (slowly, then at once) while families' calendar apps and browsers
// keep asking. Measured before the fix: every feed and page answered 500 "Internal error" (no Retry-After) while the
// database was down, even the renders the replicas had served seconds before, and /readyz?stale-ok (the Docker
// health check) went 503 on every replica at once. Now: a feed or page this replica rendered is served from memory
// as it was (same ETag); one it did not is a 503 with Retry-After (pages say "temporarily unavailable" in HTML);
// /readyz?stale-ok stays 200 naming the outage, /readyz is 503; and no request gets a 500 across the restarts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { type Child, rostercal, runRostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { freePort } from '../support/ports.ts';
import { type PostgresServer, startPostgresServer } from '../support/postgres-server.ts';
import { until } from '../support/until.ts';

const FEED_SECRET = 'store-outage-shared-feed-secret-0123456789';
const PUBLIC = 'https://calendars.hillcrest.example';
const REPLICAS = 2;
/** How long the database stays down in the slow outage (the was 20 s; the answers settle within 2 s). */
const OUTAGE_MS = 8000;

interface Answer {
  phase: string;
  replica: number;
  what: string;
  status: number;
  etag: string | null;
  retryAfter: string | null;
  type: string | null;
  body: string;
}

let server: PostgresServer;
let sandbox: Sandbox;
let databaseUrl: string;
const dirs: string[] = [];
const ports: number[] = [];
const replicas: Child[] = [];
let rows: FeedListing[];
/** Feeds every replica served before the outage, and feeds none was asked for. */
let warm: FeedListing[];
let cold: FeedListing[];
/** Per replica and warm feed, the ETag and body it served before the outage. */
const before = new Map<string, { etag: string; body: string; h1: string }>();
const h1Of = (page: string) => /<h1[^>]*>([\s\S]*?)<\/h1>/.exec(page)?.[1] ?? '(no h1)';
const answers: Answer[] = [];
let phase = 'warm-up';

function envOf(i: number): Record<string, string> {
  return {
    ...schoolEnv(sandbox, { DATABASE_URL: databaseUrl, DATA_DIR: dirs[i]! }),
    PUBLIC_URL: PUBLIC,
    PORT: String(ports[i]),
    FEED_SECRET,
    LOG_LEVEL: 'warn',
  };
}

const local = (i: number, url: string) => `http://127.0.0.1:${ports[i]}${new URL(url).pathname}`;

async function ask(i: number, what: string, url: string, init?: RequestInit): Promise<Answer> {
  let a: Answer;
  try {
    const res = await fetch(url.startsWith('http://127') ? url : local(i, url), {
      ...init,
      signal: AbortSignal.timeout(15_000),
    });
    a = {
      phase,
      replica: i,
      what,
      status: res.status,
      etag: res.headers.get('etag'),
      retryAfter: res.headers.get('retry-after'),
      type: res.headers.get('content-type'),
      body: await res.text(),
    };
  } catch (err) {
    a = { phase, replica: i, what, status: 0, etag: null, retryAfter: null, type: null, body: String(err) };
  }
  answers.push(a);
  return a;
}

const unknownToken = `${'Q'.repeat(31)}x`;

/** What calendar apps and browsers keep asking, round robin over the replicas, until `stop` says so. */
function load(stop: () => boolean): Promise<void> {
  const targets = [
    ...warm.flatMap((f) => [
      { what: `warm ics ${f.scope} ${f.id}`, url: f.url! },
      { what: `warm page ${f.scope} ${f.id}`, url: f.page! },
    ]),
    ...cold.flatMap((f) => [
      { what: `cold ics ${f.scope} ${f.id}`, url: f.url! },
      { what: `cold page ${f.scope} ${f.id}`, url: f.page! },
    ]),
    { what: 'unknown ics', url: `${PUBLIC}/feeds/${unknownToken}.ics` },
  ];
  const worker = async (offset: number) => {
    for (let n = offset; !stop(); n += 2) {
      const t = targets[n % targets.length]!;
      // Cold feeds are asked for only while the database is down: asked before, a replica would have rendered them.
      if (t.what.startsWith('cold') && !phase.startsWith('down')) continue;
      await ask(n % REPLICAS, t.what, t.url);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return Promise.all([worker(0), worker(1)]).then(() => {});
}

beforeAll(async () => {
  server = await startPostgresServer({ env: {} });
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  await admin.query('CREATE DATABASE rostercal_outage');
  await admin.end();
  const url = new URL(server.adminUrl);
  url.pathname = '/rostercal_outage';
  databaseUrl = url.toString();
  // serve and the CLI run on the real clock: a school of this week's shape stays inside their windows.
  sandbox = await startWeekSandbox({ seed: 23, scale: 'small' });
  for (let i = 0; i < REPLICAS; i++) {
    dirs.push(await mkdtemp(path.join(tmpdir(), `rostercal-outage-${i}-`)));
    ports.push(await freePort());
  }
  const accepted = await runRostercal(['feeds', 'accept-store'], envOf(0));
  expect(accepted.code, accepted.stderr).toBe(0);
  for (let i = 0; i < REPLICAS; i++) {
    const child = rostercal(['serve'], envOf(i));
    replicas.push(child);
    await child.waitFor(/Stop with Ctrl-C/, 120_000);
  }
  const list = await runRostercal(['feeds', 'list', '--json'], envOf(0));
  expect(list.code, list.stderr).toBe(0);
  rows = JSON.parse(list.stdout) as FeedListing[];
  const teams = rows.filter((r) => r.scope === 'team');
  const students = rows.filter((r) => r.scope === 'student');
  warm = [...teams.slice(0, 3), ...students.slice(0, 2), rows.find((r) => r.scope === 'activity')!];
  cold = [teams[teams.length - 1]!, students[students.length - 1]!];
}, 400_000);

afterAll(async () => {
  for (const r of replicas) if (r.proc.exitCode === null) r.proc.kill('SIGTERM');
  await Promise.all(replicas.map((r) => r.exit));
  await sandbox?.close();
  await server?.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** Today's figures, for the closing note. */
function summary(): string {
  const by = new Map<string, number>();
  for (const a of answers) {
    const k = `${a.phase} ${a.what.split(' ').slice(0, 2).join(' ')} ${a.status}`;
    by.set(k, (by.get(k) ?? 0) + 1);
  }
  return [...by].map(([k, n]) => `${k}: ${n}`).join('\n');
}

describe('serving through a PostgreSQL outage (two serve replicas, one database)', () => {
  it('serves what each replica rendered, 503 with Retry-After for the rest, never a 500', async () => {
    // Every replica serves the warm feeds and pages once, as calendar apps and browsers would.
    for (let i = 0; i < REPLICAS; i++)
      for (const f of warm) {
        const ics = await ask(i, `warm ics ${f.scope} ${f.id}`, f.url!);
        expect(ics.status, ics.body).toBe(200);
        const page = await ask(i, `warm page ${f.scope} ${f.id}`, f.page!);
        expect(page.status, page.body).toBe(200);
        before.set(`${i} ${f.url}`, { etag: ics.etag!, body: ics.body, h1: h1Of(page.body) });
      }

    let stopLoad = false;
    const loading = load(() => stopLoad);
    try {
      // A slow outage: the database stopped for OUTAGE_MS.
      phase = 'down';
      await server.halt();
      const downAt = Date.now();
      // The replicas' memories of the store's answers (data version, rotation mark) last about a second.
      await new Promise((r) => setTimeout(r, 2500));
      phase = 'down-checked';
      for (let i = 0; i < REPLICAS; i++) {
        for (const f of warm) {
          const ics = await ask(i, `warm ics ${f.scope} ${f.id}`, f.url!);
          expect.soft(ics.status, `${i} ${f.scope} ${f.id}: ${ics.body.slice(0, 200)}`).toBe(200);
          expect.soft(ics.etag).toBe(before.get(`${i} ${f.url}`)!.etag);
          expect.soft(ics.body).toBe(before.get(`${i} ${f.url}`)!.body);
          const again = await ask(i, `warm ics 304 ${f.scope}`, f.url!, {
            headers: { 'if-none-match': ics.etag! },
          });
          expect.soft(again.status).toBe(304);
          const page = await ask(i, `warm page ${f.scope} ${f.id}`, f.page!);
          expect.soft(page.status, page.body.slice(0, 200)).toBe(200);
          expect.soft(page.type).toMatch(/text\/html/);
          expect.soft(h1Of(page.body)).toBe(before.get(`${i} ${f.url}`)!.h1);
        }
        for (const f of cold) {
          const ics = await ask(i, `cold ics ${f.scope} ${f.id}`, f.url!);
          expect.soft(ics.status, ics.body.slice(0, 200)).toBe(503);
          expect.soft(Number(ics.retryAfter)).toBeGreaterThan(0);
          const page = await ask(i, `cold page ${f.scope} ${f.id}`, f.page!);
          expect.soft(page.status, page.body.slice(0, 200)).toBe(503);
          expect.soft(Number(page.retryAfter)).toBeGreaterThan(0);
          expect.soft(page.type).toMatch(/text\/html/);
          expect.soft(page.body).toMatch(/<html lang="[a-z]+"/);
          expect.soft(page.body).toMatch(/<main/);
          expect.soft(page.body).toMatch(/temporarily unavailable/i);
        }
        // A token nobody knows cannot be called unknown while the store cannot be asked: 503, never 404.
        const unknown = await ask(i, 'unknown ics', `${PUBLIC}/feeds/${unknownToken}.ics`);
        expect.soft(unknown.status).toBe(503);
        expect.soft(Number(unknown.retryAfter)).toBeGreaterThan(0);
        // The Docker health check keeps a replica that serves what it has; the strict probe says it is not ready.
        const staleOk = await ask(i, 'readyz stale-ok', `http://127.0.0.1:${ports[i]}/readyz?stale-ok`);
        expect.soft(staleOk.status, staleOk.body).toBe(200);
        expect.soft(JSON.parse(staleOk.body)).toMatchObject({ status: 'serving' });
        expect.soft(JSON.parse(staleOk.body).store).toMatch(/cannot be reached/);
        const strict = await ask(i, 'readyz', `http://127.0.0.1:${ports[i]}/readyz`);
        expect.soft(strict.status, strict.body).toBe(503);
      }
      await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - downAt))));
      phase = 'restarting';
      await server.restart();
      phase = 'back';
      // Back: every feed, the cold ones too, within the pool's reconnection.
      for (let i = 0; i < REPLICAS; i++)
        for (const f of [...warm, ...cold])
          await until(
            `replica ${i} serving ${f.scope} ${f.id} again`,
            async () => (await ask(i, `back ics ${f.scope} ${f.id}`, f.url!)).status === 200,
            60_000,
            200,
          );
      let last = '';
      try {
        await until(
          'ready again',
          async () => {
            const r = await ask(0, 'readyz', `http://127.0.0.1:${ports[0]}/readyz`);
            last = r.body;
            return r.status === 200;
          },
          60_000,
          200,
        );
      } catch (err) {
        throw new Error(`${(err as Error).message}; /readyz said ${last.slice(0, 400)}`);
      }
      // A fast restart under the same load.
      phase = 'quick-restart';
      await server.restart();
      await new Promise((r) => setTimeout(r, 3000));
      phase = 'after';
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      stopLoad = true;
      await loading;
      console.log(`answers by phase, kind and status:\n${summary()}`);
    }
    const failed = answers.filter((a) => a.status >= 500 && a.status !== 503);
    expect(
      failed.map((a) => `${a.phase} replica ${a.replica} ${a.what}: ${a.status} ${a.body.slice(0, 60)}`),
    ).toEqual([]);
    // Every 503 of a feed or page says when to come back.
    expect(answers.filter((a) => a.status === 503 && !a.what.startsWith('readyz') && !a.retryAfter)).toEqual(
      [],
    );
    // Renders a replica had served were never refused.
    expect(
      answers
        .filter((a) => a.what.startsWith('warm') && a.status !== 200 && a.status !== 304)
        .map((a) => `${a.phase} ${a.replica} ${a.what} ${a.status}`),
    ).toEqual([]);
    expect(answers.filter((a) => a.status === 0).map((a) => a.body)).toEqual([]);
  }, 300_000);

  it('a URL rotated before the outage is never served from memory; a family link is, as it was', async () => {
    const teams = rows.filter((r) => r.scope === 'team');
    const rotatedFeed = teams[3]!;
    // Both replicas serve it (and so remember its token), then it is rotated and the new URL served by replica 0.
    for (let i = 0; i < REPLICAS; i++)
      expect((await ask(i, 'rotated old', rotatedFeed.url!)).status).toBe(200);
    const rotated = await runRostercal(
      ['feeds', 'rotate', 'team', String(rotatedFeed.id), '--json'],
      envOf(0),
    );
    expect(rotated.code, rotated.stderr).toBe(0);
    const newUrl = (JSON.parse(rotated.stdout) as { url: string }).url;
    for (let i = 0; i < REPLICAS; i++)
      expect((await ask(i, 'rotated old', rotatedFeed.url!)).status).toBe(404);
    const fresh = await ask(0, 'rotated new', newUrl);
    expect(fresh.status).toBe(200);
    // A family link of two children, made on replica 1's page and served by both.
    const [a, b] = rows.filter((r) => r.scope === 'student').slice(2, 4);
    const made = await fetch(`http://127.0.0.1:${ports[1]}/family`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ from: new URL(a!.url!).pathname.slice(7, 39), links: b!.page! }).toString(),
    });
    expect(made.status, await made.text()).toBe(303);
    const family = made.headers.get('location')!;
    const familyBefore: { etag: string | null; body: string }[] = [];
    for (let i = 0; i < REPLICAS; i++) {
      const ics = await ask(i, 'family ics', `http://127.0.0.1:${ports[i]}${new URL(family).pathname}.ics`);
      expect(ics.status, ics.body).toBe(200);
      familyBefore.push(ics);
      expect(
        (await ask(i, 'family page', `http://127.0.0.1:${ports[i]}${new URL(family).pathname}`)).status,
      ).toBe(200);
    }

    phase = 'down-rotated';
    await server.halt();
    try {
      await new Promise((r) => setTimeout(r, 2500));
      for (let i = 0; i < REPLICAS; i++) {
        // Known rotated: never 200 again, whatever memory holds (503: neither live nor gone can be said now).
        const old = await ask(i, 'rotated old', rotatedFeed.url!);
        expect(old.status).toBe(503);
        const ics = await ask(i, 'family ics', `http://127.0.0.1:${ports[i]}${new URL(family).pathname}.ics`);
        expect(ics.status, ics.body.slice(0, 200)).toBe(200);
        expect(ics.etag).toBe(familyBefore[i]!.etag);
        expect(ics.body).toBe(familyBefore[i]!.body);
        const page = await ask(i, 'family page', `http://127.0.0.1:${ports[i]}${new URL(family).pathname}`);
        expect(page.status, page.body.slice(0, 200)).toBe(200);
      }
      expect((await ask(0, 'rotated new', newUrl)).status).toBe(200);
      expect((await ask(1, 'rotated new', newUrl)).status).toBe(503);
    } finally {
      await server.restart();
    }
    await until(
      'the rotated URL gone again, not unknown',
      async () => (await ask(1, 'rotated old', rotatedFeed.url!)).status === 404,
      60_000,
      200,
    );
    expect(answers.filter((a) => a.status >= 500 && a.status !== 503)).toEqual([]);
  }, 120_000);
});
