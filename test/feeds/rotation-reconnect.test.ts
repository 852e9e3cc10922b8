// Two `rostercal serve` replicas on one PostgreSQL; B reaches it through a relay the test can cut (every connection
// reset, new ones too) or hold (packets dropped, connections kept; B's reads end at the store's deadline). An admin rotates a feed, and a family link's
// member, on A while B is cut off: what B answers for the old URL while cut off (what it confirmed, as it was: it
// cannot tell this rotation from none; for at most OUTAGE_MEMORY_MS after it first found the store unreachable,
// test/feeds/tokens.test.ts), and how long after its connection comes back it goes on answering it 200: not once,
// its first request reads the rotation mark again. A URL rotated before the cut (B had read the rotation) is never
// served by B while cut off. Measured figures: src/feeds/README.md.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { UNANSWERED_MEMO_MS } from '../../src/store/pg-deadline.ts';
import { rotateAsAdmin } from '../support/admin-rotation.ts';
import { type Child, rostercal, runRostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { type PgWire, startPgWire } from '../support/pg-wire.ts';
import { freePort } from '../support/ports.ts';
import { until } from '../support/until.ts';

const ADMIN_TOKEN = 'reconnect-admin-token-0123456789abcdefghijkl';
const FEED_SECRET = 'reconnect-replicas-share-this-secret-0123456';
const PUBLIC = 'https://calendars.hillcrest.example';
/**
 * How long after its connection comes back B may still answer a URL rotated while it was cut off: its first
 * request reads the rotation mark before any remembered token is used (measured 8–62 ms; a bound for a loaded
 * machine, not a pause).
 */
const RECONNECT_BOUND_MS = 1000;
/** How long the cut lasts once the rotation is made. */
const CUT_MS = 2000;
/** How long B is asked while the packet-dropping partition lasts (past the store's 4-s read deadline). */
const HOLD_MS = 6000;
/** How long one of B's answers may take while held: the read deadline (4 s) or connect timeout (5 s), a margin. */
const HELD_ANSWER_BOUND_MS = 6000;

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

/** The answer, or status 0 when none came within `ms`. */
async function get(i: number, url: string, ms = 10_000): Promise<{ status: number; body: string }> {
  try {
    const res = await fetch(local(i, url), { signal: AbortSignal.timeout(ms) });
    return { status: res.status, body: await res.text() };
  } catch (err) {
    if ((err as Error).name !== 'TimeoutError') throw err;
    return { status: 0, body: '' };
  }
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
  let held: FeedListing;
  let member: FeedListing;
  let untouchedBody: string;
  let family: string;
  let familyBefore: string;

  const rotateOnA = async (f: FeedListing) => {
    const r = await rotateAsAdmin(`http://127.0.0.1:${ports[A]}`, ADMIN_TOKEN, {
      school: 'hillcrest',
      scope: f.scope,
      id: f.id,
    });
    expect(r.res.status, r.page).toBe(200);
    expect(r.token).not.toBeNull();
    expect(await status(A, f.url!)).toBe(404);
    return `${PUBLIC}/feeds/${r.token}.ics`;
  };

  /** Asks B until `refused` holds, from the moment the connection is back; the time it took and how many 200s. */
  async function untilRefused(what: () => Promise<boolean>, since: number) {
    let served = 0;
    while (!(await what())) {
      served++;
      if (performance.now() - since > 60_000) throw new Error('B never refused it');
    }
    return { ms: performance.now() - since, served };
  }

  it('a URL rotated before the cut, once B has read it, is never served by B while cut off', async () => {
    const list = await runRostercal(['feeds', 'list', '--json'], envOf(A));
    expect(list.code, list.stderr).toBe(0);
    const rows = JSON.parse(list.stdout) as FeedListing[];
    const teams = rows.filter((r) => r.scope === 'team');
    [rotatedBefore, rotatedDuring, untouched, held] = [teams[0]!, teams[1]!, teams[2]!, teams[3]!];
    const [s1, s2] = rows.filter((r) => r.scope === 'student');
    member = s1!;
    // A calendar app polls each on B: B remembers the tokens and holds the renders.
    for (const f of [rotatedBefore, rotatedDuring, untouched]) expect(await status(B, f.url!)).toBe(200);
    // A family link of two children, made on B's page.
    const made = await fetch(`http://127.0.0.1:${ports[B]}/family`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        from: new URL(s1!.url!).pathname.slice(7, 39),
        links: s2!.page!,
      }).toString(),
    });
    expect(made.status, await made.text()).toBe(303);
    family = `${PUBLIC}${new URL(made.headers.get('location')!).pathname}.ics`;

    await rotateOnA(rotatedBefore);
    await until('B refuses the URL rotated on A', async () => (await status(B, rotatedBefore.url!)) === 404);
    // Asked again after B's memory was cleared by the rotation: confirmed live since the last rotation B knows of.
    expect(await status(B, rotatedDuring.url!)).toBe(200);
    const u = await get(B, untouched.url!);
    expect(u.status).toBe(200);
    untouchedBody = u.body;
    const f = await get(B, family);
    expect(f.status).toBe(200);
    familyBefore = f.body;

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

  it('a URL and a family member rotated on A during the cut: served by B as they were while cut off, refused on its first request once back, never after', async () => {
    const newUrl = await rotateOnA(rotatedDuring);
    await rotateOnA(member);
    const familyOnA = await get(A, family);
    expect(familyOnA.status).toBe(200);
    expect(familyOnA.body).not.toBe(familyBefore);

    // While cut off B cannot tell these rotations from none: it answers what it confirmed, as it was.
    const during: number[] = [];
    const familyDuring: boolean[] = [];
    const cutEnds = performance.now() + CUT_MS;
    while (performance.now() < cutEnds) {
      during.push(await status(B, rotatedDuring.url!));
      const fam = await get(B, family);
      familyDuring.push(fam.status === 200 && fam.body === familyBefore);
      await new Promise((r) => setTimeout(r, 100));
    }
    const newDuring = await status(B, newUrl);
    console.log(
      `B while cut off: old URL ${[...new Set(during)].join('/')} (${during.length} asked), family as before ${familyDuring.every(Boolean)}, new URL ${newDuring}`,
    );
    expect([...new Set(during)]).toEqual([200]);
    expect(familyDuring.every(Boolean)).toBe(true);
    expect(newDuring).toBe(503);

    relay.restore();
    const back = performance.now();
    const feed = await untilRefused(async () => (await status(B, rotatedDuring.url!)) === 404, back);
    const fam = await untilRefused(async () => (await get(B, family)).body === familyOnA.body, back);
    console.log(
      `B after reconnect: old URL 404 ${feed.ms.toFixed(0)} ms after the restore (${feed.served} answered 200 before), family link without the rotated member ${fam.ms.toFixed(0)} ms (${fam.served} as before)`,
    );
    expect(feed.served).toBe(0);
    expect(fam.served).toBe(0);
    expect(feed.ms).toBeLessThan(RECONNECT_BOUND_MS);
    // Never again, on the feed or its page (404, or 429 once the failed-lookup throttle counts this client).
    const after: number[] = [];
    const watchEnds = performance.now() + 2000;
    while (performance.now() < watchEnds) {
      after.push(await status(B, rotatedDuring.url!));
      after.push(await status(B, rotatedDuring.page!));
      expect((await get(B, family)).body).toBe(familyOnA.body);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(after.filter((s) => s !== 404 && s !== 429)).toEqual([]);
    expect(await status(B, newUrl)).toBe(200);
    expect(await status(B, untouched.url!)).toBe(200);
  });

  it('a partition that drops packets: B answers the old URL as it was within the read deadline, and 404 within the memo once it heals', async () => {
    const before = await get(B, held.url!);
    expect(before.status).toBe(200);
    relay.hold();
    const during: { status: number; body: string }[] = [];
    let slowest = 0;
    try {
      await rotateOnA(held);
      // Past B's one-second memory of the rotation mark: B's next request reads it, and the read goes unanswered.
      await new Promise((r) => setTimeout(r, 1100));
      // While held, B cannot tell the rotation from none (as in a cut): what it confirmed, as it was, within the
      // store's read deadline (pg-deadline.ts), not after the partition.
      const heldEnds = performance.now() + HOLD_MS;
      while (performance.now() < heldEnds) {
        const t0 = performance.now();
        during.push(await get(B, held.url!, 20_000));
        slowest = Math.max(slowest, performance.now() - t0);
      }
    } finally {
      relay.restore();
    }
    const healed = performance.now();
    const first = await untilRefused(async () => (await status(B, held.url!)) === 404, healed);
    console.log(
      `B held ${HOLD_MS} ms: ${during.length} answered, ${[...new Set(during.map((d) => d.status))].join('/')} (slowest ${slowest.toFixed(0)} ms); once healed 404 after ${first.ms.toFixed(0)} ms (${first.served} 200s)`,
    );
    expect(during.length).toBeGreaterThan(0);
    expect(during.filter((d) => d.status !== 200 || d.body !== before.body)).toEqual([]);
    expect(slowest).toBeLessThan(HELD_ANSWER_BOUND_MS);
    // B cannot see the partition heal: for up to UNANSWERED_MEMO_MS after its last unanswered read (its own
    // background reads included) it refuses connections without trying, and answers from memory.
    expect(first.ms).toBeLessThan(UNANSWERED_MEMO_MS + RECONNECT_BOUND_MS);
    const after: number[] = [];
    const watchEnds = performance.now() + 2000;
    while (performance.now() < watchEnds) after.push(await status(B, held.url!));
    expect(after.filter((s) => s !== 404 && s !== 429)).toEqual([]);
  });
});
