// Total failure fails fast (issue 41), the transport's part, on a time scale of milliseconds (the limits are the
// client's `outage` option; the defaults, 70/30/85 s, are exercised through the real CLI in
// test/failures/total-failure.test.ts). A read that spends its retries while nothing has answered makes the next
// read a probe: one attempt, then UpstreamDownError. An endpoint failing alone keeps its retries.
import { afterEach, describe, expect, it } from 'vitest';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import { ServerError, TimeoutError, UpstreamDownError } from '../../src/upstream/errors.ts';
import { type FixtureServer, type Reply, startFixtureServer } from './fixture-server.ts';

const EMPTY_PAGE = { data: [], pagination: { currentPage: 1, lastPage: 1, pageLength: 200, numRecords: 0 } };
const LIMITS = { spanMs: 600, downAfterMs: 300, limitMs: 900 };
const BROKEN: Reply = { status: 500, body: { message: 'broken' } };

let server: FixtureServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function clientFor(url: string, timeoutMs = 2000) {
  return createUpstreamClient({
    baseUrl: url,
    token: 't',
    rateLimit: { requestsPerSecond: Number.POSITIVE_INFINITY, concurrency: 4 },
    backoff: { baseMs: 20, capMs: 320, maxRetries: 8 },
    timeoutMs,
    outage: LIMITS,
  });
}

async function drain(it: AsyncIterable<unknown>): Promise<unknown> {
  try {
    for await (const _ of it);
    return null;
  } catch (err) {
    return err;
  }
}

const requestsTo = (path: string) => server!.requests.filter((r) => r.path === path).length;

describe('an upstream failing every read', () => {
  it('5xx: the first read spends its retries; the next is one attempt, UpstreamDownError', async () => {
    server = await startFixtureServer(() => BROKEN);
    const client = clientFor(server.url);
    const began = Date.now();
    expect(await drain(client.departments())).toBeInstanceOf(ServerError);
    expect(requestsTo('/departments')).toBeGreaterThan(3);
    const down = await drain(client.yearGroups());
    expect(down).toBeInstanceOf(UpstreamDownError);
    expect((down as Error).message).toMatch(
      /answered nothing but errors and timeouts for \d+ s \(last: GET \/year-groups failed with 500/,
    );
    expect(requestsTo('/year-groups')).toBe(1);
    expect(Date.now() - began).toBeLessThan(LIMITS.limitMs + 500);
  });

  it('timeouts: bounded by time as well as count, and the probe by what is left of the limit', async () => {
    server = await startFixtureServer(() => ({ hang: true }));
    const client = clientFor(server.url, 150);
    const began = Date.now();
    expect(await drain(client.departments())).toBeInstanceOf(TimeoutError);
    // 150 ms attempts and waits of 20, 40, 80…: a third attempt would end past the 600 ms span.
    expect(requestsTo('/departments')).toBeLessThanOrEqual(3);
    expect(await drain(client.yearGroups())).toBeInstanceOf(UpstreamDownError);
    expect(Date.now() - began).toBeLessThan(LIMITS.limitMs + 500);
  });

  it('a new run tries afresh: beginRun forgets the trouble, and the read gets its retries again', async () => {
    server = await startFixtureServer(() => BROKEN);
    const client = clientFor(server.url);
    await drain(client.departments());
    expect(await drain(client.yearGroups())).toBeInstanceOf(UpstreamDownError);
    client.beginRun();
    expect(await drain(client.activities())).toBeInstanceOf(ServerError);
    expect(requestsTo('/activities')).toBeGreaterThan(3);
  });
});

describe('one endpoint failing alone', () => {
  it('keeps its retries; the next read (a probe) answers, and every read after it is as ever', async () => {
    server = await startFixtureServer((req) => (req.path === '/departments' ? BROKEN : { body: EMPTY_PAGE }));
    const client = clientFor(server.url);
    expect(await drain(client.departments())).toBeInstanceOf(ServerError);
    const first = requestsTo('/departments');
    expect(first).toBeGreaterThan(3);
    expect(await drain(client.yearGroups())).toBeNull();
    expect(await drain(client.activities())).toBeNull();
    // Not down: the broken endpoint, asked again, is retried as before.
    expect(await drain(client.departments())).toBeInstanceOf(ServerError);
    expect(requestsTo('/departments') - first).toBeGreaterThan(3);
  });
});
