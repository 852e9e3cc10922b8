// Behind a reverse proxy, through the real `rostercal serve` and a real proxy that appends to X-Forwarded-For as
// nginx does: a client that writes its own X-Forwarded-For on every request is still one client, so the failure
// throttles (wrong bearer tokens, unknown feed URLs) hold. What the README recommends (the proxy's own address, or
// a hop count) holds; a wide trusted range is warned about at start, because a client inside it can name any
// address. IPv6 clients are counted by their /64, IPv4 written as IPv4-mapped IPv6 or with a port as IPv4.
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trustProxyWarning } from '../../src/config/edge-settings.ts';
import { type ReverseProxy, requestFrom, reverseProxy } from '../support/proxy.ts';
import { ADMIN_TOKEN, type PrivacySchool, privacySchool, type Served, serve } from './served.ts';

let school: PrivacySchool;
const UNKNOWN = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

beforeAll(async () => {
  school = await privacySchool(43);
}, 120_000);
afterAll(async () => {
  await school?.close();
});

/** A different made-up address for each request, IPv4 or IPv6, as an attacker would send. */
function forged(i: number): string {
  return i % 2 === 0
    ? `${randomInt(1, 223)}.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`
    : `2001:db8:${randomInt(65536).toString(16)}::${randomInt(65536).toString(16)}`;
}

interface Tally {
  statuses: number[];
  /** Answers before the first 429 (all of them when none came). */
  beforeThrottle: number;
}

function tally(statuses: number[]): Tally {
  const first = statuses.indexOf(429);
  return { statuses, beforeThrottle: first === -1 ? statuses.length : first };
}

/** `count` requests one after another (`send(i)` answers a status), tallied, with the seconds they took. */
async function timedTally(
  count: number,
  send: (i: number) => Promise<number>,
): Promise<Tally & { seconds: number }> {
  const start = performance.now();
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push(await send(i));
  return { ...tally(statuses), seconds: (performance.now() - start) / 1000 };
}

/** `count` unknown feed URLs from `from` through `base`, each with a freshly forged X-Forwarded-For. */
function unknownFeeds(base: string, from: string, count: number, xff = forged) {
  return timedTally(
    count,
    async (i) =>
      (await requestFrom(from, `${base}/feeds/${UNKNOWN}.ics`, { headers: { 'x-forwarded-for': xff(i) } }))
        .status,
  );
}

/**
 * Unknown feed URLs: 60 at once, one more forgiven a second. However long the run took on a loaded machine, no
 * more got through than those seconds forgive (one forged address per request would let them all through).
 */
function expectThrottledAfterSixty(feeds: Tally & { seconds: number }): void {
  expect(feeds.beforeThrottle).toBeGreaterThanOrEqual(60);
  const allowed = 60 + Math.ceil(feeds.seconds) + 1;
  expect(feeds.beforeThrottle, `${feeds.seconds.toFixed(1)} s`).toBeLessThanOrEqual(allowed);
  expect(feeds.statuses.filter((s) => s !== 429).length, `${feeds.seconds.toFixed(1)} s`).toBeLessThanOrEqual(
    allowed,
  );
}

/** `count` wrong bearer tokens on /admin, each with a freshly forged X-Forwarded-For. */
function wrongBearers(base: string, from: string, count: number, xff = forged) {
  return timedTally(
    count,
    async (i) =>
      (
        await requestFrom(from, `${base}/admin`, {
          headers: { authorization: `Bearer wrong-${i}`, 'x-forwarded-for': xff(i) },
        })
      ).status,
  );
}

/**
 * The sign-in throttle allows 10 failures at once and forgives one every 6 s: on a loaded machine the run can
 * take long enough for one or two to be forgiven, never more than the seconds it took allow (one forged address
 * per request would be 40 401s).
 */
function expectThrottledAfterTen(bearers: Tally & { seconds: number }): void {
  const forgiven = Math.ceil(bearers.seconds / 6);
  const heard = bearers.statuses.filter((s) => s === 401).length;
  expect(bearers.beforeThrottle).toBeGreaterThanOrEqual(10);
  expect(heard, `${bearers.seconds.toFixed(1)} s`).toBeLessThanOrEqual(10 + forgiven);
  expect(bearers.statuses.every((s) => s === 401 || s === 429)).toBe(true);
}

async function behindProxy(
  env: Record<string, string>,
  fn: (proxy: ReverseProxy, served: Served) => Promise<void>,
): Promise<string> {
  const served = await serve(school, env);
  const proxy = await reverseProxy(served.url.replace('localhost', '127.0.0.1'), { from: '127.0.0.1' });
  try {
    await fn(proxy, served);
  } finally {
    await proxy.close();
  }
  return served.stop();
}

describe('a client forging X-Forwarded-For behind a loopback proxy is still one client', () => {
  it("TRUST_PROXY = the proxy's own address: 40 wrong bearer tokens and 100 unknown feed URLs are throttled, whatever the client writes", async () => {
    const output = await behindProxy({ TRUST_PROXY: '127.0.0.1' }, async (proxy) => {
      expectThrottledAfterTen(await wrongBearers(proxy.url, '127.0.0.2', 40));
      const feeds = await unknownFeeds(proxy.url, '127.0.0.2', 100);
      expectThrottledAfterSixty(feeds);
      // Another client behind the same proxy is not affected.
      expect((await requestFrom('127.0.0.3', `${proxy.url}/feeds/${UNKNOWN}.ics`)).status).toBe(404);
      expect(
        (await requestFrom('127.0.0.3', `${proxy.url}/admin`, { headers: { authorization: 'Bearer x' } }))
          .status,
      ).toBe(401);
    });
    expect(output).not.toMatch(/warning: TRUST_PROXY/);
  }, 120_000);

  it('a forged entry that names the proxy itself does not help either', async () => {
    await behindProxy({ TRUST_PROXY: '127.0.0.1' }, async (proxy) => {
      expectThrottledAfterTen(
        await wrongBearers(proxy.url, '127.0.0.2', 20, (i) => `${forged(i)}, 127.0.0.1`),
      );
    });
  }, 120_000);

  it('TRUST_PROXY=1 (a hop count): even a client on the same address as the proxy cannot choose its key', async () => {
    await behindProxy({ TRUST_PROXY: '1' }, async (proxy) => {
      expectThrottledAfterTen(await wrongBearers(proxy.url, '127.0.0.1', 30));
    });
  }, 120_000);

  it('the admin page shows the client behind the proxy, not what it wrote', async () => {
    await behindProxy({ TRUST_PROXY: '127.0.0.1' }, async (proxy) => {
      const login = await requestFrom('127.0.0.4', `${proxy.url}/admin/login`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-forwarded-for': '198.51.100.99',
        },
        body: `token=${encodeURIComponent(ADMIN_TOKEN)}&next=%2Fadmin`,
      });
      expect(login.status, login.body).toBe(303);
      const cookie = ([] as string[])
        .concat(login.headers['set-cookie'] ?? [])
        .map((c) => c.split(';')[0])
        .join('; ');
      const page = await requestFrom('127.0.0.4', `${proxy.url}/admin`, {
        headers: { cookie, 'x-forwarded-for': '198.51.100.99' },
      });
      expect(page.body).toContain('Your address as this service sees it: <code>127.0.0.4</code>');
    });
  }, 120_000);
});

describe('a wide trusted range is warned about at start', () => {
  it('TRUST_PROXY=loopback: `serve` says so in one line, and a client inside the range can indeed name itself', async () => {
    const output = await behindProxy({ TRUST_PROXY: 'loopback' }, async (proxy) => {
      // 127.0.0.2 is inside 127.0.0.0/8: trusted like the proxy, so what it writes is believed. This is what the
      // warning is about, and why the README recommends the proxy's own address.
      const bearers = await wrongBearers(proxy.url, '127.0.0.2', 30);
      expect(bearers.beforeThrottle).toBe(30);
    });
    const warnings = output.split('\n').filter((l) => l.includes('warning: TRUST_PROXY'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^rostercal: warning: TRUST_PROXY trusts "loopback" \(127\.0\.0\.0\/8 and ::1: .*\) to name the client: .*escape every throttle.*reverse proxy's own address/,
    );
  }, 120_000);

  it.each([
    ['uniquelocal', /"uniquelocal" \(10\.0\.0\.0\/8, 172\.16\.0\.0\/12, 192\.168\.0\.0\/16 and fc00::\/7/],
    ['10.0.0.0/8', /10\.0\.0\.0\/8 \(16,777,216 addresses\)/],
    ['172.18.0.0/16, 172.18.0.2', /172\.18\.0\.0\/16 \(65,536 addresses\)/],
    ['fd00::/8', /fd00::\/8 \(/],
    ['linklocal', /"linklocal"/],
  ])('TRUST_PROXY=%s is wide', (value, names) => {
    expect(trustProxyWarning(value)).toMatch(names);
  });

  it.each([['172.18.0.2'], ['10.0.0.5, 10.0.0.6'], ['10.0.4.0/28'], ['2001:db8::10/124'], ['::1']])(
    'TRUST_PROXY=%s is not',
    (value) => {
      expect(trustProxyWarning(value)).toBeNull();
    },
  );
  it('a hop count is not (the README says when it is right)', () => {
    expect(trustProxyWarning(1)).toBeNull();
    expect(trustProxyWarning(undefined)).toBeNull();
  });
});

describe('the failure throttle counts an IPv6 client by its /64, and one IPv4 client once', () => {
  // The requests come from 127.0.0.1, the trusted proxy's address: X-Forwarded-For names the client.
  it('60 unknown URLs from addresses rotating within one /64 are throttled; another /64 is not', async () => {
    const served = await serve(school, { TRUST_PROXY: '127.0.0.1' });
    try {
      const base = served.url.replace('localhost', '127.0.0.1');
      const rotating = await unknownFeeds(
        base,
        '127.0.0.1',
        90,
        () => `2001:db8:aa:bb:${[0, 0, 0, 0].map(() => randomInt(65536).toString(16)).join(':')}`,
      );
      expectThrottledAfterSixty(rotating);
      const other = await requestFrom('127.0.0.1', `${base}/feeds/${UNKNOWN}.ics`, {
        headers: { 'x-forwarded-for': '2001:db8:aa:bc::1' },
      });
      expect(other.status).toBe(404);
      // One IPv4 client, written plain, IPv4-mapped or with a port (as some load balancers append it).
      const forms = ['203.0.113.7', '::ffff:203.0.113.7', '::ffff:cb00:7107', '203.0.113.7:51234'];
      expectThrottledAfterTen(await wrongBearers(base, '127.0.0.1', 20, (i) => forms[i % forms.length]!));
    } finally {
      await served.stop();
    }
  }, 120_000);
});
