// "Can't make it" (issue 40) on two `rostercal serve` replicas (real child processes) on one PostgreSQL, behind a
// small proxy in front of the sandbox that can lose the upstream's answers. Tried from outside before the fix:
// the same report sent to both replicas at once made two absences upstream (and Undo left one); eight concurrent
// reports with a limit of 3 made 8; a write applied upstream whose answer was lost (502, a cut, a hang) read
// "nothing was reported"; an upstream that cut every connection held the family 63 s, and a 429 with
// Retry-After: 100 held it 100 s.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import { familyReportOf } from '../../src/domain/family-absence.ts';
import type { Id } from '../../src/domain/types.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import type { UpstreamClient } from '../../src/upstream/api.ts';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import { type Child, rostercal, runRostercal } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { pdfText } from '../support/pdf.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { freePort } from '../support/ports.ts';
import { requestFrom } from '../support/proxy.ts';
import { untilValue } from '../support/until.ts';

const FEED_SECRET = 'absence-replicas-share-this-feed-secret-0123';
const ADMIN = 'absence-replicas-admin-token-0123456789abcd';
const LIMIT = 3;

/**
 * What the proxy does to the upstream's absence requests: pass them; apply a write and then answer 502, cut the
 * connection, or never answer; cut every absence request before it reaches the upstream; answer the reads 429
 * with Retry-After: 100.
 */
type Mode = 'pass' | 'applied-502' | 'applied-cut' | 'applied-hang' | 'cut' | 'read-429';

interface Chaos {
  url: string;
  mode: Mode;
  close(): Promise<void>;
}

async function chaosProxy(target: string): Promise<Chaos> {
  const to = new URL(target);
  const hung: ServerResponse[] = [];
  const c = { mode: 'pass' } as Chaos;
  const server: Server = createServer((req, res) => {
    const absences = (req.url ?? '').startsWith('/pre-explained-absences');
    const write = absences && req.method !== 'GET';
    const mode = absences ? c.mode : 'pass';
    if (mode === 'cut') return void req.socket.destroy();
    if (mode === 'read-429' && !write) {
      res.writeHead(429, { 'retry-after': '100', 'content-type': 'application/json' });
      return void res.end('{"error":"slow down"}');
    }
    const onward = httpRequest(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        if (write && mode === 'applied-502') {
          answer.resume();
          return void res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
        }
        if (write && mode === 'applied-cut') {
          answer.resume();
          return void answer.on('end', () => req.socket.destroy());
        }
        if (write && mode === 'applied-hang') {
          answer.resume();
          return void hung.push(res);
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    onward.on('error', () => res.writeHead(502).end());
    req.pipe(onward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  c.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  c.close = () =>
    new Promise<void>((resolve) => {
      for (const r of hung) (r.socket as Socket | null)?.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return c;
}

let sandbox: Sandbox;
let chaos: Chaos;
let db: TestDatabase;
let store: Store;
let upstream: UpstreamClient;
const dirs: string[] = [];
const bases: string[] = [];
const replicas: Child[] = [];
let listing: FeedListing[] = [];

function envOf(i: number): Record<string, string> {
  return {
    ROSTERCAL_CONFIG: path.join(dirs[i]!, 'config.json'),
    DATABASE_URL: db.url,
    FEED_SECRET,
    ADMIN_TOKEN: ADMIN,
    LOG_LEVEL: 'warn',
  };
}

beforeAll(async () => {
  sandbox = await startWeekSandbox({ seed: 21, scale: 'small' });
  upstream = createUpstreamClient({ baseUrl: sandbox.url, token: sandbox.token });
  chaos = await chaosProxy(sandbox.url);
  db = await createTestDatabase();
  for (let i = 0; i < 2; i++) {
    const dir = await mkdtemp(path.join(tmpdir(), `rostercal-absence-replica-${i}-`));
    dirs.push(dir);
    const port = await freePort();
    bases.push(`http://127.0.0.1:${port}`);
    await writeFile(
      path.join(dir, 'config.json'),
      JSON.stringify({
        dataDir: path.join(dir, 'data'),
        port,
        // Behind one load balancer both answer at one public address: here, the first's.
        publicUrl: bases[0] ?? `http://127.0.0.1:${port}`,
        schools: [
          {
            id: 'hill',
            name: 'Hillcrest College',
            upstream: { url: chaos.url, token: sandbox.token },
            timeZone: sandbox.school.timeZone,
            families: { reportAbsences: true, reportsPerChildPerDay: LIMIT, actsPerAddressPerHour: 1000 },
          },
        ],
      }),
    );
  }
  const accepted = await runRostercal(['feeds', 'accept-store'], envOf(0));
  expect(accepted.code, accepted.stderr).toBe(0);
  // One after the other: the first pulls the school, the second finds it pulled.
  for (let i = 0; i < 2; i++) {
    const child = rostercal(['serve'], envOf(i));
    replicas.push(child);
    await child.waitFor(/Stop with Ctrl-C/, 120_000);
  }
  const listed = await runRostercal(['feeds', 'list', '--json'], envOf(0));
  expect(listed.code, listed.stderr).toBe(0);
  listing = JSON.parse(listed.stdout) as FeedListing[];
  store = await openStore({ databaseUrl: db.url, poolSize: 2 });
}, 240_000);

afterAll(async () => {
  for (const r of replicas) if (r.proc.exitCode === null) r.proc.kill('SIGTERM');
  await Promise.all(replicas.map((r) => r.exit));
  await store?.close();
  await chaos?.close();
  await db?.drop();
  await sandbox?.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** A child's page (on replica i), its form cookie and token, and the sessions it offers. */
interface ChildPage {
  id: Id;
  path: string;
  cookie: string;
  csrf: string;
  offered: string[];
}

async function pageOf(id: Id, i = 0): Promise<ChildPage> {
  const feed = listing.find((f) => f.scope === 'student' && f.id === id && f.page)!;
  const at = new URL(feed.page!).pathname;
  const res = await requestFrom('127.0.0.1', `${bases[i]}${at}`);
  expect(res.status).toBe(200);
  const cookie = ([] as string[])
    .concat(res.headers['set-cookie'] ?? [])
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('rostercal_form='));
  return {
    id,
    path: at,
    cookie: cookie ?? '',
    csrf: /name="csrf" value="([^"]+)"/.exec(res.body)?.[1] ?? '',
    offered: [...res.body.matchAll(/name="session" value="(\d+)"/g)].map((m) => m[1]!),
  };
}

async function html(p: ChildPage, i = 0): Promise<string> {
  return (await requestFrom('127.0.0.1', `${bases[i]}${p.path}`)).body;
}

/** Children not used by another test, whose page offers at least `n` sessions (most first when `most`). */
const taken = new Set<Id>();
async function childWith(n: number): Promise<ChildPage> {
  for (const f of listing) {
    if (f.scope !== 'student' || taken.has(f.id)) continue;
    const p = await pageOf(f.id);
    if (p.offered.length < n) continue;
    taken.add(f.id);
    return p;
  }
  throw new Error(`no child left whose page offers ${n} sessions`);
}

/** A child (not used by another test) whose page offers a team's session: its attendance sheet is the coach's. */
async function childWithTeamSession(): Promise<{ p: ChildPage; session: string }> {
  for (const f of listing) {
    if (f.scope !== 'student' || taken.has(f.id)) continue;
    const p = await pageOf(f.id);
    for (const id of p.offered)
      if ((await store.records.get('hill', 'sessions', Number(id)))?.teams.length) {
        taken.add(f.id);
        return { p, session: id };
      }
  }
  throw new Error('no child left whose page offers a team’s session');
}

async function post(
  i: number,
  p: ChildPage,
  act: 'report' | 'undo',
  fields: Record<string, string>,
  from = '127.0.0.1',
): Promise<{ status: number; location: string; body: string; ms: number }> {
  const t0 = performance.now();
  const res = await requestFrom(from, `${bases[i]}${p.path}/absences${act === 'undo' ? '/undo' : ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: p.cookie },
    body: new URLSearchParams({ csrf: p.csrf, ...fields }).toString(),
  });
  return {
    status: res.status,
    location: String(res.headers.location ?? ''),
    body: res.body,
    ms: performance.now() - t0,
  };
}

const report = (i: number, p: ChildPage, session: string, from?: string) =>
  post(i, p, 'report', { session, student: String(p.id) }, from);

/** The sandbox's absences of a child that a calendar page reported. */
async function reportedUpstream(studentId: Id): Promise<{ id: Id; start: string }[]> {
  const out: { id: Id; start: string }[] = [];
  for await (const page of upstream.preExplainedAbsences({ studentIds: [studentId] }))
    for (const a of page.records) if (familyReportOf(a)) out.push(a);
  return out;
}

async function sheetOf(sessionId: Id, i = 0): Promise<string> {
  const session = (await store.records.get('hill', 'sessions', sessionId))!;
  const res = await fetch(
    `${bases[i]}/rosters/teams/${session.teams[0]!.id}.pdf?template=attendance-sheet&session=${sessionId}&school=hill`,
    { headers: { authorization: `Bearer ${ADMIN}` } },
  );
  expect(res.status).toBe(200);
  return (await pdfText(new Uint8Array(await res.arrayBuffer()))).replace(/\s+/g, ' ');
}

/** The lines a page shows for a session (what was reported, what is being confirmed, the offer). */
function sessionBlock(page: string, sessionId: string): string {
  return page.split(`id="session-${sessionId}"`)[1]?.split('</li>')[0] ?? '';
}

describe('two replicas on one PostgreSQL', () => {
  it('the same report sent to both at once makes one absence upstream; Undo leaves none', async () => {
    const p = await childWith(1);
    const session = p.offered[0]!;
    const answers = await Promise.all([report(0, p, session), report(1, p, session)]);
    for (const a of answers) expect(a.status, a.body).toBe(303);
    expect(await reportedUpstream(p.id)).toHaveLength(1);
    const absence = /data-absence="(\d+)"/.exec(sessionBlock(await html(p, 1), session))?.[1];
    expect(absence, 'the page offers Undo').toBeDefined();
    const undone = await post(1, p, 'undo', { absence: absence! });
    expect(undone.status, undone.body).toBe(303);
    expect(await reportedUpstream(p.id)).toHaveLength(0);
    const after = sessionBlock(await html(p, 0), session);
    expect(after).not.toContain('Reported');
    expect(after).toContain('Can’t make it?');
  }, 60_000);

  it(`eight reports at once for different sessions, with a limit of ${LIMIT}, make at most ${LIMIT}`, async () => {
    const p = await childWith(5);
    const sessions = p.offered.slice(0, 8);
    const answers = await Promise.all(sessions.map((s, k) => report(k % 2, p, s)));
    const made = await reportedUpstream(p.id);
    console.info(
      `${sessions.length} concurrent reports: ${answers.map((a) => a.status).join(' ')}; ${made.length} absences upstream`,
    );
    expect(made.length).toBeLessThanOrEqual(LIMIT);
    expect(answers.filter((a) => a.status === 303)).toHaveLength(made.length);
    for (const a of answers.filter((x) => x.status !== 303)) {
      expect(a.status).toBe(429);
      expect(a.body).toContain(`${LIMIT} absences have been reported for`);
    }
    // An undone report no longer counts: the next one is taken.
    const page = await html(p, 0);
    const absence = /data-absence="(\d+)"/.exec(page)![1]!;
    expect((await post(0, p, 'undo', { absence })).status).toBe(303);
    const left = sessions.find((s) => sessionBlock(page, s).includes('Can’t make it?'))!;
    const again = await report(1, p, left);
    expect(again.status, again.body).toBe(303);
    expect(await reportedUpstream(p.id)).toHaveLength(LIMIT);
  }, 60_000);
});

describe('when the upstream’s answer is lost, or it cannot be reached', () => {
  for (const mode of ['applied-502', 'applied-cut', 'applied-hang'] as const)
    it(`${mode}: the page says it could not confirm, then page and sheet show the truth within a minute`, async () => {
      const { p, session } = await childWithTeamSession();
      chaos.mode = mode;
      let r: Awaited<ReturnType<typeof report>>;
      try {
        r = await report(0, p, session);
      } finally {
        chaos.mode = 'pass';
      }
      console.info(`${mode}: answered ${r.status} in ${Math.round(r.ms)} ms`);
      expect(r.ms).toBeLessThan(10_000);
      expect(await reportedUpstream(p.id)).toHaveLength(1);
      // The page the family is sent back to (the settle step may already have found the report by then).
      expect(r.location).toContain('done=unconfirmed');
      const back = new URL(r.location);
      const words = (await requestFrom('127.0.0.1', `${bases[0]}${back.pathname}${back.search}`)).body;
      expect(words).toContain('could not confirm');
      expect(words).not.toContain('nothing was reported');
      // Never "Reported" beside a fresh offer, and no second absence from a retry.
      expect(sessionBlock(await html(p, 1), session)).not.toContain('Can’t make it?');
      expect((await report(1, p, session)).status).toBeLessThan(500);
      const t0 = performance.now();
      const settled = await untilValue(
        'the page showing the report',
        async () => {
          const block = sessionBlock(await html(p, 1), session);
          return block.includes('data-absence=') ? block : undefined;
        },
        60_000,
        500,
      );
      expect(settled).toContain('Reported');
      expect(await sheetOf(Number(session))).toContain('Family reported');
      console.info(`${mode}: settled on the page in ${Math.round(performance.now() - t0)} ms`);
      expect(await reportedUpstream(p.id)).toHaveLength(1);
    }, 120_000);

  for (const mode of ['cut', 'read-429'] as const)
    it(`${mode}: the family is answered within 10 s, told nothing was reported, and nothing was`, async () => {
      const p = await childWith(1);
      chaos.mode = mode;
      let r: Awaited<ReturnType<typeof report>>;
      try {
        r = await report(1, p, p.offered[0]!);
      } finally {
        chaos.mode = 'pass';
      }
      console.info(`${mode}: answered ${r.status} in ${Math.round(r.ms)} ms`);
      expect(r.ms).toBeLessThan(10_000);
      expect(r.status).toBeGreaterThanOrEqual(500);
      expect(r.body).toContain('nothing was reported');
      expect(await reportedUpstream(p.id)).toHaveLength(0);
      expect(sessionBlock(await html(p, 0), p.offered[0]!)).toContain('Can’t make it?');
    }, 120_000);
});
