// Who may read /metrics (web/metrics-access.ts), over HTTP: on the public app only a request bearing METRICS_TOKEN
// (401 otherwise, and no route at all without a token); on METRICS_PORT's own app /metrics and nothing else.
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics.ts';
import { metricsApp, metricsRoute } from '../../src/web/metrics-access.ts';
import { type RunningServer, startServer } from '../../src/web/server.ts';

const TOKEN = 'metrics-token-0123456789abcdef';
const metrics = createMetrics({ defaultMetrics: false });
const servers: Record<'public' | 'closed' | 'port' | 'portWithToken', RunningServer> = {} as never;

beforeAll(async () => {
  const pub = express();
  pub.use(metricsRoute({ metrics, token: TOKEN }));
  pub.use((_req, res) => res.status(404).send('not here'));
  const closed = express();
  closed.use(metricsRoute({ metrics, token: null }));
  closed.use((_req, res) => res.status(404).send('not here'));
  servers.public = await startServer(pub, { port: 0, host: '127.0.0.1' });
  servers.closed = await startServer(closed, { port: 0, host: '127.0.0.1' });
  servers.port = await startServer(metricsApp({ metrics, token: null }), { port: 0, host: '127.0.0.1' });
  servers.portWithToken = await startServer(metricsApp({ metrics, token: TOKEN }), {
    port: 0,
    host: '127.0.0.1',
  });
});
afterAll(async () => {
  for (const s of Object.values(servers)) await s.close(500);
});

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

describe('/metrics on the public app', () => {
  it('200 with the registry to the bearer of METRICS_TOKEN, never cached', async () => {
    const res = await fetch(`${servers.public.url}/metrics`, { headers: bearer(TOKEN) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.text()).toMatch(/^# HELP /m);
  });

  it('401 with a challenge for no bearer or a wrong one, saying what it needs', async () => {
    for (const headers of [{}, bearer('wrong-token'), bearer(`${TOKEN}x`), { authorization: TOKEN }]) {
      const res = await fetch(`${servers.public.url}/metrics`, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="rostercal metrics"');
      expect(await res.text()).toBe('401: /metrics needs Authorization: Bearer <METRICS_TOKEN>\n');
    }
  });

  it('without METRICS_TOKEN there is no /metrics route (the app answers 404)', async () => {
    const res = await fetch(`${servers.closed.url}/metrics`, { headers: bearer(TOKEN) });
    expect(res.status).toBe(404);
  });
});

describe("METRICS_PORT's app", () => {
  it('serves /metrics to whoever reaches it, and 404 for anything else', async () => {
    const ok = await fetch(`${servers.port.url}/metrics`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/^# TYPE /m);
    const other = await fetch(`${servers.port.url}/feeds/x`);
    expect(other.status).toBe(404);
    expect(await other.text()).toBe('404: this address serves /metrics only\n');
  });

  it('asks for the token there too when one is set', async () => {
    expect((await fetch(`${servers.portWithToken.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${servers.portWithToken.url}/metrics`, { headers: bearer(TOKEN) })).status).toBe(
      200,
    );
  });
});
