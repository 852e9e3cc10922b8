// The real `rostercal serve` as a child process: a short ADMIN_TOKEN or a wrong identity-provider setting stops
// start-up (exit 2, the field named, nothing secret printed); OIDC_* from the environment reach the running
// server, and a member of staff signs in through that provider (code + PKCE) and lands on "My teams".
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffAccess } from '../../src/identity/roles.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import { escapeHtml } from '../../src/util/html.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { expectPdf } from '../support/pdf.ts';
import { downUpstream, freePort } from '../support/ports.ts';
import { browse, CookieJar, signIn, startTestIdp, type TestIdp } from './harness.ts';

let sandbox: Sandbox;
let dir: string;
beforeAll(async () => {
  sandbox = await startWeekSandbox({ seed: 5, scale: 'small' });
  dir = await mkdtemp(path.join(tmpdir(), 'rostercal-serve-auth-'));
});
afterAll(async () => {
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('rostercal serve: start-up checks of staff access', () => {
  it('an ADMIN_TOKEN of 10 characters is refused at start-up (exit 2), naming the variable, not its value', async () => {
    const child = rostercal(['serve'], {
      ...schoolEnv(sandbox, { DATA_DIR: dir }),
      PORT: String(await freePort()),
      ADMIN_TOKEN: 'tenchars10',
    });
    expect(await child.exit, child.output()).toBe(2);
    expect(child.output()).toMatch(/config: ADMIN_TOKEN: is 10 characters long; .*at least 32/);
    expect(child.output()).not.toContain('tenchars10');
  });

  it('an http issuer on a LAN name, or half the OIDC_* set, is refused at start-up naming the variable', async () => {
    const base = { ...schoolEnv(sandbox, { DATA_DIR: dir }), PORT: String(await freePort()) };
    const lan = rostercal(['serve'], {
      ...base,
      OIDC_ISSUER: 'http://idp.school.lan',
      OIDC_CLIENT_ID: 'rostercal',
      OIDC_CLIENT_SECRET: 'client-secret-value',
    });
    expect(await lan.exit, lan.output()).toBe(2);
    expect(lan.output()).toMatch(/config: OIDC_ISSUER: must be an https URL/);
    expect(lan.output()).not.toContain('client-secret-value');
    const partial = rostercal(['serve'], { ...base, OIDC_ISSUER: 'https://accounts.google.com' });
    expect(await partial.exit, partial.output()).toBe(2);
    expect(partial.output()).toMatch(/config: OIDC_CLIENT_ID: is not set, but OIDC_ISSUER is/);
    expect(partial.output()).toMatch(/config: OIDC_CLIENT_SECRET: is not set/);
  });
});

describe('rostercal serve with an identity provider that cannot be reached', () => {
  it('starts anyway, says so in one line, retries, and sign-in answers 503 saying why', async () => {
    const port = await freePort();
    const nobody = `${(await downUpstream()).url}/`;
    const child = rostercal(['serve'], {
      ...schoolEnv(sandbox, { DATA_DIR: dir }),
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      OIDC_ISSUER: nobody,
      OIDC_CLIENT_ID: 'rostercal',
      OIDC_CLIENT_SECRET: 'client-secret-value',
    });
    try {
      await child.waitFor(/Stop with Ctrl-C/, 90_000);
      await child.waitFor(/cannot reach the identity provider/, 30_000);
      const lines = child
        .output()
        .split('\n')
        .filter((l) => l.includes('cannot reach the identity provider'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^rostercal: sign-in: cannot reach the identity provider /);
      expect(lines[0]).toContain(`${nobody} (`);
      expect(lines[0]).toMatch(/retrying every \d+ s at most/);
      const login = await fetch(`http://127.0.0.1:${port}/auth/login`, { redirect: 'manual' });
      expect(login.status).toBe(503);
      expect(await login.text()).toContain('cannot be reached right now');
      expect(child.proc.exitCode).toBeNull();
      expect(child.output()).not.toContain('client-secret-value');
    } finally {
      child.proc.kill('SIGTERM');
      await child.exit;
    }
  }, 120_000);
});

describe('rostercal serve with OIDC_* in the environment', () => {
  let idp: TestIdp | undefined;
  afterAll(async () => {
    await idp?.close();
  });

  it('signs a member of staff in through that provider and lands on My teams', async () => {
    const port = await freePort();
    const site = `http://127.0.0.1:${port}`;
    const admin = sandbox.school.users.find((u) => u.isAdmin && !u.frozen && u.email)!;
    idp = await startTestIdp(
      [
        {
          id: String(admin.id),
          email: admin.email,
          name: `${admin.firstName} ${admin.lastName}`,
          role: 'admin',
          note: '',
        },
      ],
      `${site}/auth/callback`,
    );
    // Audit records either side of the retention (default 400 days): serve prunes at start, then daily.
    const day = 86_400_000;
    const before = await openStore({ dataDir: dir });
    for (const [days, detail] of [
      [401, 'past retention'],
      [399, 'within retention'],
    ] as const)
      await before.access.appendAudit({
        at: new Date(Date.now() - days * day).toISOString(),
        action: 'sign-in-refused',
        actor: 'someone@example.org',
        schoolId: null,
        teamId: null,
        sessionId: null,
        template: null,
        clientAddress: null,
        staffSession: null,
        detail,
      });
    await before.close();
    const child = rostercal(['serve'], {
      ...schoolEnv(sandbox, { DATA_DIR: dir }),
      PORT: String(port),
      PUBLIC_URL: site,
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: idp.clientId,
      OIDC_CLIENT_SECRET: idp.clientSecret,
    });
    try {
      await child.waitFor(/Stop with Ctrl-C/, 90_000);
      expect(child.output()).not.toContain(idp.clientSecret);
      const jar = new CookieJar();
      const landed = await signIn(jar, site, String(admin.id));
      expect(landed.url).toBe(`${site}/staff`);
      expect(landed.res.status).toBe(200);
      expect(landed.body).toContain(
        `Signed in as ${escapeHtml(`${admin.firstName} ${admin.lastName}`)}, administrator.`,
      );
      expect(jar.get(site, 'rostercal_session')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(child.output()).toContain(`staff:   ${site}/auth/login  (or ${site}/staff), through 127.0.0.1:`);
      const after = await openStore({ dataDir: dir });
      const kept = (await after.access.listAudit({ actor: 'someone@example.org' })).map((r) => r.detail);
      await after.close();
      expect(kept).toEqual(['within retention']);
      // The demo's identity provider exists only in demo mode.
      expect((await fetch(`${site}/demo-idp/.well-known/openid-configuration`)).status).toBe(404);
    } finally {
      child.proc.kill('SIGTERM');
      await child.exit;
    }
  }, 120_000);
});

describe('npm start (rostercal serve --demo)', () => {
  it('names the demo staff and how to sign in, prints no admin token, and a demo coach signs in', async () => {
    const demoDir = await mkdtemp(path.join(tmpdir(), 'rostercal-demo-'));
    const port = await freePort();
    const site = `http://localhost:${port}`;
    const child = rostercal(['serve', '--demo'], { DATA_DIR: demoDir, PORT: String(port) });
    try {
      await child.waitFor(/Stop with Ctrl-C/, 110_000);
      const out = child.stdout();
      expect(out).toContain(`staff:   ${site}/staff  (sign-in: ${site}/auth/login)`);
      const roles = [...out.matchAll(/^ {13}(admin|manager|coach|deactivated) +(\S.*?) {2,}/gm)];
      expect(roles.map((m) => m[1])).toEqual(['admin', 'manager', 'coach', 'coach', 'deactivated']);
      expect(out).toContain(`admin:   ${site}/admin  (admins only)`);
      expect(out).not.toMatch(/token:/i);
      // No promised duration ("about half a minute" for a pull of seconds): how long it took, measured.
      expect(out).not.toMatch(/half a minute/);
      expect(out).toMatch(/demo: last pull succeeded \(full, started \S+, took \d+\.\d s\)/);
      // The first coach of the banner, picked at the demo's provider, lands on their teams.
      const coach = roles[2]![2]!;
      const jar = new CookieJar();
      const picker = await fetch(`${site}/auth/login`, { redirect: 'manual' });
      expect(picker.status).toBe(303);
      expect(picker.headers.get('location')).toMatch(new RegExp(`^${site}/demo-idp/`));
      const pickerPage = await signInAs(jar, site, coach);
      expect(pickerPage.url).toBe(`${site}/staff`);
      expect(pickerPage.body).toContain(coach);
      expect(pickerPage.body).not.toContain('Signed in as administrator');
    } finally {
      child.proc.kill('SIGTERM');
      await child.exit;
      await rm(demoDir, { recursive: true, force: true });
    }
  }, 150_000);
});

/** Signs in at the demo provider by the name shown on its picker (as a newcomer would, reading the banner). */
async function signInAs(jar: CookieJar, site: string, name: string) {
  const picker = await browse(jar, `${site}/auth/login`);
  const forms = [
    ...picker.body.matchAll(
      /<form method="post" action="([^"]+)"><input type="hidden" name="account" value="([^"]+)"><button type="submit"><strong>([^<]+)<\/strong>/g,
    ),
  ];
  const fromHtml = (t: string) => t.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)));
  const form = forms.find((f) => fromHtml(f[3]!) === name);
  if (!form) throw new Error(`no ${name} on the demo picker: ${picker.body.slice(0, 500)}`);
  return browse(jar, new URL(form[1]!, picker.url).href, {
    method: 'POST',
    body: new URLSearchParams({ account: form[2]! }),
  });
}

describe('rostercal serve with auth in the config file', () => {
  it('sensitiveRoles ["admin"]: a coach gets their team roster but not its medical sheet; helpContact is named', async () => {
    const fileDir = await mkdtemp(path.join(tmpdir(), 'rostercal-auth-file-'));
    const port = await freePort();
    const site = `http://127.0.0.1:${port}`;
    const coaches = sandbox.school.users.filter((u) => !u.isAdmin && !u.isManager && !u.frozen && u.email);
    const fileIdp = await startTestIdp(
      [
        ...coaches.map((u) => ({
          id: String(u.id),
          email: u.email,
          name: `${u.firstName} ${u.lastName}`,
          role: 'staff' as const,
          note: '',
        })),
        { id: 'stranger', email: 'someone@elsewhere.example', name: 'Some One', role: 'staff', note: '' },
      ],
      `${site}/auth/callback`,
    );
    const config = path.join(fileDir, 'rostercal.json');
    await writeFile(
      config,
      JSON.stringify({
        publicUrl: site,
        port,
        dataDir: fileDir,
        schools: [
          {
            id: 'hillcrest',
            name: 'Hillcrest College',
            upstream: { url: sandbox.url, token: 'env:SANDBOX_TOKEN' },
            timeZone: 'Australia/Sydney',
            rosters: { sensitive: true },
          },
        ],
        auth: {
          oidc: { issuer: fileIdp.issuer, clientId: fileIdp.clientId, clientSecret: 'env:IDP_SECRET' },
          sensitiveRoles: ['admin'],
          helpContact: 'the IT office (it@hillcrest.example.edu)',
        },
      }),
    );
    const child = rostercal(['serve'], {
      ROSTERCAL_CONFIG: config,
      SANDBOX_TOKEN: sandbox.token,
      IDP_SECRET: fileIdp.clientSecret,
    });
    try {
      await child.waitFor(/Stop with Ctrl-C/, 90_000);
      const store = await openStore({ dataDir: fileDir });
      const teams = await store.records.list('hillcrest', 'teams');
      const staff = await store.records.list('hillcrest', 'staff');
      await store.close();
      const coach = staff.find(
        (u) =>
          !u.isAdmin &&
          !u.isManager &&
          !u.frozen &&
          u.email &&
          staffAccess(u, teams).assignedTeamIds.size > 0,
      )!;
      const own = [...staffAccess(coach, teams).assignedTeamIds][0]!;

      const jar = new CookieJar();
      const landed = await signIn(jar, site, String(coach.id));
      expect(landed.url).toBe(`${site}/staff`);
      // Not offered on "My teams", and refused when asked for anyway.
      expect(landed.body).not.toContain('template=medical-and-guardian-contacts');
      const cookie = { cookie: `rostercal_session=${jar.get(site, 'rostercal_session')}` };
      const medical = await fetch(
        `${site}/rosters/teams/${own}.pdf?template=medical-and-guardian-contacts&school=hillcrest`,
        { headers: cookie },
      );
      expect(medical.status).toBe(403);
      const refusal = Buffer.from(await medical.arrayBuffer());
      expect(refusal.includes('%PDF')).toBe(false);
      const roster = await fetch(`${site}/rosters/teams/${own}.pdf?template=team-roster&school=hillcrest`, {
        headers: cookie,
      });
      expect(roster.status).toBe(200);
      expectPdf(await roster.arrayBuffer());

      const stranger = await signIn(new CookieJar(), site, 'stranger');
      expect(stranger.res.status).toBe(403);
      expect(stranger.body).toContain('Ask the IT office (it@hillcrest.example.edu).');
    } finally {
      child.proc.kill('SIGTERM');
      await child.exit;
      await fileIdp.close();
      await rm(fileDir, { recursive: true, force: true });
    }
  }, 150_000);
});

describe('rostercal serve with several schools', () => {
  it('a person sees the schools where they are staff, and nothing of the others', async () => {
    const other = await startWeekSandbox({ seed: 6, scale: 'small' });
    const multiDir = await mkdtemp(path.join(tmpdir(), 'rostercal-multi-'));
    const port = await freePort();
    const site = `http://127.0.0.1:${port}`;
    const elsewhere = new Set(other.school.users.map((u) => u.email.toLowerCase()));
    const coach = sandbox.school.users.find(
      (u) => !u.isAdmin && !u.isManager && !u.frozen && u.email && !elsewhere.has(u.email.toLowerCase()),
    )!;
    const multiIdp = await startTestIdp(
      [
        {
          id: String(coach.id),
          email: coach.email,
          name: `${coach.firstName} ${coach.lastName}`,
          role: 'staff',
          note: '',
        },
      ],
      `${site}/auth/callback`,
    );
    const school = (id: string, name: string, box: Sandbox) => ({
      id,
      name,
      upstream: { url: box.url, token: box.token },
      timeZone: 'Australia/Sydney',
    });
    const config = path.join(multiDir, 'rostercal.json');
    await writeFile(
      config,
      JSON.stringify({
        publicUrl: site,
        port,
        dataDir: multiDir,
        // North and South read the same upstream (the coach is staff of both); East is another school.
        schools: [
          school('north', 'North Campus', sandbox),
          school('south', 'South Campus', sandbox),
          school('east', 'East College', other),
        ],
        auth: {
          oidc: { issuer: multiIdp.issuer, clientId: multiIdp.clientId, clientSecret: multiIdp.clientSecret },
        },
      }),
    );
    const child = rostercal(['serve'], { ROSTERCAL_CONFIG: config });
    try {
      await child.waitFor(/Stop with Ctrl-C/, 120_000);
      const jar = new CookieJar();
      const landed = await signIn(jar, site, String(coach.id));
      expect(landed.url).toBe(`${site}/staff`);
      expect([...landed.body.matchAll(/<h1>([^<]+)<\/h1>/g)].map((m) => m[1])).toEqual([
        'North Campus',
        'South Campus',
      ]);
      // North and South number their teams alike (one upstream): every card's anchor is still unique.
      const anchors = [...landed.body.matchAll(/<section class="card" id="([^"]+)"/g)].map((m) => m[1]!);
      expect(new Set(anchors).size).toBe(anchors.length);
      const teams = anchors.filter((a) => a.startsWith('team-'));
      expect(teams.length).toBeGreaterThan(1);
      expect(teams.filter((a) => a.startsWith('team-north-')).length).toBe(teams.length / 2);
      const eastTeam = other.school.teams[0]!;
      const refused = await fetch(
        `${site}/rosters/teams/${eastTeam.id}.pdf?template=team-roster&school=east`,
        {
          headers: { cookie: `rostercal_session=${jar.get(site, 'rostercal_session')}` },
        },
      );
      expect(refused.status).toBe(403);
      expect(await refused.text()).not.toContain('%PDF');
    } finally {
      child.proc.kill('SIGTERM');
      await child.exit;
      await multiIdp.close();
      await other.close();
      await rm(multiDir, { recursive: true, force: true });
    }
  }, 180_000);
});
