// /healthz and /readyz (web/health.ts) over HTTP, on a real SQLite store a pull from the sandbox filled: ready once
// the school has a successful pull; 503 naming the reason when it is too old, was never pulled or the store cannot
// be written; ?stale-ok keeps serving a replica that is only stale; no answer quotes a file path.
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthRoutes } from '../../src/web/health.ts';
import { type RunningServer, startServer } from '../../src/web/server.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';

let h: Harness;
let server: RunningServer;
const HOUR = 3_600_000;

beforeAll(async () => {
  h = await startHarness({ seed: 21 });
  const app = express();
  const later = () => new Date(new Date(h.sandbox.now()).getTime() + 5 * HOUR);
  app.use(
    '/fresh',
    healthRoutes({ store: h.store, now: () => new Date(h.sandbox.now()), maxPullAgeMs: () => HOUR }),
  );
  app.use('/old', healthRoutes({ store: h.store, now: later, maxPullAgeMs: () => HOUR }));
  app.use(
    '/unwritable',
    healthRoutes({
      store: h.store,
      probeWrite: async () => {
        throw new Error('disk I/O error writing /var/lib/rostercal/data/rostercal.sqlite-wal');
      },
    }),
  );
  app.use(
    '/scheduler',
    healthRoutes({ store: h.store, schedulerProblems: () => ({ hill: 'a fire was skipped: store busy' }) }),
  );
  server = await startServer(app, { port: 0, host: '127.0.0.1' });
}, 120_000);
afterAll(async () => {
  await server?.close(500);
  await h?.close();
});

async function get(
  path: string,
): Promise<{ status: number; cache: string | null; body: Record<string, unknown> }> {
  const res = await fetch(`${server.url}${path}`);
  return {
    status: res.status,
    cache: res.headers.get('cache-control'),
    body: (await res.json()) as Record<string, unknown>,
  };
}

describe('/healthz and /readyz', () => {
  it('/healthz answers ok, never cached', async () => {
    expect(await get('/fresh/healthz')).toEqual({ status: 200, cache: 'no-store', body: { status: 'ok' } });
  });

  it('/readyz is ready after a successful pull within the allowed age', async () => {
    expect(await get('/fresh/readyz')).toEqual({ status: 200, cache: 'no-store', body: { status: 'ready' } });
  });

  it('a last success older than allowed: 503 degraded naming the school and the age; ?stale-ok serves', async () => {
    const r = await get('/old/readyz');
    expect(r.status).toBe(503);
    expect(r.body.status).toBe('degraded');
    expect((r.body.sync as Record<string, string>).hill).toMatch(
      /^last successful pull finished .*, 30\d min ago \(allowed: 60 min\)$/,
    );
    const staleOk = await get('/old/readyz?stale-ok');
    expect(staleOk.status).toBe(200);
    expect(staleOk.body.status).toBe('serving');
  });

  it('a school never pulled makes it 503: no pull has succeeded yet', async () => {
    await h.store.records.upsertSchool({ id: 'newcomer', name: 'Newcomer', timeZone: 'UTC' });
    const r = await get('/fresh/readyz');
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ status: 'degraded', sync: { newcomer: 'no pull has succeeded yet' } });
  });

  it('a refused probe write: 503 unavailable naming it without the file path; ?stale-ok serves', async () => {
    const r = await get('/unwritable/readyz');
    expect(r.status).toBe(503);
    expect(r.body.status).toBe('unavailable');
    expect(String(r.body.store)).toMatch(/^cannot be written: disk I\/O error/);
    expect(JSON.stringify(r.body)).not.toContain('/var/lib');
    expect((await get('/unwritable/readyz?stale-ok')).status).toBe(200);
  });

  it("the scheduler's trouble is named with the school's own", async () => {
    const r = await get('/scheduler/readyz');
    expect(r.status).toBe(503);
    expect((r.body.sync as Record<string, string>).hill).toBe('a fire was skipped: store busy');
  });
});
