// The sandbox's HTTP face (src/sandbox/server.ts), over HTTP: the order of its checks (control routes before
// everything, then the rate limit, the token, injected faults, the route), its errors (JSON, a gateway's HTML for
// 502), the listing faults it plays and their page arithmetic, the listing cache a write empties, the stats by
// route name and the `Date` of its own clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { call, type Envelope, type Json } from './helpers.ts';

const NOW = '2026-11-20T09:30:00.000Z';

describe('the sandbox server', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ seed: 4, scale: 'small', now: NOW });
  });
  afterAll(() => sb?.close());

  const page = async (path: string) => (await call(sb, 'GET', path)).json as unknown as Envelope;
  const chaos = (listingFaults: unknown) =>
    fetch(`${sb.url}/_sandbox/chaos`, { method: 'POST', body: JSON.stringify({ listingFaults }) });

  it('answers on its own clock, and refuses without a token, a read-only token writing, unknown routes and bad JSON', async () => {
    // The sandbox's clock, started at NOW (the real one is weeks away), in its health and its `Date` header.
    const health = await fetch(`${sb.url}/_sandbox/health`);
    const { ok, now } = (await health.json()) as { ok: boolean; now: string };
    expect(ok).toBe(true);
    expect(Math.abs(Date.parse(now) - Date.parse(NOW))).toBeLessThan(60_000);
    expect(Math.abs(Date.parse(health.headers.get('date')!) - Date.parse(NOW))).toBeLessThan(60_000);

    const anonymous = await call(sb, 'GET', '/teams', undefined, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    expect(anonymous.json).toEqual({
      error: { status: 401, message: 'a valid API token is required (Authorization: Bearer <token>)' },
    });
    expect((await call(sb, 'GET', '/teams', undefined, 'wrong')).status).toBe(401);
    expect((await call(sb, 'GET', '/teams', undefined, sb.readonlyToken)).status).toBe(200);
    const readOnly = await call(sb, 'PATCH', '/sessions', { sessions: [] }, sb.readonlyToken);
    expect(readOnly.status).toBe(403);
    expect(readOnly.json).toEqual({ error: { status: 403, message: 'this token may only read' } });

    expect((await call(sb, 'DELETE', '/teams')).status).toBe(405);
    expect((await call(sb, 'GET', '/nothing')).json).toEqual({
      error: { status: 404, message: 'no such endpoint: GET /nothing' },
    });
    expect((await call(sb, 'PATCH', '/sessions', '{not json')).json).toEqual({
      error: { status: 400, message: 'request body is not valid JSON' },
    });
    expect((await call(sb, 'GET', '/sessions?format=pdf')).status).toBe(400);
  });

  it('plays listing faults: a short lastPage, pages that overlap by one, a truncated listing', async () => {
    const whole = await page('/students?pageLength=5');
    const all = whole.pagination.numRecords;
    expect(all).toBeGreaterThan(10);
    const pages = Math.ceil(all / 5);
    const second = await page('/students?pageLength=5&page=2');
    try {
      expect((await chaos({ students: 'short' })).status).toBe(200);
      expect((await page('/students?pageLength=5')).pagination).toMatchObject({
        lastPage: pages - 1,
        numRecords: all,
      });

      await chaos({ students: 'overlap' });
      const overlapped = await page('/students?pageLength=5&page=2');
      expect(overlapped.data[0]).toEqual(whole.data[4]);
      expect(overlapped.data.slice(1)).toEqual(second.data.slice(0, 4));

      await chaos({ students: 'truncated' });
      const truncated = await page('/students?pageLength=5');
      expect(truncated.pagination).toMatchObject({ numRecords: (pages - 1) * 5, lastPage: pages - 1 });
      expect((await page(`/students?pageLength=5&page=${pages}`)).data).toEqual([]);
      // Other listings are left alone.
      expect((await page('/users?pageLength=1')).pagination.lastPage).toBe(
        (await page('/users?pageLength=1')).pagination.numRecords,
      );

      const refused = await chaos({ students: 'sideways' });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as Json).error).toMatchObject({
        message: 'listingFaults.students must be one of short, overlap, truncated',
      });
    } finally {
      await chaos({});
    }
    expect((await page('/students?pageLength=5')).pagination).toMatchObject({
      lastPage: pages,
      numRecords: all,
    });
  });

  it('serves a listing again at once after a write (its cache is per state version), and counts by route name', async () => {
    await fetch(`${sb.url}/_sandbox/stats/reset`, { method: 'POST' });
    const actor = sb.school.users.find((u) => !u.frozen)!.email;
    const at = Date.parse(NOW);
    // In the default window of the listing (about now).
    const session = sb.school.sessions.find(
      (s) => !s.cancelled && s.start > at && s.start < at + 7 * 86_400_000,
    )!;
    const notes = async () => {
      const one = await call(sb, 'GET', `/sessions/${session.id}`);
      const listed = (await page('/sessions?pageLength=1000')).data.find((s) => s.id === session.id);
      return [(one.json.data as Json).studentParentNotes, listed?.studentParentNotes];
    };
    await notes();
    const written = await call(sb, 'PATCH', '/sessions', {
      email: actor,
      sessions: [{ id: session.id, studentParentNotes: 'Bring a towel (server test)' }],
    });
    expect(written.status).toBe(200);
    expect(await notes()).toEqual(['Bring a towel (server test)', 'Bring a towel (server test)']);
    expect((await call(sb, 'GET', '/sessions/abc')).status).toBe(404);

    const stats = (await (await fetch(`${sb.url}/_sandbox/stats`)).json()) as {
      total: number;
      routes: Record<string, { total: number; byStatus: Record<string, number> }>;
    };
    expect(stats.routes['GET /sessions/{id}']).toEqual({ total: 3, byStatus: { 200: 2, 404: 1 } });
    expect(stats.routes['GET /sessions']?.total).toBe(2);
    expect(stats.routes['PATCH /sessions']).toEqual({ total: 1, byStatus: { 200: 1 } });
    expect(stats.total).toBe(6);
  });
});

describe('the order of its checks', () => {
  it('answers 429 before asking for a token, and a 5xx fault only to a request it would serve; control routes pass', async () => {
    const clock = { t: 0 };
    const sb = await startSandbox({ seed: 4, scale: 'small', now: NOW, burst: 2, rateClock: () => clock.t });
    try {
      expect((await call(sb, 'GET', '/teams')).status).toBe(200);
      expect((await call(sb, 'GET', '/teams', undefined, null)).status).toBe(401);
      const limited = await call(sb, 'GET', '/teams', undefined, null);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await fetch(`${sb.url}/_sandbox/health`)).status).toBe(200);
      clock.t += 1_000;
      expect((await call(sb, 'GET', '/teams')).status).toBe(200);
    } finally {
      await sb.close();
    }

    const failing = await startSandbox({ seed: 4, scale: 'small', now: NOW, errorRate: 1 });
    try {
      // No token: refused before any fault is drawn.
      expect((await call(failing, 'GET', '/teams', undefined, null)).status).toBe(401);
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await call(failing, 'GET', '/teams'));
      expect(answers.map((a) => a.status).sort()).toEqual([500, 502, 503]);
      const gateway = answers.find((a) => a.status === 502)!;
      expect(gateway.headers.get('content-type')).toBe('text/html');
      expect(gateway.text).toContain('502 Bad Gateway');
      expect(answers.find((a) => a.status === 503)!.headers.get('retry-after')).toBe('1');
      expect(answers.find((a) => a.status === 500)!.json).toEqual({
        error: { status: 500, message: 'injected server fault (sandbox errorRate)' },
      });
      expect((await fetch(`${failing.url}/_sandbox/stats`)).status).toBe(200);
    } finally {
      await failing.close();
    }
  });
});
