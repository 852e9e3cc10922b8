// Two replicas of `rostercal serve` (real child processes) on one PostgreSQL share staff sessions: a coach signs
// in on one, the same cookie works on the other, signing out on the other ends the session on the first at once.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffAccess } from '../../src/identity/roles.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import { type Child, rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { expectPdf } from '../support/pdf.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { freePort } from '../support/ports.ts';
import { browse, CookieJar, signIn, startTestIdp, type TestIdp } from './harness.ts';

let sandbox: Sandbox;
let db: TestDatabase;
let store: Store;
let idp: TestIdp;
let dirs: string[] = [];
const replicas: Child[] = [];
let a: string;
let b: string;

beforeAll(async () => {
  sandbox = await startWeekSandbox({ seed: 9, scale: 'small' });
  db = await createTestDatabase();
  const [portA, portB] = [await freePort(), await freePort()];
  a = `http://127.0.0.1:${portA}`;
  b = `http://127.0.0.1:${portB}`;
  const coaches = sandbox.school.users.filter((u) => !u.isAdmin && !u.isManager && !u.frozen && u.email);
  idp = await startTestIdp(
    coaches.map((u) => ({
      id: String(u.id),
      email: u.email,
      name: `${u.firstName} ${u.lastName}`,
      role: 'staff' as const,
      note: '',
    })),
    // Behind one load balancer both replicas answer at the same public address: here, A's.
    `${a}/auth/callback`,
  );
  dirs = [
    await mkdtemp(path.join(tmpdir(), 'rostercal-replica-a-')),
    await mkdtemp(path.join(tmpdir(), 'rostercal-replica-b-')),
  ];
  const env = (port: number, dir: string) => ({
    ...schoolEnv(sandbox, { DATABASE_URL: db.url, DATA_DIR: dir }),
    PORT: String(port),
    PUBLIC_URL: a,
    FEED_SECRET: 'replicas-share-this-feed-secret-0123456789',
    OIDC_ISSUER: idp.issuer,
    OIDC_CLIENT_ID: idp.clientId,
    OIDC_CLIENT_SECRET: idp.clientSecret,
  });
  // One after the other: the first pulls the school, the second finds it pulled.
  for (const [port, dir] of [
    [portA, dirs[0]!],
    [portB, dirs[1]!],
  ] as const) {
    const child = rostercal(['serve'], env(port, dir));
    replicas.push(child);
    await child.waitFor(/Stop with Ctrl-C/, 90_000);
  }
  store = await openStore({ databaseUrl: db.url, poolSize: 2 });
}, 200_000);

afterAll(async () => {
  for (const r of replicas) r.proc.kill('SIGTERM');
  await Promise.all(replicas.map((r) => r.exit));
  await store?.close();
  await idp?.close();
  await db?.drop();
  await sandbox?.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('two replicas on PostgreSQL', () => {
  it('share sessions: signed in on one, used on the other; signed out on the other, refused on the first', async () => {
    const teams = await store.records.list('hillcrest', 'teams');
    const staff = await store.records.list('hillcrest', 'staff');
    const coach = staff.find(
      (s) =>
        s.email && !s.frozen && !s.isAdmin && !s.isManager && staffAccess(s, teams).assignedTeamIds.size > 0,
    )!;
    const own = [...staffAccess(coach, teams).assignedTeamIds][0]!;
    const roster = `/rosters/teams/${own}.pdf?template=team-roster&school=hillcrest`;

    const jar = new CookieJar();
    const landed = await signIn(jar, a, String(coach.id));
    expect(landed.url).toBe(`${a}/staff`);
    expect(landed.res.status).toBe(200);
    const cookie = jar.get(a, 'rostercal_session')!;
    expect(cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // The same browser session reaches replica B (as a load balancer would send it there).
    jar.set(b, 'rostercal_session', cookie);
    const onB = await browse(jar, `${b}/staff`);
    expect(onB.res.status).toBe(200);
    expect(onB.url).toBe(`${b}/staff`);
    expect(onB.body).toContain(`id="team-${own}"`);
    const pdfOnB = await fetch(`${b}${roster}`, { headers: { cookie: `rostercal_session=${cookie}` } });
    expect(pdfOnB.status).toBe(200);
    expectPdf(await pdfOnB.arrayBuffer());

    // Sign out on B (the form's CSRF token is on B's page)…
    const csrf = /name="csrf" value="([^"]+)"/.exec(onB.body)![1]!;
    const out = await fetch(`${b}/auth/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: `rostercal_session=${cookie}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf }),
    });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/auth/signed-out');

    // …and A refuses the old cookie at once: no page, no PDF.
    const staffOnA = await fetch(`${a}/staff`, {
      redirect: 'manual',
      headers: { cookie: `rostercal_session=${cookie}`, accept: 'text/html' },
    });
    expect(staffOnA.status).toBe(303);
    expect(staffOnA.headers.get('location')).toMatch(/^\/auth\/login\?returnTo=/);
    const pdfOnA = await fetch(`${a}${roster}`, { headers: { cookie: `rostercal_session=${cookie}` } });
    expect(pdfOnA.status).toBe(401);
    expect(pdfOnA.headers.get('content-type')).not.toMatch(/pdf/);
  });
});
