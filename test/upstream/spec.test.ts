// The sandbox and the client checked against the API description itself (docs/spec, a copy of the service's
// published description), not against the client's own schemas: the test reads the spec's tables (each resource's
// fields, the page-length limits, the error codes) and holds the sandbox's raw JSON and the client's requests to
// them. A field, a limit or a code added to the spec is checked without touching this file.
import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import { TEST_NOW } from '../support/clock.ts';
import { testSchool } from '../sync/helpers.ts';
import { all, clientOf } from './sandbox-helpers.ts';

const SPEC = readFileSync(
  path.join(import.meta.dirname, '..', '..', 'docs', 'spec', 'extracurricular-data-service-api.md'),
  'utf8',
);

/** The spec's sections (any heading level) with the rows of their tables, cells trimmed. */
function sections(md: string): Map<string, string[][]> {
  const out = new Map<string, string[][]>();
  let rows: string[][] = [];
  for (const line of md.split('\n')) {
    const heading = /^#{2,6}\s+(.+?)\s*$/.exec(line);
    if (heading) {
      rows = [];
      out.set(heading[1]!, rows);
    } else if (/^\|/.test(line) && !/^\|[-| ]+\|$/.test(line))
      rows.push(
        line
          .split('|')
          .slice(1, -1)
          .map((c) => c.trim()),
      );
  }
  return out;
}
const SECTIONS = sections(SPEC);
const names = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** A record's top-level fields the spec lists as always there (not optional, "if any", or seen only in an example). */
function requiredFields(section: string): string[] {
  const title = [...SECTIONS.keys()].find((k) => k === section || k.startsWith(`${section} (`));
  if (!title) throw new Error(`the spec has no section "${section}"`);
  const rows = SECTIONS.get(title)!;
  const fields = rows
    .filter((r) => r[0] !== 'Field')
    .filter(
      ([, type = '']) => !/optional|if any|appears in|example\)|single-[a-z]+ (example|response)/i.test(type),
    )
    .flatMap(([cell = '']) => names(cell))
    .filter((n) => /^[A-Za-z]+$/.test(n));
  expect(fields.length, `fields of ${section}`).toBeGreaterThan(0);
  return fields;
}

/** The Limits table: endpoint path → default and maximum page length. */
function pageLimits(): Map<string, { default: number; max: number }> {
  const paths: Record<string, string> = {
    sessions: '/sessions',
    teams: '/teams',
    students: '/students',
    'student teams': '/student-teams',
    'attendance records': '/attendance-records',
    users: '/users',
    incidents: '/incidents',
    locations: '/locations',
    departments: '/departments',
    'year groups': '/year-groups',
    activities: '/activities',
    'activity selections': '/activity-selections',
    'pre-explained absences': '/pre-explained-absences',
  };
  const out = new Map<string, { default: number; max: number }>();
  for (const [what = '', value = ''] of SECTIONS.get('Limits') ?? []) {
    const m = /^Page length, (.+)$/.exec(what);
    const v = /default (\d+), maximum (\d+)/.exec(value);
    if (!m || !v) continue;
    for (const r of m[1]!.split(/,\s*/)) {
      const p = paths[r.trim()];
      if (!p) throw new Error(`a page-length row names "${r}", which this test does not know`);
      out.set(p, { default: Number(v[1]), max: Number(v[2]) });
    }
  }
  return out;
}

/** The Errors table's status codes. */
const errorCodes = () =>
  (SECTIONS.get('Errors') ?? []).map(([code = '']) => Number(code)).filter((n) => n >= 400 && n < 600);

let sb: Sandbox;
let yearStart: string;
let yearEnd: string;

async function raw(pathAndQuery: string, token = sb.token): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${sb.url}${pathAndQuery}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body };
}

beforeAll(async () => {
  sb = await startSandbox({ seed: 11, scale: 'small', now: TEST_NOW });
  const starts = sb.school.sessions.map((s) => s.start);
  const ends = sb.school.sessions.map((s) => s.end);
  yearStart = new Date(Math.min(...starts) - 86_400_000).toISOString();
  yearEnd = new Date(Math.max(...ends) + 86_400_000).toISOString();
});
afterAll(() => sb?.close());

describe('the spec as this test reads it', () => {
  it('has the tables the checks below rely on', () => {
    expect(pageLimits().size).toBeGreaterThanOrEqual(13);
    expect(errorCodes()).toEqual(expect.arrayContaining([400, 401, 403, 404, 409, 422, 429]));
    expect(requiredFields('Session')).toEqual(
      expect.arrayContaining(['id', 'startDateTime', 'studentParentNotes']),
    );
  });
});

describe('the sandbox against the spec', () => {
  const listings: [section: string, path: string, query: string][] = [
    ['Session', '/sessions', 'includeTeams=true&includeStaff=true&startDateTime={S}&endDateTime={E}'],
    ['Team', '/teams', 'includeStaff=true&includeStudents=true&includePositions=true'],
    ['Student', '/students', ''],
    ['Student Team', '/student-teams', ''],
    ['User', '/users', ''],
    ['Location', '/locations', ''],
    ['Activity', '/activities', ''],
    ['Pre-explained absence', '/pre-explained-absences', ''],
  ];
  for (const [section, route, query] of listings) {
    it(`GET ${route}: every record carries the fields the spec's ${section} table lists`, async () => {
      const q = query
        .replace('{S}', encodeURIComponent(yearStart))
        .replace('{E}', encodeURIComponent(yearEnd));
      const { status, body } = await raw(`${route}?pageLength=50${q ? `&${q}` : ''}`);
      expect(status).toBe(200);
      const data = (body as { data: Record<string, unknown>[] }).data;
      expect(data.length).toBeGreaterThan(0);
      const required = requiredFields(section);
      for (const record of data)
        for (const f of required) expect(Object.hasOwn(record, f), `${route} #${record.id}: ${f}`).toBe(true);
    });
  }

  it('every listing: the spec’s default page length when none is asked for, never more than its maximum', async () => {
    for (const [route, limit] of pageLimits()) {
      const range =
        route === '/sessions'
          ? `&startDateTime=${encodeURIComponent(yearStart)}&endDateTime=${encodeURIComponent(yearEnd)}`
          : '';
      const plain = await raw(`${route}?page=1${range}`);
      expect(plain.status, route).toBe(200);
      const p = plain.body as { data: unknown[]; pagination: { pageLength: number } };
      expect(Number(p.pagination.pageLength), `${route} default`).toBe(limit.default);
      expect(p.data.length, route).toBeLessThanOrEqual(limit.default);
      const over = await raw(`${route}?page=1&pageLength=${limit.max + 50}${range}`);
      if (over.status === 200)
        expect(
          (over.body as { data: unknown[] }).data.length,
          `${route} over the maximum`,
        ).toBeLessThanOrEqual(limit.max);
      else expect(over.status, route).toBe(400);
    }
  });

  it('answers the spec’s error codes where the spec says it does', async () => {
    const seen = new Set<number>();
    seen.add((await raw('/departments', 'not-the-token')).status);
    seen.add((await raw('/sessions/999999999')).status);
    seen.add((await raw(`/sessions?startDateTime=${encodeURIComponent(yearStart)}`)).status);
    const absence = sb.school.absences[0]!;
    const ro = await fetch(`${sb.url}/pre-explained-absences`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${sb.readonlyToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ids: [absence.id] }),
    });
    seen.add(ro.status);
    for (const code of [400, 401, 403, 404]) {
      expect(errorCodes()).toContain(code);
      expect(seen, `a ${code} among ${[...seen]}`).toContain(code);
    }
  });
});

describe('the client against the spec', () => {
  let relay: Server;
  let asked: string[];
  let dir: string;
  let store: Store;
  beforeAll(async () => {
    asked = [];
    // Every request the client sends, on its way to the sandbox.
    relay = createServer(async (req, res) => {
      asked.push(req.url ?? '');
      const body: Buffer[] = [];
      for await (const c of req) body.push(c as Buffer);
      const upstream = await fetch(`${sb.url}${req.url}`, {
        method: req.method,
        headers: { authorization: req.headers.authorization ?? '', 'content-type': 'application/json' },
        body: body.length ? Buffer.concat(body) : undefined,
      });
      res.writeHead(upstream.status, {
        'content-type': upstream.headers.get('content-type') ?? 'text/plain',
      });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    dir = await mkdtemp(path.join(tmpdir(), 'rostercal-spec-'));
    store = await openStore({ dataDir: dir });
  });
  afterAll(async () => {
    await store?.close();
    await new Promise((r) => relay?.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a full pull asks every listing for no more than the spec’s maximum page length', async () => {
    const url = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
    const summary = await pullSchool({
      store,
      client: clientOf({ url, token: sb.token }),
      school: testSchool({ url, token: sb.token }),
      kind: 'full',
      now: () => new Date(TEST_NOW),
    });
    expect(summary.status).toBe('succeeded');
    const limits = pageLimits();
    let checked = 0;
    for (const u of asked) {
      const parsed = new URL(u, 'http://x');
      const limit = limits.get(parsed.pathname);
      if (!limit) continue;
      const asks = Number(parsed.searchParams.get('pageLength') ?? limit.default);
      expect(asks, u).toBeLessThanOrEqual(limit.max);
      expect(asks, u).toBeGreaterThanOrEqual(1);
      expect(Number(parsed.searchParams.get('page') ?? 1), u).toBeGreaterThanOrEqual(1);
      checked++;
    }
    expect(checked).toBeGreaterThan(5);
  });

  it('turns each error code of the spec into a typed error carrying that status', async () => {
    for (const code of errorCodes()) {
      const server = createServer((_req, res) => {
        res.writeHead(code, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end(JSON.stringify({ error: { status: code, message: `spec says ${code}` } }));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const err = await all(
          clientOf({ url, token: 't' }, { backoff: { maxRetries: 0 } }).departments(),
        ).catch((e: unknown) => e);
        expect(err, String(code)).toBeInstanceOf(UpstreamError);
        expect((err as UpstreamError).status).toBe(code);
        expect((err as Error).constructor.name, String(code)).not.toBe('UpstreamError');
      } finally {
        await new Promise((r) => server.close(r));
      }
    }
  });
});
