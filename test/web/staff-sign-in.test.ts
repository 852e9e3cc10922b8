// Staff sign-in (web/staff-sign-in.ts) over HTTP against a real OpenID provider, on the staff site of a school pulled
// from the sandbox into a real SQLite store: /auth/login leads to the provider with PKCE and comes back signed in
// (audited, with the role); a callback without its login cookie, or the provider's refusal, is a 4xx page that
// never shows the provider's text; sign-out needs the page's CSRF value and ends the session; a site without a
// provider says so (503, naming the admin token where there is one).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StaffUser } from '../../src/domain/types.ts';
import type { Harness } from '../feeds/harness.ts';
import {
  browse,
  type CoachSite,
  CookieJar,
  coachSite,
  type StaffSite,
  signIn,
  startStaffSite,
  type TestIdp,
} from '../identity/harness.ts';
import { freePort } from '../support/ports.ts';

let world: CoachSite;
let h: Harness;
let idp: TestIdp;
let site: StaffSite;
let noProvider: StaffSite;
let coach: StaffUser;

beforeAll(async () => {
  world = await coachSite({ seed: 27, pick: ({ staff }) => ({ coach: staff[0]! }) });
  ({ h, idp, site, coach } = world);
  noProvider = await startStaffSite(h, { port: await freePort(), idp: null, adminToken: 'x'.repeat(40) });
}, 120_000);
afterAll(async () => {
  await noProvider?.close();
  await world?.close();
});

describe('/auth', () => {
  it('/auth/login: off to the provider with PKCE, the login kept in a short-lived cookie', async () => {
    const res = await fetch(`${site.url}/auth/login?returnTo=%2Fstaff`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    const to = new URL(res.headers.get('location')!);
    expect(to.origin).toBe(new URL(idp.url).origin);
    expect(to.searchParams.get('code_challenge_method')).toBe('S256');
    expect(to.searchParams.get('redirect_uri')).toBe(`${site.url}/auth/callback`);
    expect(res.headers.getSetCookie().join()).toMatch(/Path=\/auth; .*HttpOnly/i);
  });

  it('signed in: back where it was going, the sign-in audited with the role', async () => {
    const jar = new CookieJar();
    const done = await signIn(jar, site.url, String(coach.id), '/staff');
    expect(done.res.status).toBe(200);
    expect(new URL(done.url).pathname).toBe('/staff');
    const audit = await h.store.access.listAudit({ actor: coach.email!, action: 'sign-in', limit: 5 });
    expect(audit[0]).toMatchObject({ schoolId: 'hill', detail: 'staff' });
  });

  it('a callback without its login cookie, or refused by the provider: 4xx, never the provider’s text', async () => {
    const noCookie = await fetch(`${site.url}/auth/callback?code=abc&state=def`, { redirect: 'manual' });
    expect(noCookie.status).toBeGreaterThanOrEqual(400);
    expect(noCookie.status).toBeLessThan(500);
    const refused = await fetch(
      `${site.url}/auth/callback?error=access_denied&error_description=${encodeURIComponent('<b>call 555-0100</b>')}`,
      { redirect: 'manual' },
    );
    expect(refused.status).toBe(401);
    const page = await refused.text();
    expect(page).toContain('(it answered access_denied)');
    expect(page).not.toContain('555-0100');
  });

  it('sign-out without the CSRF value is refused (403) and keeps the session; with it, the session ends', async () => {
    const jar = new CookieJar();
    await signIn(jar, site.url, String(coach.id), '/staff');
    const forged = await browse(jar, `${site.url}/auth/logout`, {
      method: 'POST',
      body: new URLSearchParams({}),
    });
    expect(forged.res.status).toBe(403);
    expect((await browse(jar, `${site.url}/staff`)).res.status).toBe(200);
    const page = (await browse(jar, `${site.url}/staff`)).body;
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
    const out = await browse(jar, `${site.url}/auth/logout`, {
      method: 'POST',
      body: new URLSearchParams({ csrf }),
    });
    expect(new URL(out.url).pathname).toBe('/auth/signed-out');
    expect(out.body).toContain('You are signed out');
    const after = await fetch(`${site.url}/staff`, {
      headers: { cookie: jar.header(site.url), accept: 'text/html' },
      redirect: 'manual',
    });
    expect(after.status).toBe(303);
  });

  it('without a provider: 503 saying sign-in is not set up, pointing to the admin token', async () => {
    const res = await fetch(`${noProvider.url}/auth/login`, { redirect: 'manual' });
    expect(res.status).toBe(503);
    const page = await res.text();
    expect(page).toContain('Staff sign-in is not set up');
    expect(page).toContain('/admin/login');
  });
});
