// Two `rostercal serve` replicas on one PostgreSQL; B reaches it through a relay the test can cut (every connection
// reset, new ones too). An admin rotates a feed on A while B is cut off. What B answers for the old URL while cut
// off, and how long after its connection comes back it goes on answering it 200: never once it can know. A URL
// rotated before the cut (B had read the rotation) is never served by B during the cut.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rotateAsAdmin } from '../support/admin-rotation.ts';
import { type Child, rostercal, runRostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { type PgWire, startPgWire } from '../support/pg-wire.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { freePort } from '../support/ports.ts';
import { until } from '../support/until.ts';

const ADMIN_TOKEN = 'reconnect-admin-token-0123456789abcdefghijkl';
const FEED_SECRET = 'reconnect-replicas-share-this-secret-0123456';
const PUBLIC = 'https://calendars.hillcrest.example';
/**
 * How long after its connection comes back B may still answer a URL rotated while it was cut off: one request
 * (its rotation mark is read before any remembered token is used). Measured: see src/feeds/README.md.
 */
const RECONNECT_BOUND_MS = 1000;
/** How long the cut lasts once the rotation is made. */
const CUT_MS = 2000;

let sandbox: Sandbox;
let db: TestDatabase;
let relay: PgWire;
const dirs: string[] = [];
const ports: number[] = [];
const replicas: Child[] = [];
const A = 0;
const B = 1;

function envOf(i: number): Record<string, string> {
  return {
    ...schoolEnv(sandbox, { DATABASE_URL: i === B ? relay.url : db.url, DATA_DIR: dirs[i]! }),
    PUBLIC_URL: PUBLIC,
    PORT: String(ports[i]),
    FEED_SECRET,
    ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
  };
}

const local = (i: number, url: string) => `http://127.0.0.1:${ports[i]}${new URL(url).pathname}`;

async function get(i: number, url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(local(i, url), { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: await res.text() };
}

const status = async (i: number, url: string) => (await get(i, url)).status;

beforeAll(async () => {
  // serve and the CLI run on the real clock: a school of this week's shape stays inside their windows.
  sandbox = await startWeekSandbox({ seed: 31, scale: 'small' });
  db = await createTestDatabase();
  relay = await startPgWire(db.url);
  for (let i = 0; i < 2; i++) {
    dirs.push(await mkdtemp(path.join(tmpdir(), `rostercal-reconnect-${i}-`)));
    ports.push(await freePort());
  }
  const accepted = await runRostercal(['feeds', 'accept-store'], envOf(A));
  expect(accepted.code, accepted.stderr).toBe(0);
  // One after the other: A pulls the school, B finds it pulled.
  for (const i of [A, B]) {
    const child = rostercal(['serve'], envOf(i));
    replicas.push(child);
    await child.waitFor(/Stop with Ctrl-C/, 90_000);
  }
}, 300_000);

afterAll(async () => {
  relay?.restore();
  for (const r of replicas) if (r.proc.exitCode === null) r.proc.kill('SIGTERM');
  await Promise.all(replicas.map((r) => r.exit));
  await relay?.close();
  await db?.drop();
  await sandbox?.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('a rotation on A while B cannot reach the store', () => {
  let rotatedBefore: FeedListing;
  let rotatedDuring: FeedListing;
  let untouched: FeedListing;
  let untouchedBody: string;
  let newUrl: string;

  it('a URL rotated before the cut, once B has read it, is never served by B while cut off', async () => {
    const list = await runRostercal(['feeds', 'list', '--json'], envOf(A));
    expect(list.code, list.stderr).toBe(0);
    const teams = (JSON.parse(list.stdout) as FeedListing[]).filter((r) => r.scope === 'team');
    [rotatedBefore, rotatedDuring, untouched] = [teams[0]!, teams[1]!, teams[2]!];
    // A calendar app polls each on B: B remembers the tokens and holds the renders.
    for (const f of [rotatedBefore, rotatedDuring, untouched]) expect(await status(B, f.url!)).toBe(200);

    const { res, page } = await rotateAsAdmin(`http://127.0.0.1:${ports[A]}`, ADMIN_TOKEN, {
      school: 'hillcrest',
      scope: 'team',
      id: rotatedBefore.id,
    });
    expect(res.status, page).toBe(200);
    await until('B refuses the URL rotated on A', async () => (await status(B, rotatedBefore.url!)) === 404);
    // Asked again after B's memory was cleared by the rotation: confirmed live since the last rotation B knows of.
    expect(await status(B, rotatedDuring.url!)).toBe(200);
    const u = await get(B, untouched.url!);
    expect(u.status).toBe(200);
    untouchedBody = u.body;

    relay.cut();
    const answers = [];
    for (let n = 0; n < 5; n++) answers.push(await status(B, rotatedBefore.url!));
    expect(answers.every((s) => s !== 200)).toBe(true);
    expect(answers).toContain(503);
    // What B served, it serves as it was.
    const cutOff = await get(B, untouched.url!);
    expect(cutOff.status).toBe(200);
    expect(cutOff.body).toBe(untouchedBody);
  });

  it('a URL rotated on A during the cut: B refuses it within the bound of reconnecting, and never serves it after', async () => {
    const { res, page, token } = await rotateAsAdmin(`http://127.0.0.1:${ports[A]}`, ADMIN_TOKEN, {
      school: 'hillcrest',
      scope: 'team',
      id: rotatedDuring.id,
    });
    expect(res.status, page).toBe(200);
    expect(token).not.toBeNull();
    newUrl = `${PUBLIC}/feeds/${token}.ics`;
    expect(await status(A, rotatedDuring.url!)).toBe(404);
    expect(await status(A, newUrl)).toBe(200);

    // While cut off B cannot tell this rotation from none: what it answers for the old URL, and the new one.
    const during: number[] = [];
    const cutEnds = performance.now() + CUT_MS;
    while (performance.now() < cutEnds) {
      during.push(await status(B, rotatedDuring.url!));
      await new Promise((r) => setTimeout(r, 100));
    }
    const newDuring = await status(B, newUrl);
    console.log(
      `B while cut off: old URL ${[...new Set(during)].join('/')} (${during.length} asked), new URL ${newDuring}`,
    );
    expect(newDuring).toBe(503);
    expect(await status(B, untouched.url!)).toBe(200);

    relay.restore();
    const restored = performance.now();
    let firstRefusal: number | null = null;
    let served = 0;
    let refused: number | null = null;
    for (;;) {
      const s = await status(B, rotatedDuring.url!);
      if (s !== 200) {
        firstRefusal = performance.now() - restored;
        refused = s;
        break;
      }
      served++;
      if (performance.now() - restored > 60_000) break;
    }
    console.log(
      `B after reconnect: first refusal (${refused}) ${firstRefusal?.toFixed(0)} ms after the restore, ${served} answered 200 before it`,
    );
    expect(refused).toBe(404);
    expect(firstRefusal!).toBeLessThan(RECONNECT_BOUND_MS);
    // Never again, on the feed or its page (404, or 429 once the failed-lookup throttle counts this client).
    const after: number[] = [];
    const watchEnds = performance.now() + 2000;
    while (performance.now() < watchEnds) {
      after.push(await status(B, rotatedDuring.url!));
      after.push(await status(B, rotatedDuring.page!));
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(after.filter((s) => s !== 404 && s !== 429)).toEqual([]);
    expect(await status(B, newUrl)).toBe(200);
    expect(await status(B, untouched.url!)).toBe(200);
  });
});
