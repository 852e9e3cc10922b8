// The web app over real HTTP: feed responses, conditional requests, encodings, HEAD, 404s, rotation,
// landing page, health, metrics, rate limit, log redaction.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { Writable } from 'node:stream';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedsAfterPull } from '../../src/feeds/feeds-after-pull.ts';
import { FeedTokens, untilEveryServerKnows } from '../../src/feeds/tokens.ts';
import { openStore } from '../../src/store/index.ts';
import { createApp } from '../../src/web/app.ts';
import { type RunningServer, startServer } from '../../src/web/server.ts';
import { type Harness, SECRET, startHarness } from '../feeds/harness.ts';
import { parseBoth } from '../feeds/parse.ts';

interface Res {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function request(
  url: string,
  opts: { method?: string; headers?: Record<string, string> } = {},
): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers ?? {}, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

let h: Harness;
let server: RunningServer;
let token: string;
let teamId: number;

beforeAll(async () => {
  h = await startHarness();
  server = await h.serve();
  const team = h.sandbox.school.teams[0]!;
  teamId = team.id;
  token = (await h.tokens.ensure('hill', 'team', team.id)).token!;
});
afterAll(async () => {
  await h?.close();
});

describe('GET /feeds/<token>.ics', () => {
  it('200 with the calendar, headers for caching, and a body both parsers read', async () => {
    const r = await request(`${server.url}/feeds/${token}.ics`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect(r.headers['cache-control']).toBe('private, max-age=300');
    expect(r.headers.vary).toBe('Accept-Encoding');
    expect(r.headers.etag).toMatch(/^"[\w-]{20,}"$/);
    expect(Date.parse(r.headers['last-modified']!)).not.toBeNaN();
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(Number(r.headers['content-length'])).toBe(r.body.length);
    expect(r.headers['referrer-policy']).toBe('no-referrer');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['x-powered-by']).toBeUndefined();
    const parsed = parseBoth(r.body.toString('utf8'));
    expect(parsed.events.length).toBeGreaterThan(5);
    expect(parsed.name).toContain(h.sandbox.school.teams[0]!.name);
  });

  it('gzip and brotli when accepted, the same calendar, with their own ETags', async () => {
    const plain = await request(`${server.url}/feeds/${token}.ics`);
    const gz = await request(`${server.url}/feeds/${token}.ics`, {
      headers: { 'accept-encoding': 'gzip, deflate' },
    });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(plain.body)).toBe(true);
    expect(gz.body.length).toBeLessThan(plain.body.length / 3);
    const br = await request(`${server.url}/feeds/${token}.ics`, {
      headers: { 'accept-encoding': 'gzip, br' },
    });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
    const noBr = await request(`${server.url}/feeds/${token}.ics`, {
      headers: { 'accept-encoding': 'br;q=0, gzip' },
    });
    expect(noBr.headers['content-encoding']).toBe('gzip');
    expect(new Set([plain.headers.etag, gz.headers.etag, br.headers.etag]).size).toBe(3);
  });

  it("304 for If-None-Match (any encoding's tag) and If-Modified-Since; 200 when stale", async () => {
    const first = await request(`${server.url}/feeds/${token}.ics`, {
      headers: { 'accept-encoding': 'gzip' },
    });
    const etag = first.headers.etag!;
    const again = await request(`${server.url}/feeds/${token}.ics`, {
      headers: { 'accept-encoding': 'gzip', 'if-none-match': etag },
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    expect(again.headers['cache-control']).toBe('private, max-age=300');
    const otherEncoding = await request(`${server.url}/feeds/${token}.ics`, {
      headers: { 'if-none-match': `W/${etag}` },
    });
    expect(otherEncoding.status).toBe(304);
    const stale = await request(`${server.url}/feeds/${token}.ics`, {
      headers: { 'if-none-match': '"nope", "x"' },
    });
    expect(stale.status).toBe(200);
    const ims = await request(`${server.url}/feeds/${token}.ics`, {
      headers: { 'if-modified-since': first.headers['last-modified']! },
    });
    expect(ims.status).toBe(304);
    const old = await request(`${server.url}/feeds/${token}.ics`, {
      headers: {
        'if-modified-since': new Date(Date.parse(first.headers['last-modified']!) - 1000).toUTCString(),
      },
    });
    expect(old.status).toBe(200);
    // If-None-Match wins over If-Modified-Since.
    const both = await request(`${server.url}/feeds/${token}.ics`, {
      headers: { 'if-none-match': '"nope"', 'if-modified-since': first.headers['last-modified']! },
    });
    expect(both.status).toBe(200);
  });

  it('HEAD gives the GET headers without a body', async () => {
    const get = await request(`${server.url}/feeds/${token}.ics`, { headers: { 'accept-encoding': 'gzip' } });
    const head = await request(`${server.url}/feeds/${token}.ics`, {
      method: 'HEAD',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    for (const k of [
      'etag',
      'last-modified',
      'content-type',
      'content-length',
      'content-encoding',
      'cache-control',
    ]) {
      expect(head.headers[k], k).toBe(get.headers[k]);
    }
  });

  it('404 alike for unknown, malformed and rotated tokens; the new URL works', async () => {
    const unknown = await request(`${server.url}/feeds/${'A'.repeat(32)}.ics`);
    const malformed = await request(`${server.url}/feeds/short.ics`);
    const page = await request(`${server.url}/feeds/${'B'.repeat(32)}`);
    for (const r of [unknown, malformed, page]) {
      expect(r.status).toBe(404);
      // A parent who opens a dead link in a browser is told what to do; a calendar app sees the 404.
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      const html = r.body.toString();
      expect(html).toMatch(/<html lang="en">/);
      expect(html).toMatch(/<meta name="viewport" content="width=device-width, initial-scale=1">/);
      expect(html).toMatch(/<title>[^<]+<\/title>/);
      expect(html.match(/<h1>/g)).toHaveLength(1);
      expect(html).toMatch(/<main>[\s\S]*<\/main>/);
      expect(html).toContain('ask the office of Hillcrest College for the new calendar link');
      expect(r.body.equals(unknown.body)).toBe(true);
    }
    const rotated = await h.tokens.rotate('hill', 'team', teamId);
    expect(rotated.token).not.toBe(token);
    const old = await request(`${server.url}/feeds/${token}.ics`);
    expect(old.status).toBe(404);
    expect(old.body.equals(unknown.body)).toBe(true);
    expect(old.headers['content-type']).toBe(unknown.headers['content-type']);
    const fresh = await request(`${server.url}/feeds/${rotated.token}.ics`);
    expect(fresh.status).toBe(200);
    token = rotated.token!;
  });
});

describe('token cache', () => {
  it('a rotation through this server’s store takes effect on the very next request', async () => {
    const team = h.sandbox.school.teams[2]!;
    const before = (await h.tokens.ensure('hill', 'team', team.id)).token!;
    // Asked twice: the second answer comes from the server's memory of the token.
    expect((await request(`${server.url}/feeds/${before}.ics`)).status).toBe(200);
    expect((await request(`${server.url}/feeds/${before}.ics`)).status).toBe(200);
    const after = await h.tokens.rotate('hill', 'team', team.id);
    expect((await request(`${server.url}/feeds/${before}.ics`)).status).toBe(404);
    expect((await request(`${server.url}/feeds/${after.token}.ics`)).status).toBe(200);
  });

  it('a rotation made elsewhere (another connection, as another process) takes effect within the bound', async () => {
    const team = h.sandbox.school.teams[1]!;
    const before = (await h.tokens.ensure('hill', 'team', team.id)).token!;
    expect((await request(`${server.url}/feeds/${before}.ics`)).status).toBe(200);
    expect((await request(`${server.url}/feeds/${before}.ics`)).status).toBe(200);
    const elsewhere = await openStore({ file: path.join(h.dir, 'rostercal.sqlite'), migrate: false });
    try {
      const after = await new FeedTokens(elsewhere, SECRET).rotate('hill', 'team', team.id);
      // What `rostercal feeds rotate` and the admin page wait for before they say the old URL is dead.
      await untilEveryServerKnows();
      expect((await request(`${server.url}/feeds/${before}.ics`)).status).toBe(404);
      expect((await request(`${server.url}/feeds/${after.token}.ics`)).status).toBe(200);
    } finally {
      await elsewhere.close();
    }
  });
});

describe('landing page', () => {
  it('escaped HTML with subscribe links, the URL, a QR code and a strict CSP', async () => {
    const r = await request(`${server.url}/feeds/${token}`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['content-security-policy']).toContain("default-src 'none'");
    expect(r.headers['referrer-policy']).toBe('no-referrer');
    const html = r.body.toString();
    const https = `https://cal.example.org/feeds/${token}.ics`;
    const webcal = `webcal://cal.example.org/feeds/${token}.ics`;
    expect(html).toContain(`href="${webcal}"`);
    expect(html).toContain(`href="https://calendar.google.com/calendar/r?cid=${encodeURIComponent(webcal)}"`);
    expect(html).toContain(
      `https://outlook.live.com/calendar/0/addfromweb?url=${encodeURIComponent(https)}&amp;name=`,
    );
    expect(html).toContain(
      `https://outlook.office.com/calendar/0/addfromweb?url=${encodeURIComponent(https)}&amp;name=`,
    );
    expect(html).toContain(`value="${https}"`);
    expect(html).toMatch(/<svg[^>]*viewBox/);
  });
});

const METRICS_TOKEN = 'metrics-token-for-the-http-test-0123456789';

describe('health, readiness, metrics, logs', () => {
  it('/healthz, /readyz and /metrics with low-cardinality labels', async () => {
    expect((await request(`${server.url}/healthz`)).status).toBe(200);
    const ready = await request(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body.toString())).toEqual({ status: 'ready' });
    await request(`${server.url}/feeds/${token}.ics`);
    await request(`${server.url}/no/such/page`);
    // Not on the families' port by default: what it counts (absence reports, routes) is not theirs to read.
    const open = await request(`${server.url}/metrics`);
    expect(open.status).toBe(404);
    expect(open.body.toString()).not.toContain('rostercal_');
    const withToken = await h.serve({ metricsToken: METRICS_TOKEN });
    const refused = await request(`${withToken.url}/metrics`, {
      headers: { authorization: 'Bearer not-the-metrics-token-0123456789abcdef' },
    });
    expect(refused.status).toBe(401);
    expect(refused.body.toString()).not.toContain('rostercal_');
    const scraped = await request(`${withToken.url}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(scraped.status).toBe(200);
    const m = scraped.body.toString();
    expect(m).toMatch(
      /rostercal_http_requests_total\{route="\/feeds\/:token\.ics",method="GET",status="200"\} \d+/,
    );
    expect(m).toMatch(
      /rostercal_http_requests_total\{route="\/feeds\/:token\.ics",method="GET",status="404"\} \d+/,
    );
    expect(m).toMatch(/route="unmatched"/);
    expect(m).toMatch(/rostercal_feed_renders_total\{scope="team"\} \d+/);
    expect(m).toContain('rostercal_sync_runs_total');
    expect(m).not.toContain(token);
    expect(m).not.toContain('/no/such/page');
  });

  it('the after-pull step counts the run and re-renders issued feeds', async () => {
    const summary = await h.pull('incremental');
    const step = feedsAfterPull({ feeds: h.feeds, metrics: h.metrics });
    const ok = await step.run({
      store: h.store,
      school: h.school,
      summary,
      log: pino({ level: 'silent' }),
      now: () => new Date(),
      flags: {},
      print: () => {},
    });
    expect(ok).toBe(true);
    const m = await h.metrics.registry.metrics();
    expect(m).toMatch(
      new RegExp(
        `rostercal_sync_runs_total\\{school="hill",kind="${summary.kind}",status="${summary.status}"\\} 1`,
      ),
    );
    expect(m).toMatch(/rostercal_upstream_requests_total\{school="hill"\} [1-9]/);
    expect(m).toMatch(/rostercal_sync_last_success_timestamp_seconds\{school="hill",kind="\w+"\} \d/);
  });

  it('readyz reports a sync that has failed for too long', async () => {
    // A failure after the harness's successful pull, looked at two hours later with a one-hour allowance.
    const started = new Date(Date.now() + 1000).toISOString();
    const id = await h.store.runs.startRun({ schoolId: 'hill', kind: 'incremental', at: started });
    await h.store.runs.finishRun(id, {
      status: 'failed',
      finishedAt: started,
      counts: {},
      upstreamRequests: 1,
      retries: 0,
      throttled: 0,
      errors: ['upstream unreachable'],
      warning: null,
    });
    const app = createApp({
      store: h.store,
      feeds: h.feeds,
      metrics: h.metrics,
      publicUrl: 'http://x',
      logger: pino({ level: 'silent' }),
      readiness: { maxSyncFailureMs: 3_600_000, now: () => new Date(Date.now() + 2 * 3_600_000) },
    });
    const s = await startServer(app, { port: 0, host: '127.0.0.1' });
    try {
      const r = await request(`${s.url}/readyz`);
      expect(r.status).toBe(503);
      expect(r.body.toString()).toContain('sync failing since');
      // Within the allowance the instance stays ready: stale feeds beat no feeds.
      const lenient = createApp({
        store: h.store,
        feeds: h.feeds,
        metrics: h.metrics,
        publicUrl: 'http://x',
        logger: pino({ level: 'silent' }),
        readiness: { maxSyncFailureMs: 3 * 3_600_000, now: () => new Date(Date.now() + 2 * 3_600_000) },
      });
      const s2 = await startServer(lenient, { port: 0, host: '127.0.0.1' });
      try {
        expect((await request(`${s2.url}/readyz`)).status).toBe(200);
      } finally {
        await s2.close(500);
      }
    } finally {
      await s.close(500);
    }
  });

  it('request logs carry no full token; the rate limit answers 429 with Retry-After', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const app = createApp({
      store: h.store,
      feeds: h.feeds,
      metrics: h.metrics,
      publicUrl: 'http://x',
      logger: pino({ level: 'info' }, sink),
      feedRateLimit: { perSecond: 1, burst: 3 },
    });
    const s = await startServer(app, { port: 0, host: '127.0.0.1' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await request(`${s.url}/feeds/${token}.ics`)).status);
      expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
      expect(statuses.slice(3)).toEqual([429, 429]);
      const limited = await request(`${s.url}/feeds/${token}.ics`);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((await request(`${s.url}/healthz`)).status).toBe(200);
    } finally {
      await s.close(500);
    }
    const log = lines.join('');
    expect(log).toContain(`/feeds/${token.slice(0, 6)}…`);
    expect(log).not.toContain(token);
    expect(log).not.toContain(token.slice(0, 12));
  });
});
