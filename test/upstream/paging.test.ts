// List endpoints page by page (upstream/paging.ts), through the real client over HTTP against a fixture server:
// pages asked for ahead (never past the last page, cancelled when the caller stops early), yielded in order, the
// next page counted from the one asked for (not the one the server echoes), an empty page ending the listing, a
// record that cannot be understood reported with its id and skipped, an envelope that cannot be understood an error.
import { afterEach, describe, expect, it } from 'vitest';
import type { MalformedRecord, Page } from '../../src/upstream/api.ts';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import { InvalidResponseError } from '../../src/upstream/errors.ts';
import { rawId } from '../../src/upstream/paging.ts';
import { type FixtureServer, type SeenRequest, startFixtureServer } from './fixture-server.ts';

let server: FixtureServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const activity = (id: number) => ({ id, name: `Activity ${id}` });

/** An /activities listing of `lastPage` pages of two, each page's answer shaped by `shape`. */
function listing(
  lastPage: number,
  shape: (page: number, body: Record<string, unknown>) => unknown = (_, b) => b,
) {
  return (req: SeenRequest) => {
    const page = Number(req.query.get('page'));
    const body = {
      data: [activity(2 * page - 1), activity(2 * page)],
      pagination: { currentPage: page, lastPage, numRecords: 2 * lastPage, pageLength: 2 },
    };
    return { body: shape(page, body) };
  };
}

async function client(route: (req: SeenRequest) => { body: unknown }, pagesAhead?: number) {
  server = await startFixtureServer(route);
  const malformed: MalformedRecord[] = [];
  const c = createUpstreamClient({
    baseUrl: server.url,
    token: 'fixture-token',
    rateLimit: { requestsPerSecond: 1000, concurrency: 8 },
    backoff: { baseMs: 1, capMs: 5, maxRetries: 0 },
    onMalformed: (m) => malformed.push(m),
    ...(pagesAhead === undefined ? {} : { pagesAhead }),
  });
  return { c, malformed };
}

async function all<T>(pages: AsyncIterable<Page<T>>): Promise<Page<T>[]> {
  const out: Page<T>[] = [];
  for await (const p of pages) out.push(p);
  return out;
}

/** The pages asked for, in page order (those asked ahead go out together). */
const asked = () => server!.requests.map((r) => Number(r.query.get('page'))).sort((a, b) => a - b);

describe('paginate', () => {
  it('yields every page in order, asking two ahead and never past the last page', async () => {
    const { c } = await client(listing(4));
    const pages = await all(c.activities({ pageLength: 2 }));
    expect(pages.map((p) => p.records.map((r) => r.id))).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
      [7, 8],
    ]);
    expect(pages[0]).toMatchObject({
      currentPage: 1,
      lastPage: 4,
      numRecords: 8,
      received: 2,
      pageLength: 2,
    });
    expect(asked()).toEqual([1, 2, 3, 4]);
    expect(server!.requests.every((r) => r.query.get('pageLength') === '2')).toBe(true);
  });

  it('asks for the pages ahead as soon as a page arrives, and cancels them when the caller stops', async () => {
    // Pages past the first never answer: only the caller's stopping ends them.
    const first = listing(6);
    server = await startFixtureServer((req) => (req.query.get('page') === '1' ? first(req) : { hang: true }));
    const c = createUpstreamClient({
      baseUrl: server.url,
      token: 'fixture-token',
      rateLimit: { requestsPerSecond: 1000, concurrency: 8 },
    });
    for await (const page of c.activities({ pageLength: 2 })) {
      expect(page.currentPage).toBe(1);
      await server.until(() => server!.requests.length === 3);
      break;
    }
    await server.until(() => server!.abandoned.length === 2);
    expect(asked()).toEqual([1, 2, 3]);
  }, 10_000);

  it('asks one page at a time with no pages ahead', async () => {
    const { c } = await client(listing(3), 0);
    for await (const page of c.activities({ pageLength: 2 })) {
      expect(asked()).toEqual(Array.from({ length: page.currentPage }, (_, i) => i + 1));
    }
    expect(asked()).toEqual([1, 2, 3]);
  });

  it('counts on from the page it asked for when the server echoes another, and stops at an empty page', async () => {
    const stuck = listing(5, (page, body) => ({
      ...body,
      data: page === 4 ? [] : (body as { data: unknown[] }).data,
      pagination: { currentPage: 1, lastPage: 5, numRecords: 10 },
    }));
    const { c } = await client(stuck, 0);
    const pages = await all(c.activities({ pageLength: 2 }));
    expect(asked()).toEqual([1, 2, 3, 4]);
    expect(pages.map((p) => p.records.length)).toEqual([2, 2, 2, 0]);
  });

  it('takes a response without pagination as the whole listing', async () => {
    const { c } = await client(() => ({ body: { data: [activity(1), activity(2), activity(3)] } }));
    const pages = await all(c.activities({ page: 3 }));
    expect(pages).toHaveLength(1);
    expect(pages[0]).toMatchObject({ currentPage: 3, lastPage: 3, numRecords: 3, received: 3 });
  });

  it('reports and skips a record it cannot understand, keeping the rest of the page', async () => {
    const bad = listing(2, (page, body) =>
      page === 2 ? { ...body, data: [activity(3), { id: 9, name: { text: 'x' } }, 'not a record'] } : body,
    );
    const { c, malformed } = await client(bad);
    const pages = await all(c.activities({ pageLength: 2 }));
    expect(pages[1]!.records.map((r) => r.id)).toEqual([3]);
    expect(pages[1]!.received).toBe(3);
    expect(pages[1]!.skipped).toEqual(malformed);
    expect(malformed.map((m) => [m.endpoint, m.id])).toEqual([
      ['GET /activities', '9'],
      ['GET /activities', null],
    ]);
    expect(malformed[0]!.reason).toMatch(/name/);
  });

  it('refuses a page whose envelope it cannot understand, naming the page', async () => {
    const { c } = await client(listing(3, (page, body) => (page === 2 ? { items: [] } : body)));
    const pages = all(c.activities({ pageLength: 2 }));
    await expect(pages).rejects.toThrow(InvalidResponseError);
    await expect(all(c.activities({ pageLength: 2 }))).rejects.toThrow(/page 2: /);
  });
});

it('reads a raw record’s id for a report, whatever its type', () => {
  expect(rawId({ id: 7 })).toBe('7');
  expect(rawId({ id: 'a1' })).toBe('a1');
  expect(rawId({ id: { nested: 1 } })).toBeNull();
  expect(rawId(null)).toBeNull();
  expect(rawId('7')).toBeNull();
});
