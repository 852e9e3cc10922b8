// /metrics through the real `rostercal serve` (issue 44): its counters (absence reports made and refused, routes,
// school ids, the Node version) are not the families' to read. By default the families' port has no /metrics;
// METRICS_PORT serves it on a listen address of its own; METRICS_TOKEN opens it to a bearer of the token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rostercal } from '../support/cli.ts';
import { freePort } from '../support/ports.ts';
import { type PrivacySchool, privacySchool, serve } from './served.ts';

let school: PrivacySchool;
const METRICS_TOKEN = 'metrics-token-for-the-metrics-test-0123456789';

beforeAll(async () => {
  school = await privacySchool(41);
}, 120_000);
afterAll(async () => {
  await school?.close();
});

describe('/metrics is not open to families', () => {
  it('by default: 404 on the public port, and the banner says how to turn it on', async () => {
    const s = await serve(school);
    try {
      const r = await fetch(`${s.url}/metrics`);
      expect(r.status).toBe(404);
      expect(await r.text()).not.toMatch(/rostercal_|nodejs_/);
      expect(s.child.output()).toContain('metrics: off (set METRICS_PORT or METRICS_TOKEN)');
    } finally {
      await s.stop();
    }
  }, 60_000);

  it('METRICS_PORT: served on its own address, still 404 on the public port', async () => {
    const port = await freePort();
    const s = await serve(school, { METRICS_PORT: String(port), METRICS_HOST: '127.0.0.1' });
    try {
      await (await fetch(`${s.url}/healthz`)).text();
      expect((await fetch(`${s.url}/metrics`)).status).toBe(404);
      const m = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(m.status).toBe(200);
      expect(await m.text()).toMatch(/rostercal_http_requests_total\{route="\/healthz"/);
      // That address answers nothing else: no feeds, no pages.
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(404);
      expect(s.child.output()).toContain(`metrics: http://127.0.0.1:${port}/metrics`);
    } finally {
      await s.stop();
    }
  }, 60_000);

  it('METRICS_TOKEN: the public port answers a bearer of it, 401 to anyone else', async () => {
    const s = await serve(school, { METRICS_TOKEN });
    try {
      const none = await fetch(`${s.url}/metrics`);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await none.text()).not.toMatch(/rostercal_/);
      const wrong = await fetch(`${s.url}/metrics`, {
        headers: { authorization: `Bearer ${METRICS_TOKEN.replace(/.$/, 'x')}` },
      });
      expect(wrong.status).toBe(401);
      const right = await fetch(`${s.url}/metrics`, {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      expect(right.status).toBe(200);
      expect(await right.text()).toMatch(/rostercal_http_requests_total/);
      // The token never reaches the terminal or the log.
      expect(s.child.output()).toContain('(Authorization: Bearer $METRICS_TOKEN)');
      expect(await s.stop()).not.toContain(METRICS_TOKEN);
    } finally {
      await s.stop();
    }
  }, 60_000);

  it('a short METRICS_TOKEN or a bad METRICS_PORT is a configuration error naming the variable', async () => {
    const short = rostercal(['feeds', 'list'], { ...school.env, METRICS_TOKEN: 'short' });
    expect(await short.exit).toBe(2);
    expect(short.output()).toMatch(/config: METRICS_TOKEN: is 5 characters long/);
    const port = rostercal(['feeds', 'list'], { ...school.env, METRICS_PORT: 'nine' });
    expect(await port.exit).toBe(2);
    expect(port.output()).toMatch(/config: METRICS_PORT: "nine" is not a port number/);
  });
});
