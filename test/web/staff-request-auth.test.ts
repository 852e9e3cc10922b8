// Who a staff request is (web/staff-request-auth.ts), over HTTP on the staff site of a school pulled from the
// sandbox into a real SQLite store: ADMIN_TOKEN as a bearer opens the staff pages; a wrong bearer is a 401 line with
// its challenge, and an address that keeps sending wrong ones is throttled (429) even for the right one; no
// credential at all sends a browser to sign in (coming back where it was) and tells a script in one line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sameSecret } from '../../src/web/staff-request-auth.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';
import { type StaffSite, startStaffSite } from '../identity/harness.ts';
import { freePort } from '../support/ports.ts';

const TOKEN = 'request-auth-admin-token-0123456789abcdef';
let h: Harness;
let site: StaffSite;

beforeAll(async () => {
  h = await startHarness({ seed: 28 });
  site = await startStaffSite(h, { port: await freePort(), idp: null, adminToken: TOKEN });
}, 120_000);
afterAll(async () => {
  await site?.close();
  await h?.close();
});

const staff = (headers: Record<string, string>) =>
  fetch(`${site.url}/staff?q=u14`, { headers, redirect: 'manual' });

describe('staff requests', () => {
  it('sameSecret: equal strings only, whatever their lengths', () => {
    expect(sameSecret(TOKEN, TOKEN)).toBe(true);
    expect(sameSecret(`${TOKEN}x`, TOKEN)).toBe(false);
    expect(sameSecret('', TOKEN)).toBe(false);
  });

  it('ADMIN_TOKEN as a bearer (any case of "Bearer") opens /staff', async () => {
    expect((await staff({ authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    expect((await staff({ authorization: `bearer ${TOKEN}` })).status).toBe(200);
  });

  it('no credential: a browser is sent to sign in and back; a script gets 401 in a line', async () => {
    const browser = await staff({ accept: 'text/html' });
    expect(browser.status).toBe(303);
    expect(browser.headers.get('location')).toBe('/auth/login?returnTo=%2Fstaff%3Fq%3Du14');
    const script = await staff({ accept: '*/*' });
    expect(script.status).toBe(401);
    expect(script.headers.get('www-authenticate')).toBe('Bearer realm="rostercal staff"');
    expect(await script.text()).toBe('staff sign-in required\n');
  });

  it('a wrong bearer is 401; an address that keeps trying is throttled, even for the right token', async () => {
    const wrong = await staff({ authorization: 'Bearer not-the-token' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('cache-control')).toBe('no-store');
    expect(await wrong.text()).toBe('wrong or unknown bearer token\n');
    let last = wrong;
    for (let i = 0; i < 12 && last.status !== 429; i++) last = await staff({ authorization: 'Bearer nope' });
    expect(last.status).toBe(429);
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await staff({ authorization: `Bearer ${TOKEN}` })).status).toBe(429);
  });
});
