// Throttling of the capability routes (web/rate-limit.ts), over real HTTP through Express: the operator's per-client
// limit answers 429 with Retry-After and the security headers; failed lookups are counted per client and only then
// refused, while another client is heard; a browser gets a page, a calendar app one line.
import type { Server } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailedLookups, rateLimit } from '../../src/web/rate-limit.ts';
import { freePort } from '../support/ports.ts';

const SECURITY: [string, string][] = [['X-Content-Type-Options', 'nosniff']];
let now = 0;
let limited = 0;
let base: string;
let server: Server;

beforeAll(async () => {
  const app = express();
  // Each request names its client in a header the proxy setting turns into req.ip: one process plays many clients.
  app.set('trust proxy', true);
  const onLimited = () => {
    limited++;
  };
  app.use(
    '/limited',
    rateLimit({ perSecond: 1, burst: 2, now: () => now, securityHeaders: SECURITY, onLimited }),
  );
  app.get('/limited', (_req, res) => {
    res.send('ok');
  });
  const lookups = new FailedLookups({
    burst: 3,
    perSecond: 1,
    now: () => now,
    securityHeaders: SECURITY,
    onLimited,
  });
  app.get('/feeds/:token', (req, res) => {
    if (req.params.token === 'good') {
      res.send('BEGIN:VCALENDAR');
      return;
    }
    if (lookups.refuse(req, res)) return;
    res.status(404).send('Not found');
  });
  const port = await freePort();
  await new Promise<void>((resolve) => {
    server = app.listen(port, '127.0.0.1', () => resolve());
  });
  base = `http://127.0.0.1:${port}`;
});

afterAll(() => new Promise<void>((resolve) => server?.close(() => resolve())));

const get = (path: string, client: string, accept = 'text/calendar') =>
  fetch(`${base}${path}`, { headers: { 'X-Forwarded-For': client, Accept: accept } });

describe('the operator’s per-client limit', () => {
  it('lets a burst through, then answers 429 with Retry-After to that client only, until it refills', async () => {
    now = 0;
    expect((await get('/limited', '203.0.113.1')).status).toBe(200);
    expect((await get('/limited', '203.0.113.1')).status).toBe(200);
    const refused = await get('/limited', '203.0.113.1');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(await refused.text()).toBe('Too many requests\n');
    expect(limited).toBe(1);
    expect((await get('/limited', '203.0.113.2')).status).toBe(200);
    now += 1000;
    expect((await get('/limited', '203.0.113.1')).status).toBe(200);
  });
});

describe('failed capability lookups', () => {
  it('answer 404 until the client has used its allowance, then 429, while its good links still work', async () => {
    now = 10_000;
    for (let i = 0; i < 3; i++) expect((await get(`/feeds/dead${i}`, '198.51.100.7')).status).toBe(404);
    const refused = await get('/feeds/dead9', '198.51.100.7');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await get('/feeds/good', '198.51.100.7')).status).toBe(200);
    expect((await get('/feeds/dead0', '198.51.100.8')).status).toBe(404);
    now += 1000;
    expect((await get('/feeds/dead0', '198.51.100.7')).status).toBe(404);
  });

  it('tell a browser in a page why, and how long to wait', async () => {
    now = 20_000;
    for (let i = 0; i < 3; i++) await get(`/feeds/dead${i}`, '192.0.2.9');
    const page = await get('/feeds/dead3', '192.0.2.9', 'text/html');
    expect(page.status).toBe(429);
    expect(page.headers.get('content-type')).toContain('text/html');
    const text = await page.text();
    expect(text).toContain('Too many calendar links that do not work');
    expect(text).toMatch(/Wait 1 second and open the link again/);
  });
});
