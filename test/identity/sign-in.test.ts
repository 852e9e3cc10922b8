// Staff sign-in through a real OpenID provider (oidc-provider in-process), authorization code + PKCE, and what
// each role then reaches: own teams, 403 with no PDF bytes elsewhere, the medical sheet audited, refusals,
// sign-out ending the session, and throttling of failing clients only.
import { createHash } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StaffUser } from '../../src/domain/types.ts';
import type { DemoPerson } from '../../src/identity/demo-people.ts';
import { staffAccess } from '../../src/identity/roles.ts';
import { escapeHtml } from '../../src/util/html.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';
import { expectPdf } from '../support/pdf.ts';
import { freePort } from '../support/ports.ts';
import {
  browse,
  CookieJar,
  type StaffSite,
  signIn,
  startStaffSite,
  startTestIdp,
  type TestIdp,
} from './harness.ts';

const ADMIN_TOKEN = 'break-glass-admin-token-0123456789abcdef';

let h: Harness;
let idp: TestIdp;
let site: StaffSite;
let people: Record<
  'coach' | 'manager' | 'admin' | 'frozen' | 'stranger' | 'unverified' | 'coachOfActivity',
  DemoPerson
>;
let activityCoach: StaffUser;
let coachUser: StaffUser;
let managerUser: StaffUser;

const person = (u: StaffUser, role: DemoPerson['role'], over: Partial<DemoPerson> = {}): DemoPerson => ({
  id: String(u.id),
  email: u.email!,
  name: `${u.firstName} ${u.lastName}`,
  role,
  note: '',
  ...over,
});

/** Team ids on the "My teams" page, in order. */
const teamIdsOn = (html: string) => [...html.matchAll(/id="team-(\d+)"/g)].map((m) => Number(m[1]));

beforeAll(async () => {
  h = await startHarness();
  // Deactivate one coach upstream (PATCH /users activated:false), then pull: rostercal must refuse them.
  const before = await h.store.records.list('hill', 'staff');
  const teams = await h.store.records.list('hill', 'teams');
  const toFreeze = before.filter((s) => !s.isAdmin && !s.isManager && s.email).at(-1)!;
  const patched = await fetch(`${h.sandbox.url}/users`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${h.sandbox.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ users: [{ id: toFreeze.id, activated: false }] }),
  });
  expect(patched.status).toBe(200);
  await h.pull('full');
  const staff = await h.store.records.list('hill', 'staff');
  const live = staff.filter((s) => s.email && !s.frozen);
  coachUser = live.find((s) => !s.isAdmin && !s.isManager && staffAccess(s, teams).assignedTeamIds.size > 0)!;
  managerUser = live.find((s) => s.isManager && !s.isAdmin && s.activityIds.length > 0)!;
  // A coach with teams of their own and activity permissions that add others (the demo's Millie Hughes).
  activityCoach = live.find((s) => {
    if (s.isAdmin || s.isManager) return false;
    const a = staffAccess(s, teams);
    return (
      a.assignedTeamIds.size > 0 &&
      teams.some((t) => a.teamIds.has(t.id) && !a.assignedTeamIds.has(t.id) && !t.hidden)
    );
  })!;
  const adminUser = live.find((s) => s.isAdmin)!;
  const frozenUser = staff.find((s) => s.frozen && s.email)!;
  expect([coachUser, managerUser, adminUser, frozenUser, activityCoach].every(Boolean)).toBe(true);
  people = {
    // The provider sends the address in another case: matching is case-insensitive.
    coach: person(coachUser, 'staff', { email: coachUser.email!.toUpperCase() }),
    manager: person(managerUser, 'manager'),
    admin: person(adminUser, 'admin'),
    frozen: person(frozenUser, 'frozen'),
    stranger: { id: 'x1', email: 'someone@elsewhere.example', name: 'Some One', role: 'staff', note: '' },
    unverified: person(coachUser, 'staff', { id: 'x2', emailVerified: false }),
    coachOfActivity: person(activityCoach, 'staff'),
  };
  const port = await freePort();
  idp = await startTestIdp(Object.values(people), `http://127.0.0.1:${port}/auth/callback`);
  site = await startStaffSite(h, { port, idp, adminToken: ADMIN_TOKEN });
}, 120_000);

afterAll(async () => {
  await site?.close();
  await idp?.close();
  await h?.close();
});

/** How /staff names a person: first and last name from the directory, as the page escapes them. */
const signedInName = (u: StaffUser) => escapeHtml(`${u.firstName} ${u.lastName}`);

describe('sign-in with the school’s identity provider (code + PKCE)', () => {
  it('a coach signs in and sees exactly their teams, with sheets for upcoming sessions', async () => {
    const jar = new CookieJar();
    const page = await signIn(jar, site.url, people.coach.id);
    expect(page.res.status).toBe(200);
    expect(page.url).toBe(`${site.url}/staff`);
    // PKCE and state were used: the provider saw a code_challenge (openid-client always sends S256 here).
    const teams = await h.store.records.list('hill', 'teams');
    const access = staffAccess(coachUser, teams);
    const expected = teams
      .filter((t) => access.teamIds.has(t.id) && (!t.hidden || access.assignedTeamIds.has(t.id)))
      .map((t) => t.id)
      .sort((a, b) => a - b);
    expect(teamIdsOn(page.body).sort((a, b) => a - b)).toEqual(expected);
    // Their name (the school's directory) with their role after it, not the role alone.
    expect(page.body).toContain(`Signed in as ${signedInName(coachUser)}, coach.`);
    expect(page.body).not.toContain('Signed in as coach');
    expect(page.body).toMatch(/Attendance sheet · /);
    expect(page.body).not.toContain('Admin pages');

    const cookie = jar.get(site.url, 'rostercal_session');
    expect(cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Only the hash is stored.
    const stored = await h.store.access.listStaffSessions(new Date().toISOString());
    expect(stored.some((s) => s.email === coachUser.email!.toLowerCase())).toBe(true);
    expect(JSON.stringify(stored)).not.toContain(cookie);

    const audit = await h.store.access.listAudit({ actor: coachUser.email!, action: 'sign-in' });
    expect(audit[0]).toMatchObject({ schoolId: 'hill', detail: 'staff', clientAddress: expect.any(String) });
  });

  it('the provider’s sign-in page allows its styles by hash, never unsafe-inline, and signs in from there', async () => {
    const jar = new CookieJar();
    const picker = await browse(jar, `${site.url}/auth/login`);
    expect(picker.res.status).toBe(200);
    expect(picker.url).toMatch(new RegExp(`^${idp.issuer}/interaction/`));
    const csp = picker.res.headers.get('content-security-policy') ?? '';
    const directive = (name: string) =>
      csp
        .split(';')
        .map((d) => d.trim())
        .find((d) => d.startsWith(`${name} `)) ?? '';
    expect(csp).not.toContain('unsafe-inline');
    // Every stylesheet on the page is allowed by the hash of its very bytes, and no element carries a style.
    const styles = [...picker.body.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
    expect(styles.length).toBeGreaterThan(0);
    for (const style of styles)
      expect(directive('style-src')).toContain(
        `'sha256-${createHash('sha256').update(style).digest('base64')}'`,
      );
    expect(picker.body).not.toMatch(/\sstyle=/);
    // A pick posts to the provider, which redirects to rostercal's callback (another origin here): both allowed.
    expect(directive('form-action')).toBe(`form-action 'self' ${new URL(site.url).origin}`);
    const action = /action="([^"]*\/interaction\/[^"]+\/login)"/.exec(picker.body)?.[1];
    expect(action).toBeDefined();
    const landed = await browse(jar, new URL(action!, picker.url).href, {
      method: 'POST',
      body: new URLSearchParams({ account: people.coach.id }),
    });
    expect(landed.url).toBe(`${site.url}/staff`);
    expect(landed.body).toContain(`Signed in as ${signedInName(coachUser)}, coach.`);

    // The provider's error page is on the same layout and policy.
    const error = await fetch(`${idp.issuer}/auth?client_id=nobody&response_type=code&scope=openid`);
    expect(error.status).toBe(400);
    expect(error.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    expect(await error.text()).toMatch(/<h1>Demo sign-in<\/h1>[\s\S]*Start again/);
  });

  it('another team’s roster is 403 with no PDF bytes; an own team’s medical sheet is 200 and audited', async () => {
    const jar = new CookieJar();
    await signIn(jar, site.url, people.coach.id);
    const teams = await h.store.records.list('hill', 'teams');
    const access = staffAccess(coachUser, teams);
    const other = teams.find((t) => !access.teamIds.has(t.id))!;
    const refused = await browse(jar, `${site.url}/rosters/teams/${other.id}.pdf?template=team-roster`);
    expect(refused.res.status).toBe(403);
    expect(refused.body).not.toContain('%PDF');
    expect(refused.body).not.toContain(other.name);
    expect(refused.body).not.toContain(other.students[0]?.lastName ?? '@@');

    const own = [...access.assignedTeamIds][0]!;
    const res = await fetch(`${site.url}/rosters/teams/${own}.pdf?template=medical-and-guardian-contacts`, {
      headers: { cookie: jar.header(site.url) },
    });
    expect(res.status).toBe(200);
    expectPdf(await res.arrayBuffer());
    const [record] = await h.store.access.listAudit({ actor: coachUser.email!, teamId: own });
    expect(record).toMatchObject({
      action: 'roster',
      actor: coachUser.email!.toLowerCase(),
      schoolId: 'hill',
      teamId: own,
      template: 'medical-and-guardian-contacts',
    });
    expect(record!.staffSession).toMatch(/^[0-9a-f]{12}$/);
  });

  it('a team visible only through an activity permission: its roster yes, its medical sheet 403 (default roles)', async () => {
    // The coach of an activity (chosen in beforeAll for having such teams), not one who may have none.
    const jar = new CookieJar();
    await signIn(jar, site.url, people.coachOfActivity.id);
    const access = staffAccess(activityCoach, await h.store.records.list('hill', 'teams'));
    const viaActivity = [...access.teamIds].find((id) => !access.assignedTeamIds.has(id));
    expect(viaActivity, 'a team seen only through an activity permission').toBeDefined();
    const roster = await fetch(`${site.url}/rosters/teams/${viaActivity}.pdf?template=team-roster`, {
      headers: { cookie: jar.header(site.url) },
    });
    expect(roster.status).toBe(200);
    expectPdf(await roster.arrayBuffer());
    const medical = await fetch(
      `${site.url}/rosters/teams/${viaActivity}.pdf?template=medical-and-guardian-contacts`,
      { headers: { cookie: jar.header(site.url) } },
    );
    expect(medical.status).toBe(403);
    expect(Buffer.from(await medical.arrayBuffer()).includes('%PDF')).toBe(false);
  });

  it('a coach whose activities add teams sees their own teams first, under headings that say which are which', async () => {
    const jar = new CookieJar();
    const page = await signIn(jar, site.url, people.coachOfActivity.id);
    const access = staffAccess(activityCoach, await h.store.records.list('hill', 'teams'));
    const ids = teamIdsOn(page.body);
    const own = ids.filter((id) => access.assignedTeamIds.has(id));
    expect(own.length).toBe(access.assignedTeamIds.size);
    const yours = page.body.indexOf(`<h2 class="group">Your teams (${own.length})</h2>`);
    const others = page.body.indexOf(
      `<h2 class="group">Other teams of your activities (${ids.length - own.length})</h2>`,
    );
    expect(yours, 'heading of own teams').toBeGreaterThan(-1);
    expect(others, 'heading of the activities’ teams').toBeGreaterThan(yours);
    for (const id of ids) {
      const at = page.body.indexOf(`id="team-${id}"`);
      if (access.assignedTeamIds.has(id)) {
        expect(at).toBeGreaterThan(yours);
        expect(at).toBeLessThan(others);
      } else expect(at).toBeGreaterThan(others);
    }
  });

  it('a manager sees the teams of their activities; an admin finds every team', async () => {
    const jar = new CookieJar();
    const page = await signIn(jar, site.url, people.manager.id);
    const teams = await h.store.records.list('hill', 'teams');
    const access = staffAccess(managerUser, teams);
    expect(teamIdsOn(page.body).length).toBeGreaterThan(0);
    for (const id of teamIdsOn(page.body)) expect(access.teamIds.has(id)).toBe(true);
    const ofActivity = teams.filter((t) => managerUser.activityIds.includes(t.activity.id) && !t.hidden);
    for (const t of ofActivity) expect(teamIdsOn(page.body)).toContain(t.id);
    expect(page.body).toContain(`Signed in as ${signedInName(managerUser)}, manager.`);
    // Not the admin pages.
    expect((await browse(jar, `${site.url}/admin`)).res.status).toBe(403);

    const admin = new CookieJar();
    const home = await signIn(admin, site.url, people.admin.id);
    expect(home.body).toContain(`Find a team (${teams.length} teams)`);
    const target = teams.find((t) => !t.hidden)!;
    const found = await browse(admin, `${site.url}/staff?q=${encodeURIComponent(target.name)}`);
    expect(teamIdsOn(found.body)).toContain(target.id);
    expect((await browse(admin, `${site.url}/admin`)).res.status).toBe(200);
    const pdf = await fetch(`${site.url}/rosters/teams/${target.id}.pdf?template=team-roster`, {
      headers: { cookie: admin.header(site.url) },
    });
    expect(pdf.status).toBe(200);
  });

  it('refuses a frozen upstream user, an unknown address and an unverified one, saying why and whom to ask', async () => {
    const frozen = await signIn(new CookieJar(), site.url, people.frozen.id);
    expect(frozen.res.status).toBe(403);
    expect(frozen.body).toContain('deactivated');
    expect(frozen.body).toMatch(/ask/i);
    const stranger = await signIn(new CookieJar(), site.url, people.stranger.id);
    expect(stranger.res.status).toBe(403);
    expect(stranger.body).toContain('someone@elsewhere.example');
    expect(stranger.body).toContain('no member of staff');
    const unverified = await signIn(new CookieJar(), site.url, people.unverified.id);
    expect(unverified.res.status).toBe(401);
    expect(unverified.body).toContain('not verified');
    const refusals = await h.store.access.listAudit({ action: 'sign-in-refused' });
    expect(refusals.map((r) => r.detail)).toEqual(expect.arrayContaining(['frozen', 'unknown']));
  });

  it('after sign-out the old cookie opens nothing; sign-out needs the CSRF token', async () => {
    const jar = new CookieJar();
    const page = await signIn(jar, site.url, people.coach.id);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const oldCookie = jar.header(site.url);
    const forged = await browse(jar, `${site.url}/auth/logout`, {
      method: 'POST',
      body: new URLSearchParams({}),
    });
    expect(forged.res.status).toBe(403);
    expect((await browse(jar, `${site.url}/staff`)).res.status).toBe(200);

    const out = await browse(jar, `${site.url}/auth/logout`, {
      method: 'POST',
      body: new URLSearchParams({ csrf }),
    });
    expect(out.url).toBe(`${site.url}/auth/signed-out`);
    const again = await fetch(`${site.url}/staff`, {
      headers: { cookie: oldCookie, accept: 'text/html' },
      redirect: 'manual',
    });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe('/auth/login?returnTo=%2Fstaff');
    const pdf = await fetch(`${site.url}/rosters/teams/1.pdf`, { headers: { cookie: oldCookie } });
    expect(pdf.status).toBe(401);
  });

  it('returnTo may only be a local path', async () => {
    for (const bad of [
      'https://evil.example/x',
      '//evil.example/x',
      '/\\evil.example',
      'javascript:alert(1)',
    ]) {
      const page = await signIn(new CookieJar(), site.url, people.coach.id, bad);
      expect(page.url).toBe(`${site.url}/staff`);
    }
    const page = await signIn(new CookieJar(), site.url, people.coach.id, '/staff?q=x');
    expect(page.url).toBe(`${site.url}/staff?q=x`);
  });

  it('an admin ends every session of a person; the person is refused at once', async () => {
    const coach = new CookieJar();
    await signIn(coach, site.url, people.coach.id);
    const admin = new CookieJar();
    const page = await signIn(admin, site.url, people.admin.id, '/admin/sessions');
    expect(page.body).toContain(coachUser.email!.toLowerCase());
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const ended = await browse(admin, `${site.url}/admin/sessions/end`, {
      method: 'POST',
      body: new URLSearchParams({ csrf, email: coachUser.email! }),
    });
    expect(ended.body).toMatch(/\d+ sessions? of/);
    const after = await fetch(`${site.url}/rosters/teams/1.pdf`, {
      headers: { cookie: coach.header(site.url) },
    });
    expect(after.status).toBe(401);
    const audit = await browse(
      admin,
      `${site.url}/admin/audit?person=${encodeURIComponent(people.admin.email)}`,
    );
    expect(audit.body).toContain('sessions-ended');
    // A team filter that is not an id (a team's name typed in) is refused, not silently ignored (every record).
    const byName = await browse(admin, `${site.url}/admin/audit?team=Senior%20Football`);
    expect(byName.res.status).toBe(400);
    expect(byName.body).toContain('is not a team id: choose the team by name under Team');
  });
});

/** A request from a given loopback source address (the server sees it as the client address). */
function requestFrom(localAddress: string, url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { localAddress, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}

describe('ADMIN_TOKEN as a bearer token', () => {
  it('a roster of a school that does not exist says so (404), not "name the school"', async () => {
    const team = (await h.store.records.list('hill', 'teams'))[0]!;
    const res = await fetch(`${site.url}/rosters/teams/${team.id}.pdf?template=team-roster&school=nope`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(404);
    expect((await res.text()).trim()).toBe('unknown school "nope"');
  });
  it('50 wrong tokens from one address are throttled; the right token from another address still works', async () => {
    const team = (await h.store.records.list('hill', 'teams'))[0]!;
    const url = `${site.url}/rosters/teams/${team.id}.pdf?template=team-roster`;
    const statuses: number[] = [];
    const start = performance.now();
    for (let i = 0; i < 50; i++)
      statuses.push(
        await requestFrom('127.0.0.2', url, { authorization: `Bearer wrong-${i}-${'x'.repeat(30)}` }),
      );
    const seconds = (performance.now() - start) / 1000;
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    // Ten failures at once, one forgiven every 6 s: however long the loop took on a loaded machine, no more
    // got through than those seconds forgive.
    const heard = statuses.filter((s) => s !== 429).length;
    expect(heard, `${seconds.toFixed(1)} s`).toBeLessThanOrEqual(10 + Math.ceil(seconds / 6));
    // The attacker's address is throttled even with the right token now…
    expect(await requestFrom('127.0.0.2', url, { authorization: `Bearer ${ADMIN_TOKEN}` })).toBe(429);
    // …but nobody else is.
    expect(await requestFrom('127.0.0.3', url, { authorization: `Bearer ${ADMIN_TOKEN}` })).toBe(200);
    const [rec] = await h.store.access.listAudit({ actor: 'admin token', teamId: team.id });
    expect(rec).toMatchObject({ action: 'roster', template: 'team-roster', clientAddress: '127.0.0.3' });
  });
});
