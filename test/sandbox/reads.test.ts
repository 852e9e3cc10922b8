import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { all, call, get, type Json } from './helpers.ts';

const NOW = '2026-03-02T01:00:00.000Z';
let sb: Sandbox;

beforeAll(async () => {
  sb = await startSandbox({ seed: 7, now: NOW });
});
afterAll(async () => {
  await sb.close();
});

describe('auth', () => {
  it('401 without a token or with a wrong one, JSON error body', async () => {
    const none = await call(sb, 'GET', '/students', undefined, null);
    expect(none.status).toBe(401);
    expect(none.json).toEqual({ error: { status: 401, message: expect.any(String) } });
    expect((await call(sb, 'GET', '/students', undefined, 'nope')).status).toBe(401);
  });
  it('the read-only token reads', async () => {
    expect((await call(sb, 'GET', '/students', undefined, sb.readonlyToken)).status).toBe(200);
  });
});

describe('paging', () => {
  it('students: default 100, max 200, envelope shape', async () => {
    const env = await get(sb, '/students', { pageLength: 10 });
    expect(env.pagination).toEqual({
      currentPage: 1,
      lastPage: Math.ceil(env.pagination.numRecords / 10),
      pageLength: 10,
      numRecords: expect.any(Number),
    });
    expect(env.data).toHaveLength(10);
    const current = sb.school.students.filter((s) => s.current);
    expect(env.pagination.numRecords).toBe(current.length);
    const everyone = await all(sb, '/students', { pageLength: 7 });
    expect(everyone.map((s) => s.id)).toEqual(current.map((s) => s.id));
  });

  it('teams: default 15, larger pageLength accepted but 50 served', async () => {
    const big = await startSandbox({ seed: 3, scale: 'school', now: NOW });
    try {
      const def = await get(big, '/teams');
      expect(def.data).toHaveLength(15);
      const capped = await get(big, '/teams', { pageLength: 500 });
      expect(capped.data).toHaveLength(50);
      const visible = big.school.teams.filter((t) => !t.hidden).length;
      expect(capped.pagination.lastPage).toBe(Math.ceil(visible / 50));
      const teams = await all(big, '/teams', { pageLength: 500 });
      expect(teams).toHaveLength(visible);
      const sessions = await get(big, '/sessions', { pageLength: 5000 });
      expect(sessions.data).toHaveLength(1000);
      const students = await get(big, '/students', { pageLength: 5000 });
      expect(students.data).toHaveLength(200);
      expect((await get(big, '/student-teams', { pageLength: 5000 })).data).toHaveLength(300);
      expect((await get(big, '/student-teams')).data).toHaveLength(100);
    } finally {
      await big.close();
    }
  });

  it('attendance records: default 30', async () => {
    const env = await get(sb, '/attendance-records', { timePeriod: 'last-90-days' });
    expect(env.data).toHaveLength(30);
  });

  it('rejects a bad page or pageLength with 400', async () => {
    expect((await call(sb, 'GET', '/students?page=0')).status).toBe(400);
    expect((await call(sb, 'GET', '/students?pageLength=abc')).status).toBe(400);
  });
});

describe('sessions', () => {
  it('default range is 4 weeks either side of now, chronological', async () => {
    const data = await all(sb, '/sessions', { pageLength: 1000 });
    const now = Date.parse(NOW);
    const expected = sb.school.sessions.filter(
      (s) => s.start < now + 28 * 86400000 && s.end > now - 28 * 86400000,
    );
    expect(data.map((s) => s.id)).toEqual(expected.map((s) => s.id));
    const starts = data.map((s) => Date.parse(s.startDateTime as string));
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
  });

  it('startDateTime without endDateTime is a 400', async () => {
    const r = await call(sb, 'GET', `/sessions?startDateTime=${encodeURIComponent(NOW)}`);
    expect(r.status).toBe(400);
    expect((r.json.error as Json).message).toMatch(/endDateTime/);
  });

  it('a malformed array parameter is a 400 with a clear message', async () => {
    const r = await call(sb, 'GET', '/sessions?activityIds=%5B1');
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: { status: 400, message: expect.stringMatching(/activityIds/) } });
  });

  it('single session 404 and shape', async () => {
    expect((await call(sb, 'GET', '/sessions/999999999')).status).toBe(404);
    const s = sb.school.sessions[0]!;
    const r = await call(sb, 'GET', `/sessions/${s.id}?includeCustomFieldsMetadata=true`);
    expect(r.status).toBe(200);
    expect((r.json.data as Json).id).toBe(s.id);
    expect(r.json.customFieldsMetadata).toBeTypeOf('object');
  });
});

describe('determinism', () => {
  it('the same seed and now give the same school over HTTP', async () => {
    const again = await startSandbox({ seed: 7, now: NOW });
    try {
      const a = await all(sb, '/sessions', { pageLength: 1000, includeTeams: true, includeStaff: true });
      const b = await all(again, '/sessions', { pageLength: 1000, includeTeams: true, includeStaff: true });
      expect(b).toEqual(a);
    } finally {
      await again.close();
    }
  });
});

describe('clock and updated filters', () => {
  it('updatedAfter / updatedBefore on teams, attendance records and incidents follow the records', async () => {
    const cut = Date.parse(NOW) - 30 * 86_400_000;
    const iso = new Date(cut).toISOString();
    const teams = await all(sb, '/teams', { updatedAfter: iso });
    expect(teams.map((t) => t.id)).toEqual(
      sb.school.teams.filter((t) => !t.hidden && t.updatedAt > cut).map((t) => t.id),
    );
    const older = await all(sb, '/teams', { updatedBefore: iso });
    expect(teams.length + older.length).toBe(sb.school.teams.filter((t) => !t.hidden).length);
    const att = await all(sb, '/attendance-records', {
      timePeriod: 'last-90-days',
      updatedAfter: iso,
      pageLength: 300,
    });
    expect(att.length).toBe(sb.school.attendanceRecords.filter((r) => r.updatedAt > cut).length);
    const inc = await all(sb, '/incidents', { updatedBefore: iso });
    expect(inc.length).toBe(sb.school.incidents.filter((i) => i.updatedAt < cut).length);
    expect((await call(sb, 'GET', '/teams?updatedAfter=yesterday')).status).toBe(400);
  });

  it('setNow moves the default session range', async () => {
    const other = await startSandbox({ seed: 7, now: NOW });
    try {
      const later = '2026-06-01T00:00:00.000Z';
      other.setNow(later);
      expect(Date.parse(other.now()) - Date.parse(later)).toBeLessThan(5000);
      const data = await all(other, '/sessions', { pageLength: 1000 });
      const t = Date.parse(later);
      const want = other.school.sessions.filter(
        (s) => s.start < t + 28 * 86_400_000 && s.end > t - 28 * 86_400_000,
      );
      expect(data.map((s) => s.id)).toEqual(want.map((s) => s.id));
    } finally {
      await other.close();
    }
  });
});

describe('the default clock', () => {
  it('is the real time, in its answers’ Date too: a sandbox left at its default plays an upstream in step', async () => {
    const other = await startSandbox({ seed: 7 });
    try {
      expect(Math.abs(Date.parse(other.now()) - Date.now())).toBeLessThan(2000);
      const res = await fetch(`${other.url}/departments`, {
        headers: { authorization: `Bearer ${other.token}` },
      });
      // The Date header's resolution is one second.
      expect(Math.abs(Date.parse(res.headers.get('date')!) - Date.now())).toBeLessThan(3000);
    } finally {
      await other.close();
    }
  });
});

describe('routing', () => {
  it('unknown paths are 404, unsupported methods 405, both as JSON errors', async () => {
    const missing = await call(sb, 'GET', '/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ error: { status: 404, message: expect.any(String) } });
    expect((await call(sb, 'DELETE', '/students', {})).status).toBe(405);
    const stats = await (await fetch(`${sb.url}/_sandbox/stats`)).json();
    expect(stats).toMatchObject({ routes: { 'GET /sessions/{id}': { byStatus: { 404: 1 } } } });
  });
});
