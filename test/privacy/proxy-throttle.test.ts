// Behind a reverse proxy and under load, through the real `rostercal serve`: TRUST_PROXY decides whether the
// families behind a proxy are one client or each themselves; failed lookups (unknown tokens) are throttled per
// client while valid feeds are not (unless FEED_RATE_LIMIT says so); every 429 carries the security headers.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rostercal } from '../support/cli.ts';
import { ADMIN_TOKEN, type PrivacySchool, privacySchool, serve, tokenOf } from './served.ts';

let school: PrivacySchool;
let token: string;
/** A well-formed token no feed has. */
const UNKNOWN = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const FAMILY_A = '203.0.113.10';
const FAMILY_B = '198.51.100.20';

beforeAll(async () => {
  school = await privacySchool(37);
  token = tokenOf(school.feeds.find((f) => f.scope === 'team')!.url);
}, 120_000);
afterAll(async () => {
  await school?.close();
});

function get(base: string, path: string, from?: string): Promise<Response> {
  return fetch(`${base}${path}`, { headers: from ? { 'x-forwarded-for': from } : {}, redirect: 'manual' });
}

/** Unknown-token requests from one client until the first 429 (at most `max`); the statuses seen. */
async function probe(base: string, from: string, max = 80): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < max; i++) {
    const r = await get(base, `/feeds/${UNKNOWN}.ics`, from);
    await r.arrayBuffer();
    statuses.push(r.status);
    if (r.status === 429) break;
  }
  return statuses;
}

/**
 * That `from`'s allowance of unknown tokens is (still) used up on `path`. The bucket forgives one unknown token a
 * second: on a loaded machine seconds pass between emptying it and this check, so a request forgiven since then
 * is a 404, not a failure. What this proves is that no more than the seconds elapsed were forgiven (a separate
 * allowance would answer dozens of 404s) and that the next answer is 429.
 */
async function stillThrottled(
  base: string,
  path: string,
  from: string,
  emptiedAt: number,
): Promise<Response> {
  for (;;) {
    const r = await get(base, path, from);
    await r.arrayBuffer();
    if (r.status === 429) return r;
    expect(r.status).toBe(404);
    const forgiven = Math.ceil((performance.now() - emptiedAt) / 1000);
    expect(forgiven, 'more unknown tokens forgiven than seconds passed').toBeGreaterThan(0);
    emptiedAt += 1000; // the token this 404 used was the one forgiven in that second
  }
}

/** The admin page as the admin (signed in with ADMIN_TOKEN) sees it, sent from `from` through a proxy. */
async function adminPage(base: string, from: string): Promise<string> {
  const login = await fetch(`${base}/admin/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': from },
    body: `token=${encodeURIComponent(ADMIN_TOKEN)}&next=%2Fadmin`,
    redirect: 'manual',
  });
  expect(login.status, await login.text()).toBe(303);
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const page = await fetch(`${base}/admin`, { headers: { cookie, 'x-forwarded-for': from } });
  expect(page.status).toBe(200);
  return page.text();
}

/** The security headers of an answer: everything but what describes the body, the connection or caching. */
function securityHeaders(res: Response): Record<string, string> {
  const generic = new Set([
    'date',
    'connection',
    'keep-alive',
    'content-length',
    'content-type',
    'cache-control',
    'transfer-encoding',
    'retry-after',
    'content-disposition',
    'etag',
    'last-modified',
    'vary',
    'content-encoding',
  ]);
  return Object.fromEntries([...res.headers].filter(([k]) => !generic.has(k)));
}

describe('TRUST_PROXY unset: every family behind the proxy is the proxy', () => {
  it('one family using up the allowance of unknown URLs throttles the next family too; the admin page shows the proxy', async () => {
    const s = await serve(school);
    try {
      const a = await probe(s.url, FAMILY_A);
      const emptiedAt = performance.now();
      expect(a.at(-1)).toBe(429);
      expect(a.slice(0, -1).every((x) => x === 404)).toBe(true);
      await stillThrottled(s.url, `/feeds/${UNKNOWN}.ics`, FAMILY_B, emptiedAt);
      expect(await adminPage(s.url, FAMILY_A)).toMatch(
        /Your address as this service sees it: <code>(::ffff:)?127\.0\.0\.1<\/code>.*TRUST_PROXY unset/,
      );
    } finally {
      await s.stop();
    }
  }, 60_000);
});

describe('TRUST_PROXY=loopback: each family is itself', () => {
  it('only the family that failed is throttled, its valid feed is still served, and the admin page shows the admin', async () => {
    const s = await serve(school, { TRUST_PROXY: 'loopback' });
    try {
      const a = await probe(s.url, FAMILY_A);
      const emptiedAt = performance.now();
      expect(a.length).toBeGreaterThan(10);
      expect(a.at(-1)).toBe(429);
      const limited = await stillThrottled(s.url, `/feeds/${UNKNOWN}.ics`, FAMILY_A, emptiedAt);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Decided: a throttled client's valid feeds are still served (a school's Wi-Fi is one address).
      expect((await get(s.url, `/feeds/${token}.ics`, FAMILY_A)).status).toBe(200);
      expect((await get(s.url, `/feeds/${UNKNOWN}.ics`, FAMILY_B)).status).toBe(404);
      // Family links count the same way.
      await stillThrottled(s.url, `/family/${UNKNOWN}`, FAMILY_A, emptiedAt);
      expect((await get(s.url, `/family/${UNKNOWN}`, FAMILY_B)).status).toBe(404);
      const page = await adminPage(s.url, FAMILY_B);
      expect(page).toContain(`Your address as this service sees it: <code>${FAMILY_B}</code>`);
      expect(page).toContain('TRUST_PROXY=loopback');
    } finally {
      await s.stop();
    }
    // The audit log records the admin's own address too, not the proxy's.
    const audit = rostercal(['audit', '--json'], school.env);
    expect(await audit.exit, audit.output()).toBe(0);
    const signIns = (JSON.parse(audit.stdout()) as { action: string; clientAddress: string | null }[]).filter(
      (r) => r.action === 'sign-in',
    );
    expect(signIns.map((r) => r.clientAddress)).toContain(FAMILY_B);
  }, 60_000);
});

describe('valid feeds are not throttled by default; an operator may set FEED_RATE_LIMIT', () => {
  it('1,000 valid feed requests from one address are all 200', async () => {
    const s = await serve(school);
    try {
      const statuses = new Map<number, number>();
      for (let i = 0; i < 1000; i++) {
        const r = await get(s.url, `/feeds/${token}.ics`);
        await r.arrayBuffer();
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
      expect(Object.fromEntries(statuses)).toEqual({ 200: 1000 });
    } finally {
      await s.stop();
    }
  }, 120_000);

  it('FEED_RATE_LIMIT=1,5: past the burst of five and what refilled meanwhile, a request is 429 with the headers of every other answer', async () => {
    const s = await serve(school, { FEED_RATE_LIMIT: '1,5' });
    try {
      // The bucket refills one a second, so on a loaded host (a first render taking seconds) the sixth may be
      // allowed: ask until refused, and hold the limiter to its burst plus what refilled meanwhile.
      const answers: Response[] = [];
      const started = performance.now();
      while (answers.length < 30 && answers.at(-1)?.status !== 429) {
        const r = await get(s.url, `/feeds/${token}.ics`);
        await r.arrayBuffer();
        answers.push(r);
      }
      const refilled = Math.floor((performance.now() - started) / 1000);
      const allowed = answers.filter((r) => r.status === 200).length;
      expect(answers.at(-1)?.status).toBe(429);
      expect(answers.slice(0, -1).every((r) => r.status === 200)).toBe(true);
      expect(allowed).toBeGreaterThanOrEqual(5);
      expect(allowed).toBeLessThanOrEqual(5 + refilled);
      const limited = answers.at(-1)!;
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(securityHeaders(limited)).toEqual(securityHeaders(answers[0]!));
    } finally {
      await s.stop();
    }
  }, 60_000);
});

describe('429 answers carry the same security headers as every other answer', () => {
  it('the throttled unknown token, a 404, a feed and a health check share one header set', async () => {
    const s = await serve(school);
    try {
      const notFound = await get(s.url, `/feeds/${UNKNOWN}.ics`);
      await notFound.arrayBuffer();
      const feed = await get(s.url, `/feeds/${token}.ics`);
      await feed.arrayBuffer();
      const health = await get(s.url, '/healthz');
      await health.arrayBuffer();
      await probe(s.url, FAMILY_A);
      const limited = await get(s.url, `/feeds/${UNKNOWN}.ics`);
      await limited.arrayBuffer();
      expect(limited.status).toBe(429);
      const expected = securityHeaders(feed);
      // The 404 is a short HTML page for a parent who opens a dead link: the same headers, but a policy of its
      // own that lets it style itself (and still loads nothing, and may not be framed).
      const { 'content-security-policy': pageCsp, ...notFoundRest } = securityHeaders(notFound);
      const { 'content-security-policy': _expectedCsp, ...expectedRest } = expected;
      expect(notFoundRest).toEqual(expectedRest);
      expect(pageCsp).toMatch(/^default-src 'none';/);
      expect(pageCsp).toContain("frame-ancestors 'none'");
      expect(Object.keys(expected)).toEqual(
        expect.arrayContaining([
          'x-content-type-options',
          'referrer-policy',
          'x-frame-options',
          'content-security-policy',
          'strict-transport-security',
        ]),
      );
      expect(securityHeaders(limited)).toEqual(expected);
      expect(securityHeaders(health)).toEqual(expected);
      // The sign-in throttle's 429 too (wrong admin tokens from one address).
      let signIn: Response | null = null;
      for (let i = 0; i < 30; i++) {
        const r = await fetch(`${s.url}/admin/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'token=wrong',
          redirect: 'manual',
        });
        await r.arrayBuffer();
        if (r.status === 429) {
          signIn = r;
          break;
        }
      }
      expect(signIn?.status).toBe(429);
      const { 'content-security-policy': csp, ...rest } = securityHeaders(signIn!);
      expect(rest).toEqual(expectedRest);
      // An HTML page has its own CSP, as strict: nothing runs, nothing frames it.
      expect(csp).toMatch(/default-src 'none'/);
      expect(csp).toMatch(/frame-ancestors 'none'/);
    } finally {
      await s.stop();
    }
  }, 60_000);
});

describe('TRUST_PROXY and FEED_RATE_LIMIT are validated; the error names the variable', () => {
  it.each([
    ['TRUST_PROXY', 'true', /config: TRUST_PROXY: .*hop count/],
    ['TRUST_PROXY', '10.0.0.0/33', /config: TRUST_PROXY: "10\.0\.0\.0\/33": the prefix length must be 1-32/],
    // A /0 range passed this check, then Express refused it at start-up ("invalid range on address: 0.0.0.0/0").
    [
      'TRUST_PROXY',
      '0.0.0.0/0',
      /config: TRUST_PROXY: "0\.0\.0\.0\/0" trusts every address.*e\.g\. TRUST_PROXY=/,
    ],
    ['TRUST_PROXY', '::/0', /config: TRUST_PROXY: "::\/0" trusts every address.*e\.g\. TRUST_PROXY=/],
    ['TRUST_PROXY', 'nginx', /config: TRUST_PROXY: "nginx" is not an address/],
    ['FEED_RATE_LIMIT', 'fast', /config: FEED_RATE_LIMIT: must be requests per second/],
  ])('%s=%s → exit 2', async (name, value, message) => {
    const child = rostercal(['feeds', 'list'], { ...school.env, [name]: value });
    expect(await child.exit).toBe(2);
    expect(child.output()).toMatch(message);
  });

  it('in a config file: trustProxy and feedRateLimit are named by their field', async () => {
    const file = path.join(school.dataDir, 'bad-edge.json');
    await writeFile(
      file,
      JSON.stringify({
        schools: [
          {
            id: 'hillcrest',
            name: 'Hillcrest College',
            upstream: { url: school.sandbox.url, token: school.sandbox.token },
            timeZone: 'Australia/Sydney',
          },
        ],
        trustProxy: ['loopback', '10.0.0.0/8', 'everyone'],
        feedRateLimit: { perSecond: 0 },
      }),
    );
    const child = rostercal(['feeds', 'list'], { DATA_DIR: school.dataDir, ROSTERCAL_CONFIG: file });
    expect(await child.exit).toBe(2);
    expect(child.output()).toMatch(/config: trustProxy: "everyone" is not an address/);
    expect(child.output()).toMatch(/config: feedRateLimit\.perSecond: /);
  });
});
