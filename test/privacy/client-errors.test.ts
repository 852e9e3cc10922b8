// A client's mistakes through the real `rostercal serve`: a malformed escape after a feed token, an oversized
// sign-in form, a charset or content type the forms do not read. Each is a 4xx with the security headers, never
// a 500, and no line the server writes (request log, error log) carries the token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivacySchool, privacySchool, type Served, serve, tokenOf } from './served.ts';

let school: PrivacySchool;
let served: Served;
let token: string;
let output = '';

beforeAll(async () => {
  school = await privacySchool();
  token = tokenOf(school.feeds.find((f) => f.scope === 'team')!.url);
  served = await serve(school);
}, 120_000);
afterAll(async () => {
  if (!output) await served?.stop();
  await school?.close();
});

const form = 'application/x-www-form-urlencoded';

describe('a client mistake is a 4xx with the security headers (rostercal serve)', () => {
  const cases: { what: string; path: () => string; init?: () => RequestInit; status: number }[] = [
    { what: 'malformed escape after a feed token', path: () => `/feeds/${token}%E0%A4.ics`, status: 400 },
    { what: 'malformed escape on a feed page', path: () => `/feeds/${token}%E0%A4`, status: 400 },
    { what: 'malformed escape, other case', path: () => `/FEEDS/${token}%E0%A4.ics`, status: 400 },
    { what: 'malformed escape after a family token', path: () => `/family/${token}%E0%A4.ics`, status: 400 },
    { what: 'malformed escape in a roster path', path: () => '/rosters/teams/%E0%A4.pdf', status: 400 },
    {
      what: 'a 10 kB sign-in form',
      path: () => '/admin/login',
      init: () => ({
        method: 'POST',
        headers: { 'content-type': form },
        body: `token=${'x'.repeat(10_000)}`,
      }),
      status: 413,
    },
    {
      what: 'a 20 kB family-link form',
      path: () => '/family',
      init: () => ({
        method: 'POST',
        headers: { 'content-type': form },
        body: `links=${'y'.repeat(20_000)}`,
      }),
      status: 413,
    },
    {
      what: 'a sign-in form in a charset we do not read',
      path: () => '/admin/login',
      init: () => ({
        method: 'POST',
        headers: { 'content-type': `${form}; charset=klingon` },
        body: 'token=abc',
      }),
      status: 415,
    },
    {
      what: 'a sign-in as JSON',
      path: () => '/admin/login',
      init: () => ({
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: 'abc' }),
      }),
      status: 415,
    },
    {
      what: 'a family-link form as text',
      path: () => '/family',
      init: () => ({ method: 'POST', headers: { 'content-type': 'text/plain' }, body: `from=${token}` }),
      status: 415,
    },
  ];

  it.each(cases)('$what → $status', async ({ path, init, status }) => {
    const res = await fetch(`${served.url}${path()}`, { redirect: 'manual', ...(init?.() ?? {}) });
    const body = await res.text();
    expect(res.status, body).toBe(status);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('strict-transport-security')).toMatch(/max-age=/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(body).not.toContain(token);
  });

  it('the valid feed still answers, and the log names each refusal without the token', async () => {
    expect((await fetch(`${served.url}/feeds/${token}.ics`)).status).toBe(200);
    output = await served.stop();
    expect(output).toMatch(/"msg":"request refused"/);
    expect(output).toMatch(/"status":413/);
    expect(output).not.toMatch(/"status":500/);
    expect(output).not.toContain('request failed');
    expect(output).not.toContain(token);
    expect(output).not.toContain(token.slice(0, 12));
    // Each refused feed request is logged (request line and refusal) with the token cut to 6 characters.
    expect(output).toContain(`/feeds/${token.slice(0, 6)}…`);
    expect(output).toContain(`/FEEDS/${token.slice(0, 6)}…`);
  });
});
