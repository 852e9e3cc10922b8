// Staff access as issue 25 tried it from outside, over HTTP: a session opened with ADMIN_TOKEN ends when the token
// changes or goes (on every server, each checking its own ADMIN_TOKEN); refused roster requests are audited; a
// refusal names nothing the requester may not see, and "not yours" answers as "does not exist"; the sign-in
// callback never shows the provider's (or an attacker's) text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StaffUser } from '../../src/domain/types.ts';
import { staffAccess } from '../../src/identity/roles.ts';
import type { Stored } from '../../src/store/types.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';
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

const TOKEN = 'staff-access-admin-token-0123456789abcdef';
const CHANGED = 'staff-access-changed-admin-token-0123456789';

let h: Harness;
let idp: TestIdp;
let site: StaffSite;
let coach: StaffUser;
let ownTeam: number;
let otherTeam: number;
let otherSession: Stored<'sessions'>;
const sites: StaffSite[] = [];

async function another(adminToken: string | null): Promise<StaffSite> {
  const s = await startStaffSite(h, { port: await freePort(), idp: null, adminToken });
  sites.push(s);
  return s;
}

beforeAll(async () => {
  h = await startHarness();
  const staff = await h.store.records.list('hill', 'staff');
  const teams = await h.store.records.list('hill', 'teams');
  coach = staff.find(
    (s) =>
      s.email && !s.frozen && !s.isAdmin && !s.isManager && staffAccess(s, teams).assignedTeamIds.size > 0,
  )!;
  const access = staffAccess(coach, teams);
  ownTeam = [...access.assignedTeamIds][0]!;
  const sessions = await h.store.records.listSessions('hill', {
    from: new Date(Date.parse(String(h.sandbox.now())) - 60 * 86_400_000).toISOString(),
    to: new Date(Date.parse(String(h.sandbox.now())) + 365 * 86_400_000).toISOString(),
  });
  otherSession = sessions.find((s) => s.teams.length > 0 && s.teams.every((t) => !access.teamIds.has(t.id)))!;
  otherTeam = otherSession.teams[0]!.id;
  const port = await freePort();
  idp = await startTestIdp(
    [{ id: String(coach.id), email: coach.email!, name: coach.firstName, role: 'staff', note: '' }],
    `http://127.0.0.1:${port}/auth/callback`,
  );
  site = await startStaffSite(h, { port, idp, adminToken: TOKEN });
  sites.push(site);
}, 120_000);

afterAll(async () => {
  for (const s of sites) await s.close();
  await idp?.close();
  await h?.close();
});

describe('a session opened with ADMIN_TOKEN at /admin/login', () => {
  it('ends at once when the token changes or goes, on every server; the same token keeps it', async () => {
    const login = await fetch(`${site.url}/admin/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: TOKEN, next: '/admin' }),
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const asAdmin = (url: string, init: RequestInit = {}) =>
      fetch(url, { ...init, redirect: 'manual', headers: { cookie, accept: 'text/html', ...init.headers } });
    expect((await asAdmin(`${site.url}/admin`)).status).toBe(200);

    // A restart without the token, and a server given a new one: the cookie opens nothing there.
    for (const s of [await another(null), await another(CHANGED)]) {
      expect((await asAdmin(`${s.url}/admin`)).status).not.toBe(200);
      const medical = await asAdmin(
        `${s.url}/rosters/teams/${ownTeam}.pdf?template=medical-and-guardian-contacts`,
        { headers: { accept: 'application/pdf' } },
      );
      expect(medical.status).toBe(401);
      expect(Buffer.from(await medical.arrayBuffer()).includes('%PDF')).toBe(false);
      const rotate = await asAdmin(`${s.url}/admin/feeds/rotate`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ school: 'hill', scope: 'team', id: String(ownTeam) }),
      });
      expect([200, 303]).not.toContain(rotate.status);
    }
    // Where the token is still the one it was opened with, it still works.
    expect((await asAdmin(`${site.url}/admin`)).status).toBe(200);
  });
});

describe('/admin/login with OpenID sign-in configured', () => {
  // Seen from outside: with OpenID configured the break-glass form answered 500 "Internal error", GET and a
  // wrong-token POST alike (the page layer took the sign-in link's `returnTo=` inside its quotes for an unquoted
  // attribute).
  it('shows the form with the school sign-in link, and a wrong token gets the form again with 401', async () => {
    const form = await fetch(`${site.url}/admin/login?next=${encodeURIComponent('/admin/audit?x="a"')}`);
    expect(form.status).toBe(200);
    const page = await form.text();
    expect(page).toContain('<form method="post" action="/admin/login">');
    expect(page).toContain('href="/auth/login?returnTo=%2Fadmin%2Faudit%3Fx%3D%22a%22"');
    expect(page).toContain('name="next" value="/admin/audit?x=&quot;a&quot;"');

    const wrong = await fetch(`${site.url}/admin/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: 'not-the-token', next: '/admin' }),
      redirect: 'manual',
    });
    expect(wrong.status).toBe(401);
    const again = await wrong.text();
    expect(again).toContain('That token is not right.');
    expect(again).toContain('href="/auth/login?returnTo=%2Fadmin"');
    expect(wrong.headers.getSetCookie()).toEqual([]);
  });
});

describe('unknown staff paths and oversized forms get a page in their own layout', () => {
  // Seen from outside: /admin/nope and /admin//audit answered the parents' "This calendar link does not work",
  // and a 413 was plain text.
  const ADMIN_LAYOUT = '<a href="/admin/audit">Audit</a>';
  it('an unknown /admin path is a 404 in the admin layout, an unknown /staff path one in the staff layout', async () => {
    for (const path of ['/admin/nope', '/admin//audit', '/ADMIN/nope', '/admin/feeds/nope?x=1']) {
      const res = await fetch(`${site.url}${path}`, { redirect: 'manual' });
      const page = await res.text();
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page, path).toContain(ADMIN_LAYOUT);
      expect(page).toContain('No such page');
      expect(page).not.toContain('calendar link does not work');
    }
    for (const path of ['/staff/nope', '/rosters/nope', '/auth/nope']) {
      const res = await fetch(`${site.url}${path}`, { redirect: 'manual' });
      const page = await res.text();
      expect(res.status, path).toBe(404);
      expect(page, path).toContain('No such page');
      expect(page).toContain('· rostercal</title>');
      expect(page).not.toContain('calendar link does not work');
    }
    // Anything else is still the parents' page: a mistyped calendar link lands there.
    const other = await fetch(`${site.url}/nope`);
    expect(other.status).toBe(404);
    expect(await other.text()).toContain('This calendar link does not work');
  });

  it('an oversized form is a 413 page: the staff layout for the sign-in form, the parents’ for the family form', async () => {
    const post = (path: string, body: string) =>
      fetch(`${site.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
        redirect: 'manual',
      });
    const signIn = await post('/admin/login', `token=${'x'.repeat(10_000)}`);
    const signInPage = await signIn.text();
    expect(signIn.status).toBe(413);
    expect(signIn.headers.get('content-type')).toMatch(/^text\/html/);
    expect(signIn.headers.get('cache-control')).toBe('no-store');
    expect(signInPage).toContain('Too much text');
    expect(signInPage).toContain('· rostercal</title>');
    const family = await post('/family', `links=${'y'.repeat(20_000)}`);
    const familyPage = await family.text();
    expect(family.status).toBe(413);
    expect(family.headers.get('content-type')).toMatch(/^text\/html/);
    expect(familyPage).toContain('Too much text');
    expect(familyPage).not.toContain('· rostercal</title>');
  });
});

describe('roster refusals', () => {
  let jar: CookieJar;
  beforeAll(async () => {
    jar = new CookieJar();
    expect((await signIn(jar, site.url, String(coach.id))).res.status).toBe(200);
  });

  it('a coach refused another team’s medical sheet is audited: who, what, why', async () => {
    const url = `${site.url}/rosters/teams/${otherTeam}.pdf?template=medical-and-guardian-contacts`;
    const refused = await browse(jar, url, { headers: { accept: 'application/pdf' } });
    expect(refused.res.status).toBe(403);
    const records = await h.store.access.listAudit({ limit: 20 });
    const record = records.find((r) => r.action === 'roster-refused' && r.teamId === otherTeam);
    expect(record).toBeDefined();
    expect(record!.actor).toBe(coach.email!.toLowerCase());
    expect(record!.template).toBe('medical-and-guardian-contacts');
    expect(record!.detail).toMatch(/not one of your teams/);
    expect(record!.clientAddress).toBeTruthy();
  });

  it('a school that does not exist answers as one the coach is not staff of, and is audited', async () => {
    const url = `${site.url}/rosters/teams/${ownTeam}.pdf?school=no-such-school&template=attendance-sheet`;
    const refused = await browse(jar, url, { headers: { accept: 'application/pdf' } });
    expect(refused.res.status).toBe(403);
    expect(refused.body).toMatch(/not staff of this school/);
    expect(refused.body).not.toContain('no-such-school');
    const records = await h.store.access.listAudit({ limit: 20 });
    expect(
      records.some((r) => r.action === 'roster-refused' && /not staff of this school/.test(r.detail ?? '')),
    ).toBe(true);
  });

  it('another team’s session asked through one’s own team: nothing of it named, answered as a session that does not exist', async () => {
    const ask = (session: number) =>
      browse(jar, `${site.url}/rosters/teams/${ownTeam}.pdf?session=${session}&template=attendance-sheet`, {
        headers: { accept: 'application/pdf' },
      });
    const notYours = await ask(otherSession.id);
    const missing = await ask(987_654_321);
    expect(notYours.body).not.toContain(otherSession.title);
    expect(notYours.res.status).toBe(missing.res.status);
    expect(notYours.body.replace(String(otherSession.id), 'ID')).toBe(
      missing.body.replace('987654321', 'ID'),
    );
    // Both refusals are audited too.
    const records = await h.store.access.listAudit({ limit: 20 });
    expect(
      records.filter((r) => r.action === 'roster-refused' && r.teamId === ownTeam).map((r) => r.sessionId),
    ).toEqual(expect.arrayContaining([otherSession.id, 987_654_321]));
  });
});

describe('the sign-in callback with an error', () => {
  it('shows a fixed message, never the text it was given; a known error code is kept', async () => {
    const planted = `\u202Eevil\u202C ${'x'.repeat(3000)} <b>Call 0400 000 000 to verify your account</b>`;
    const q = new URLSearchParams({ error: planted, error_description: planted, state: 'x' });
    const page = await browse(new CookieJar(), `${site.url}/auth/callback?${q}`);
    expect(page.res.status).toBe(401);
    expect(page.body).not.toContain('evil');
    expect(page.body).not.toContain('0400 000 000');
    expect(page.body).not.toContain('x'.repeat(50));
    expect(page.body).toContain('Sign-in was not completed');

    const denied = new URLSearchParams({ error: 'access_denied', error_description: planted });
    const known = await browse(new CookieJar(), `${site.url}/auth/callback?${denied}`);
    expect(known.body).toContain('access_denied');
    expect(known.body).not.toContain('0400 000 000');
  });
});
