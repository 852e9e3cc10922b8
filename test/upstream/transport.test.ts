// Retries, backoff, typed errors, token hygiene and pacing, against a real HTTP server that answers with the
// failure shapes under test. Waiting is injected: the recorded waits are the schedule, and the tests take no time.
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  InvalidResponseError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  StalledError,
  TimeoutError,
  UnauthorizedError,
  UnprocessableError,
  UpstreamError,
} from '../../src/upstream/errors.ts';
import { type FixtureServer, type Reply, type SeenRequest, startFixtureServer } from './fixture-server.ts';

const TOKEN = 'tok_SECRET_4f9a8b7c6d5e';
// Long enough that a loaded machine never trips it on an ordinary reply; hanging replies trip it.
const TIMEOUT_MS = 2000;
const EMPTY_PAGE = { data: [], pagination: { currentPage: 1, lastPage: 1, pageLength: 200, numRecords: 0 } };

let server: FixtureServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function scripted(replies: Reply[], fallback: Reply = { body: EMPTY_PAGE }) {
  return (_req: SeenRequest) => replies.shift() ?? fallback;
}

function clientFor(url: string, extra: Partial<Parameters<typeof createUpstreamClient>[0]> = {}) {
  const waits: number[] = [];
  const client = createUpstreamClient({
    baseUrl: url,
    token: TOKEN,
    // No pacing here, so every recorded wait is a backoff wait.
    rateLimit: { requestsPerSecond: Number.POSITIVE_INFINITY, concurrency: 4 },
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...extra,
  });
  return { client, waits };
}

async function drain(it: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of it);
}

describe('backoff', () => {
  it('429s are retried after 1, 2, 4, 8 s, and the stats show it', async () => {
    const tooMany: Reply = { status: 429, body: { message: 'Too many requests' } };
    server = await startFixtureServer(scripted([tooMany, tooMany, tooMany, tooMany]));
    const { client, waits } = clientFor(server.url);
    await drain(client.departments());
    expect(waits).toEqual([1000, 2000, 4000, 8000]);
    expect(server.requests).toHaveLength(5);
    expect(client.stats()).toEqual({
      'GET /departments': { requests: 5, retries: 4, throttled: 4, errors: 0 },
    });
    expect(client.totals()).toEqual({ requests: 5, retries: 4, throttled: 4, errors: 0 });
  });

  it('the doubling is capped and the retries are bounded; then RateLimitedError', async () => {
    server = await startFixtureServer(() => ({ status: 429, body: '' }));
    const { client, waits } = clientFor(server.url, { backoff: { capMs: 3000, maxRetries: 4 } });
    await expect(drain(client.departments())).rejects.toBeInstanceOf(RateLimitedError);
    expect(waits).toEqual([1000, 2000, 3000, 3000]);
    expect(server.requests).toHaveLength(5);
    expect(client.stats()['GET /departments']).toEqual({ requests: 5, retries: 4, throttled: 5, errors: 0 });
  });

  it('a Retry-After (seconds or HTTP date) longer than the scheduled wait is honoured', async () => {
    const now = Date.parse('2026-03-01T00:00:00Z');
    server = await startFixtureServer(
      scripted([
        { status: 429, headers: { 'retry-after': '3' } },
        { status: 429, headers: { 'retry-after': new Date(now + 5000).toUTCString() } },
        { status: 429, headers: { 'retry-after': '1' } },
      ]),
    );
    const { client, waits } = clientFor(server.url, { now: () => now });
    await drain(client.departments());
    expect(waits).toEqual([3000, 5000, 4000]);
  });

  it('a Retry-After beyond maxRetryAfterMs is not waited out', async () => {
    server = await startFixtureServer(scripted([{ status: 429, headers: { 'retry-after': '3600' } }]));
    const { client, waits } = clientFor(server.url);
    const err = await drain(client.departments()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(3_600_000);
    expect(waits).toEqual([]);
  });

  it('5xx, dropped connections, timeouts and answers cut short on reads are retried on the same schedule', async () => {
    server = await startFixtureServer(
      scripted([
        { status: 503, body: 'down' },
        { destroy: true },
        { hang: true },
        { status: 500 },
        { body: '{"data": [{"id": 1, "na' },
      ]),
    );
    const retries: (number | null)[] = [];
    const { client, waits } = clientFor(server.url, {
      timeoutMs: TIMEOUT_MS,
      onRetry: (r) => retries.push(r.status),
    });
    await drain(client.locations());
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16_000]);
    expect(retries).toEqual([503, null, null, 500, 200]);
    expect(client.stats()['GET /locations']).toEqual({ requests: 6, retries: 5, throttled: 0, errors: 5 });
  });

  it('writes: a 429 is retried (nothing was done), a 5xx, a timeout or an answer cut short is not', async () => {
    server = await startFixtureServer(
      scripted([
        { status: 429 },
        { body: { data: [] } },
        { status: 502, body: { error: 'Bad gateway' } },
        { hang: true },
        // Applied, then the answer cut short on the way: asking again could write it twice.
        { body: '{"data": [{"id": 1, "stud' },
      ]),
    );
    const { client, waits } = clientFor(server.url, { timeoutMs: TIMEOUT_MS });
    await expect(client.createAbsences([])).resolves.toEqual([]);
    expect(waits).toEqual([1000]);
    await expect(client.deleteAbsences([1])).rejects.toBeInstanceOf(ServerError);
    await expect(client.updateSessions({ email: 'a@b.c', sessions: [] })).rejects.toBeInstanceOf(
      TimeoutError,
    );
    await expect(client.createAbsences([])).rejects.toBeInstanceOf(InvalidResponseError);
    expect(waits).toEqual([1000]);
    expect(server.requests.map((r) => r.method)).toEqual(['POST', 'POST', 'DELETE', 'PATCH', 'POST']);
    expect(client.stats()).toEqual({
      'POST /pre-explained-absences': { requests: 3, retries: 1, throttled: 1, errors: 1 },
      'DELETE /pre-explained-absences': { requests: 1, retries: 0, throttled: 0, errors: 1 },
      'PATCH /sessions': { requests: 1, retries: 0, throttled: 0, errors: 1 },
    });
  });

  it('4xx other than 429 are not retried', async () => {
    server = await startFixtureServer(() => ({ status: 404, body: { message: 'Session not found' } }));
    const { client, waits } = clientFor(server.url);
    const err = await client.session(99).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).endpoint).toBe('GET /sessions/99');
    expect((err as NotFoundError).reason).toBe('Session not found');
    expect(waits).toEqual([]);
    expect(client.stats()['GET /sessions/{id}']).toEqual({
      requests: 1,
      retries: 0,
      throttled: 0,
      errors: 1,
    });
  });
});

describe('typed errors never carry the token', () => {
  const cases: [number, new (...args: never[]) => UpstreamError][] = [
    [400, BadRequestError],
    [401, UnauthorizedError],
    [403, ForbiddenError],
    [404, NotFoundError],
    [409, ConflictError],
    [422, UnprocessableError],
    [429, RateLimitedError],
    [500, ServerError],
    [503, ServerError],
  ];

  function assertClean(err: unknown) {
    expect(err).toBeInstanceOf(UpstreamError);
    const e = err as UpstreamError;
    for (const text of [
      e.message,
      e.stack ?? '',
      JSON.stringify(e),
      inspect(e, { depth: 10, showHidden: true }),
      String(e),
    ]) {
      expect(text).not.toContain(TOKEN);
    }
  }

  it.each(cases)(
    '%i → %o, with endpoint and reason, token scrubbed even when the server echoes it',
    async (status, cls) => {
      // A hostile or careless server echoing the Authorization header back in its error body.
      server = await startFixtureServer((req) => ({
        status,
        body: { message: `rejected ${String(req.headers.authorization)} for ${req.path}` },
      }));
      const { client } = clientFor(server.url, { backoff: { maxRetries: 0 } });
      const err = await client.createUsers({ users: [{ firstName: 'A' }] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(cls);
      const e = err as UpstreamError;
      expect(e.status).toBe(status);
      expect(e.endpoint).toBe('POST /users');
      expect(e.reason).toBe('rejected Bearer [redacted] for /users');
      expect(e.message).toBe(`POST /users failed with ${status}: rejected Bearer [redacted] for /users`);
      assertClean(err);
    },
  );

  it('a timeout whose timer fired long past its time is this process stalled, not the upstream: a read is tried again', async () => {
    // Outside tester: serve stopped (SIGSTOP) mid-pull for ~56 s; on SIGCONT the 30-s timer fired before the answer
    // waiting in the socket was read, and the run failed as 'no response within 30000 ms', an upstream fault.
    // Here the loop is held in the server's handler (same process) for 3 s against a 300-ms timeout.
    let first = true;
    server = await startFixtureServer(() => {
      if (first) {
        first = false;
        const until = performance.now() + 3_000;
        while (performance.now() < until);
      }
      return { body: EMPTY_PAGE };
    });
    const retries: (string | null)[] = [];
    const { client } = clientFor(server.url, { timeoutMs: 300, onRetry: (r) => retries.push(r.reason) });
    await drain(client.departments());
    expect(server.requests).toHaveLength(2);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatch(/this process did not run for \d+\.\d s .*not the upstream service/);
    // A write is not tried again (it may have been applied), and says whose the fault was.
    await server.close();
    server = await startFixtureServer(() => {
      const until = performance.now() + 3_000;
      while (performance.now() < until);
      return { body: EMPTY_PAGE };
    });
    const writes = clientFor(server.url, { timeoutMs: 300 });
    const err = await writes.client.createAbsences([]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StalledError);
  }, 30_000);

  it('network failure, timeout and a non-JSON body are typed and clean too', async () => {
    server = await startFixtureServer(scripted([{ hang: true }, { body: 'this is not json' }]));
    const url = server.url;
    const { client } = clientFor(url, { timeoutMs: TIMEOUT_MS, backoff: { maxRetries: 0 } });
    const timeout = await drain(client.yearGroups()).catch((e: unknown) => e);
    expect(timeout).toBeInstanceOf(TimeoutError);
    assertClean(timeout);
    const invalid = await drain(client.yearGroups()).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(InvalidResponseError);
    assertClean(invalid);
    await server.close();
    server = undefined;
    const network = await drain(client.yearGroups()).catch((e: unknown) => e);
    expect(network).toBeInstanceOf(NetworkError);
    expect((network as NetworkError).reason).toMatch(/^network error \((ECONNREFUSED|UND_ERR_SOCKET)\)$/);
    assertClean(network);
    // The client itself does not expose the token either.
    expect(inspect(client, { depth: 10, showHidden: true })).not.toContain(TOKEN);
  });

  it('an envelope without data is an error, not an empty listing', async () => {
    server = await startFixtureServer(() => ({ body: { records: [] } }));
    const { client } = clientFor(server.url);
    const err = await drain(client.sessions()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as InvalidResponseError).reason).toMatch(/^page 1: data/);
  });

  it('the token goes only in the Authorization header', async () => {
    server = await startFixtureServer(() => ({ body: EMPTY_PAGE }));
    const { client } = clientFor(server.url);
    await drain(client.departments({ pageLength: 5 }));
    const req = server.requests[0]!;
    expect(req.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect([...req.query.keys()].sort()).toEqual(['page', 'pageLength']);
    expect(req.query.get('pageLength')).toBe('5');
    expect(req.query.toString()).not.toContain(TOKEN);
  });
});

describe('pages ahead', () => {
  const page = (n: number, lastPage = 3) => ({
    body: {
      data: [{ id: n, name: `D${n}` }],
      pagination: { currentPage: n, lastPage, pageLength: 1, numRecords: lastPage },
    },
  });
  const asked = (s: FixtureServer) => s.requests.map((r) => r.query.get('page'));

  it('asks for the next two pages while the current one is handled, and abandons them when the caller stops', async () => {
    const s = await startFixtureServer((req) =>
      req.query.get('page') === '1' ? page(1, 5) : { hang: true },
    );
    server = s;
    const { client } = clientFor(s.url, { timeoutMs: 10_000 });
    for await (const p of client.departments({ pageLength: 1 })) {
      expect(p.records.map((d) => d.id)).toEqual([1]);
      // While the caller is still busy with page 1, pages 2 and 3 are already on their way; 4 waits its turn.
      await s.until(() => s.requests.length >= 3);
      expect(asked(s)).toEqual(['1', '2', '3']);
      break;
    }
    // The abandoned requests are cancelled (the server sees both connections close unanswered), neither retried nor
    // reported as errors; nothing was asked for after them.
    await s.until(() => s.abandoned.length >= 2);
    expect(s.abandoned.map((r) => r.query.get('page')).sort()).toEqual(['2', '3']);
    expect(s.requests).toHaveLength(3);
    expect(client.stats()['GET /departments']).toEqual({ requests: 3, retries: 0, throttled: 0, errors: 0 });
  });

  it('yields pages in order whichever answers first, asks for each once and never past the last page', async () => {
    // Page 2 is the slowest to answer: page 3 arrives before it.
    server = await startFixtureServer((req) => {
      const n = Number(req.query.get('page'));
      return { ...page(n, 4), delayMs: n === 2 ? 80 : 0 };
    });
    const { client } = clientFor(server.url);
    const ids: number[] = [];
    for await (const p of client.departments({ pageLength: 1 })) ids.push(...p.records.map((d) => d.id));
    expect(ids).toEqual([1, 2, 3, 4]);
    expect(asked(server).sort()).toEqual(['1', '2', '3', '4']);
  });

  it('a page ahead that fails fails the listing only when its turn comes', async () => {
    server = await startFixtureServer((req) =>
      req.query.get('page') === '3'
        ? { status: 404, body: { message: 'gone' } }
        : page(Number(req.query.get('page'))),
    );
    const { client } = clientFor(server.url);
    const ids: number[] = [];
    const err = await (async () => {
      for await (const p of client.departments({ pageLength: 1 })) ids.push(...p.records.map((d) => d.id));
    })().catch((e: unknown) => e);
    expect(ids).toEqual([1, 2]);
    expect(err).toBeInstanceOf(NotFoundError);
  });

  it('a listing that shrinks under us is read to its new end', async () => {
    // Page 1 announces five pages; page 2 says there are only two.
    server = await startFixtureServer((req) => {
      const n = Number(req.query.get('page'));
      return n === 1 ? page(1, 5) : n === 2 ? page(2, 2) : { hang: true };
    });
    const { client } = clientFor(server.url, { timeoutMs: 10_000 });
    const ids: number[] = [];
    for await (const p of client.departments({ pageLength: 1 })) ids.push(...p.records.map((d) => d.id));
    expect(ids).toEqual([1, 2]);
    // Page 3, asked for ahead of time, is abandoned, not waited for (it may be cancelled before it even reaches
    // the server); nothing past it was asked for. The client's own count says what it asked for, whether or not
    // the request has reached the server yet, so no wait for stragglers.
    expect(asked(server).slice(0, 2)).toEqual(['1', '2']);
    expect(client.totals().requests).toBe(3);
    expect(asked(server).filter((p) => Number(p) > 3)).toEqual([]);
  });

  it('can be set to 0: one request per page asked for', async () => {
    server = await startFixtureServer((req) => page(Number(req.query.get('page'))));
    const { client } = clientFor(server.url, { pagesAhead: 0 });
    for await (const _ of client.departments({ pageLength: 1 })) break;
    expect(server.requests).toHaveLength(1);
    const all: number[] = [];
    for await (const p of client.departments({ pageLength: 1 })) all.push(...p.records.map((d) => d.id));
    expect(all).toEqual([1, 2, 3]);
    // Ordered by the second listing rather than a wait: nothing was asked for ahead of the first one's page 1.
    expect(asked(server)).toEqual(['1', '1', '2', '3']);
  });

  it('refuses a number of pages ahead that is not a whole number ≥ 0', () => {
    for (const bad of [-1, 1.5, Number.NaN]) {
      expect(() =>
        createUpstreamClient({ baseUrl: 'http://127.0.0.1:1', token: TOKEN, pagesAhead: bad }),
      ).toThrow(/"pagesAhead" must be a whole number ≥ 0/);
    }
  });
});

describe('client-side rate limit', () => {
  it('holds concurrency and spaces request starts', async () => {
    let inFlight = 0;
    let peak = 0;
    let arrived = 0;
    let paired: (() => void) | undefined;
    server = await startFixtureServer(async () => {
      arrived++;
      inFlight++;
      peak = Math.max(peak, inFlight);
      // Each answer waits until a second request is in flight (or the last one has come): the overlap the limit
      // allows is reached by events, however slowly the machine starts the next request.
      if (inFlight >= 2 || arrived === 8) {
        paired?.();
        paired = undefined;
      } else {
        await new Promise<void>((r) => {
          paired = r;
        });
      }
      // Then 200 ms (ten of the client's 20 ms spacings) in which a client that let a third request go would show
      // it. A correct client passes however long this lasts; it is the window the check needs, not an ordering:
      // with 30 ms a loaded machine could start the third request too late to be seen, and a wrong client pass.
      await new Promise((r) => setTimeout(r, 200));
      inFlight--;
      return { body: EMPTY_PAGE };
    });
    const client = createUpstreamClient({
      baseUrl: server.url,
      token: TOKEN,
      rateLimit: { requestsPerSecond: 50, concurrency: 2 },
    });
    const started = Date.now();
    await Promise.all(Array.from({ length: 8 }, () => drain(client.departments())));
    const elapsed = Date.now() - started;
    expect(peak).toBe(2);
    // 8 starts at 50/s: the last starts ≥ 140 ms after the first.
    expect(elapsed).toBeGreaterThanOrEqual(135);
    expect(client.totals().requests).toBe(8);
  });

  it('rejects bad options naming the field', () => {
    expect(() => createUpstreamClient({ baseUrl: 'nope', token: TOKEN })).toThrow(/"baseUrl"/);
    expect(() => createUpstreamClient({ baseUrl: 'http://x', token: '' })).toThrow(/"token"/);
    expect(() => createUpstreamClient({ baseUrl: 'http://x', token: TOKEN, timeoutMs: 0 })).toThrow(
      /"timeoutMs"/,
    );
    expect(() =>
      createUpstreamClient({
        baseUrl: 'http://x',
        token: TOKEN,
        rateLimit: { requestsPerSecond: 0, concurrency: 1 },
      }),
    ).toThrow(/requestsPerSecond/);
    expect(() => createUpstreamClient({ baseUrl: 'http://x', token: TOKEN, backoff: { capMs: -1 } })).toThrow(
      /capMs/,
    );
  });
});
