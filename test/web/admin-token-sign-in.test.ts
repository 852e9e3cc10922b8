// The break-glass form (web/admin-token-sign-in.ts) over HTTP, on the staff site of a school pulled from the sandbox
// into a real SQLite store: the right ADMIN_TOKEN opens a session acting as "admin token", audited; a wrong one, or
// any without ADMIN_TOKEN set, is a 401 form that says why and sets no cookie; an address that keeps failing is
// throttled (429 with Retry-After); a `next` off the site never leads off it. (Token changes: identity/staff-access.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../feeds/harness.ts';
import { type StaffSite, startStaffSite } from '../identity/harness.ts';
import { freePort } from '../support/ports.ts';

const TOKEN = 'break-glass-admin-token-0123456789abcdef';
let h: Harness;
let site: StaffSite;
let tokenless: StaffSite;

beforeAll(async () => {
  h = await startHarness({ seed: 22 });
  site = await startStaffSite(h, { port: await freePort(), idp: null, adminToken: TOKEN });
  tokenless = await startStaffSite(h, { port: await freePort(), idp: null, adminToken: null });
}, 120_000);
afterAll(async () => {
  await site?.close();
  await tokenless?.close();
  await h?.close();
});

const post = (base: string, fields: Record<string, string>) =>
  fetch(`${base}/admin/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
    redirect: 'manual',
  });

describe('/admin/login', () => {
  it('GET shows the form, its next kept on the site', async () => {
    const own = await fetch(`${site.url}/admin/login?next=${encodeURIComponent('/admin/audit')}`);
    expect(own.status).toBe(200);
    const page = await own.text();
    expect(page).toContain('<form method="post" action="/admin/login">');
    expect(page).toContain('name="next" value="/admin/audit"');
    const away = await (
      await fetch(`${site.url}/admin/login?next=${encodeURIComponent('//evil.example/x')}`)
    ).text();
    expect(away).toContain('name="next" value="/admin"');
  });

  it('the right token: 303 to next with a session that opens /admin, audited as the admin token', async () => {
    const login = await post(site.url, { token: ` ${TOKEN} `, next: 'https://evil.example/' });
    expect(login.status).toBe(303);
    expect(login.headers.get('location')).toBe('/admin');
    expect(login.headers.get('cache-control')).toBe('no-store');
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    expect(cookie).not.toBe('');
    expect(cookie).not.toContain(TOKEN);
    const admin = await fetch(`${site.url}/admin`, { headers: { cookie }, redirect: 'manual' });
    expect(admin.status).toBe(200);
    const audit = await h.store.access.listAudit({ actor: 'admin token', limit: 10 });
    expect(audit.find((a) => a.action === 'sign-in')).toMatchObject({ detail: 'admin token form' });
  });

  it('a wrong or empty token: the form again, 401, saying so, no cookie', async () => {
    for (const token of ['not-the-token', '', `${TOKEN}x`]) {
      const res = await post(site.url, { token, next: '/admin' });
      expect(res.status, token).toBe(401);
      expect(await res.text()).toContain('That token is not right.');
      expect(res.headers.getSetCookie()).toEqual([]);
    }
  });

  it('without ADMIN_TOKEN the form lets nobody in, and an address that keeps trying is throttled', async () => {
    const first = await post(tokenless.url, { token: TOKEN });
    expect(first.status).toBe(401);
    expect(await first.text()).toContain('No admin token is set (ADMIN_TOKEN), so this form lets nobody in.');
    let last = first;
    for (let i = 0; i < 12 && last.status !== 429; i++) last = await post(tokenless.url, { token: TOKEN });
    expect(last.status).toBe(429);
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await last.text()).toContain('Too many failed sign-in attempts came from your network address.');
  });
});
