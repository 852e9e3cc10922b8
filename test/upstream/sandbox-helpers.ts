// Shared by the contract tests: a sandbox over HTTP and small readers of the client's async pages.
import { inspect } from 'node:util';
import { expect } from 'vitest';
import type { Page, UpstreamClient, UpstreamClientOptions } from '../../src/upstream/api.ts';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';

export const NOW = '2026-03-02T00:00:00.000Z';

export async function collect<T>(it: AsyncIterable<Page<T>>): Promise<{ records: T[]; pages: Page<T>[] }> {
  const pages: Page<T>[] = [];
  for await (const p of it) pages.push(p);
  return { records: pages.flatMap((p) => p.records), pages };
}

export async function all<T>(it: AsyncIterable<Page<T>>): Promise<T[]> {
  const { records, pages } = await collect(it);
  expect(pages.flatMap((p) => p.skipped)).toEqual([]);
  return records;
}

export const ids = (records: readonly { id: number }[]): number[] =>
  records.map((r) => r.id).sort((a, b) => a - b);

export function clientOf(
  sb: { url: string; token: string },
  extra: Partial<UpstreamClientOptions> = {},
): UpstreamClient {
  return createUpstreamClient({
    baseUrl: sb.url,
    token: sb.token,
    rateLimit: { requestsPerSecond: Number.POSITIVE_INFINITY, concurrency: 4 },
    ...extra,
  });
}

/** The error is typed and none of its renderings carries the token. */
export function assertTokenFree(err: unknown, token: string): UpstreamError {
  expect(err).toBeInstanceOf(UpstreamError);
  const e = err as UpstreamError;
  for (const text of [
    e.message,
    e.stack ?? '',
    JSON.stringify(e),
    inspect(e, { depth: 10, showHidden: true }),
  ]) {
    expect(text).not.toContain(token);
  }
  return e;
}
