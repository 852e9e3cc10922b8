// The demo's OpenID provider (src/identity/demo-idp.ts), over HTTP as a relying party and a browser use it: the
// authorization-code flow with PKCE through its picker, the ID token's claims for the person picked, and its
// refusals (a person it does not offer, a picker used again after its sign-in finished) on the staff error page.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoPerson } from '../../src/identity/demo-people.ts';
import { browse, CookieJar, startTestIdp, type TestIdp } from './harness.ts';

const REDIRECT = 'http://127.0.0.1:9/auth/callback';
const people: DemoPerson[] = [
  { id: '11', email: 'ann.admin@hill.example', name: 'Ann Admin', role: 'admin', note: 'runs the office' },
  {
    id: '12',
    email: 'carl.coach@hill.example',
    name: 'Carl Coach',
    role: 'staff',
    note: 'U14 netball',
    emailVerified: false,
  },
];

describe('the demo OpenID provider', () => {
  let idp: TestIdp;
  let config: { authorization_endpoint: string; token_endpoint: string; userinfo_endpoint: string };
  beforeAll(async () => {
    idp = await startTestIdp(people, REDIRECT);
    config = (await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as typeof config;
  });
  afterAll(() => idp?.close());

  /** A relying party's start of a sign-in: the picker page a browser lands on, and the PKCE verifier. */
  async function openPicker(jar: CookieJar) {
    const verifier = randomBytes(32).toString('base64url');
    const auth = new URL(config.authorization_endpoint);
    auth.search = new URLSearchParams({
      client_id: idp.clientId,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid email profile',
      state: 'st4te',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const picker = await browse(jar, auth.href);
    return { picker, verifier };
  }

  /** Picks `account` on the picker and follows the provider's redirects up to the relying party's callback. */
  async function pick(jar: CookieJar, pickerUrl: string, body: string, account: string) {
    const action = /action="([^"]*\/interaction\/[^"]+\/login)"/.exec(body)?.[1];
    expect(action, body).toBeDefined();
    let url = new URL(action!, pickerUrl).href;
    let init: RequestInit = { method: 'POST', body: new URLSearchParams({ account }) };
    for (let hop = 0; hop < 10; hop++) {
      const res = await fetch(url, { ...init, redirect: 'manual', headers: { cookie: jar.header(url) } });
      jar.store(url, res);
      const location = res.headers.get('location');
      if (!location) return { res, text: await res.text() };
      await res.arrayBuffer();
      url = new URL(location, url).href;
      if (url.startsWith(REDIRECT)) return { callback: new URL(url) };
      init = {};
    }
    throw new Error('too many redirects');
  }

  /** The code exchanged as a relying party does: the ID token's claims, and the claims of the userinfo endpoint. */
  async function claimsFor(code: string, verifier: string) {
    const res = await fetch(config.token_endpoint, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        client_id: idp.clientId,
        client_secret: idp.clientSecret,
        code_verifier: verifier,
      }),
    });
    const tokens = (await res.json()) as { id_token?: string; access_token?: string };
    expect(res.status, JSON.stringify(tokens)).toBe(200);
    const idToken = JSON.parse(Buffer.from(tokens.id_token!.split('.')[1]!, 'base64url').toString());
    const info = await fetch(config.userinfo_endpoint, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    return {
      idToken: idToken as Record<string, unknown>,
      userinfo: (await info.json()) as Record<string, unknown>,
    };
  }

  it('offers each person with their role, and signs in as the one picked: their claims in the ID token', async () => {
    const jar = new CookieJar();
    const { picker, verifier } = await openPicker(jar);
    expect(picker.res.status).toBe(200);
    expect(picker.res.headers.get('content-security-policy')).toMatch(/form-action [^;]*127\.0\.0\.1:9/);
    for (const p of people) expect(picker.body).toContain(p.email);
    expect(picker.body).toMatch(/Ann Admin.*Admin · runs the office/s);
    expect(picker.body).toMatch(/Carl Coach.*Coach · U14 netball/s);

    const done = await pick(jar, picker.url, picker.body, '12');
    expect(done.callback?.searchParams.get('state')).toBe('st4te');
    const { idToken, userinfo } = await claimsFor(done.callback!.searchParams.get('code')!, verifier);
    expect(idToken).toMatchObject({ sub: '12', aud: idp.clientId, iss: idp.issuer });
    expect(userinfo).toEqual({
      sub: '12',
      email: 'carl.coach@hill.example',
      email_verified: false,
      name: 'Carl Coach',
    });
  });

  it('refuses a person it does not offer, on the error page', async () => {
    const jar = new CookieJar();
    const { picker } = await openPicker(jar);
    const refused = await pick(jar, picker.url, picker.body, '99');
    expect(refused.res?.status).toBe(400);
    expect(refused.text).toContain('That person is not on the demo sign-in page.');
    expect(refused.res?.headers.get('cache-control')).toBe('no-store');
  });

  it('refuses a picker used again after its sign-in finished', async () => {
    const jar = new CookieJar();
    const { picker } = await openPicker(jar);
    expect((await pick(jar, picker.url, picker.body, '11')).callback).toBeDefined();
    // Back to the picker, and the same pick again.
    const again = await browse(jar, picker.url);
    expect(again.res.status).toBe(400);
    expect(again.body).toContain('This sign-in has already finished or has expired.');
    const twice = await pick(jar, picker.url, picker.body, '11');
    expect(twice.res?.status).toBe(400);
    expect(twice.text).toContain('This sign-in has already finished or has expired.');
  });
});
