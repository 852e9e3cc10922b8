// List endpoints: page by page following `lastPage`, at the endpoint's page length (client.ts) unless the caller
// asks otherwise. Each record is parsed on its own, so a record that cannot be understood is reported (with its id and
// a short reason) and skipped while the rest of the page is kept. An envelope that cannot be understood is an
// error: without it nothing about the page can be trusted.
import type { z } from 'zod';
import type { CustomFieldMeta } from '../domain/types.ts';
import { TimeSlice } from '../util/event-loop.ts';
import type { MalformedRecord, Page } from './api.ts';
import { canonicalCheck } from './canonical.ts';
import { InvalidResponseError } from './errors.ts';
import type { Transport } from './http.ts';
import { indexCustomFields, issueReason, normaliseCustomFieldsMetadata } from './normalise.ts';
import { encodeQuery, type QueryValue } from './query.ts';
import { zListEnvelope } from './schemas.ts';

/**
 * Listing pages asked for ahead of the one in hand. Two, not one: the server no longer idles while this process
 * parses, which shows on loopback and more behind latency (bench:sync). Each page waiting holds its parsed body,
 * so each one ahead raises a sync's peak memory; three ahead was no faster beyond noise.
 */
export const PAGES_AHEAD = 2;

export interface ListEndpoint<S extends z.ZodType, T> {
  /** `/sessions` */
  path: string;
  /** Records per page asked for unless the caller says (client.ts: the spec's maximum, but for sessions). */
  pageLength: number;
  schema: S;
  normalise: (raw: z.output<S>, ctx: RecordContext) => T;
}

export interface RecordContext {
  customFields: ReadonlyMap<string, CustomFieldMeta> | null;
}

export type Report = (record: MalformedRecord) => void;

type Answer = Awaited<ReturnType<Transport['jsonWithClock']>>;

/** The id of a raw record, for reporting, whatever its type. */
export function rawId(raw: unknown): string | null {
  if (raw === null || typeof raw !== 'object') return null;
  const id = (raw as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : null;
}

/** Parse and normalise one record; on failure report it and return undefined. */
export function parseRecord<S extends z.ZodType, T>(
  raw: unknown,
  schema: S,
  normalise: (parsed: z.output<S>, ctx: RecordContext) => T,
  ctx: RecordContext,
  endpoint: string,
  report: (m: MalformedRecord) => void,
): T | undefined {
  try {
    // Already in output form: zod would return it unchanged, so skip it (see canonical.ts).
    if (canonicalCheck(schema)(raw)) return normalise(raw as z.output<S>, ctx);
  } catch (err) {
    report({ endpoint, id: rawId(raw), reason: err instanceof Error ? err.message : 'cannot be normalised' });
    return undefined;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    report({ endpoint, id: rawId(raw), reason: issueReason(parsed.error.issues) });
    return undefined;
  }
  try {
    return normalise(parsed.data, ctx);
  } catch (err) {
    report({ endpoint, id: rawId(raw), reason: err instanceof Error ? err.message : 'cannot be normalised' });
    return undefined;
  }
}

/** Custom field metadata of a response: fields in display order; unreadable entries reported. */
export function readCustomFieldsMetadata(
  raw: Record<string, unknown> | null | undefined,
  endpoint: string,
  report: Report,
): CustomFieldMeta[] | undefined {
  if (raw == null) return undefined;
  const { fields, bad } = normaliseCustomFieldsMetadata(raw);
  for (const b of bad) report({ endpoint, id: b.key, reason: `customFieldsMetadata: ${b.reason}` });
  return fields;
}

/**
 * Pages of one listing. With `pagesAhead` > 0, the requests for the next pages (up to that many beyond the one
 * in hand, never past the last page announced) go out as soon as the current page has arrived: the server
 * prepares them while this process validates page n and the caller handles it, and over a slow network their
 * round trips overlap instead of adding up. Pages are still yielded one by one, in order. A caller that stops
 * early leaves at most `pagesAhead` requests, which are cancelled.
 */
export async function* paginate<S extends z.ZodType, T>(
  transport: Transport,
  ep: ListEndpoint<S, T>,
  params: Readonly<Record<string, QueryValue>>,
  onMalformed: Report,
  pagesAhead = PAGES_AHEAD,
): AsyncGenerator<Page<T>> {
  const endpoint = `GET ${ep.path}`;
  const pageLength = (params.pageLength as number | undefined) ?? ep.pageLength;
  let page = (params.page as number | undefined) ?? 1;
  const abandon = new AbortController();
  const request = (p: number): Promise<Answer> => {
    const pending = transport.jsonWithClock({
      method: 'GET',
      endpoint,
      path: ep.path,
      query: encodeQuery({ ...params, page: p, pageLength }),
      read: true,
      signal: abandon.signal,
    });
    // Awaited below; this only keeps a prefetch the caller never asks for from being an unhandled rejection.
    pending.catch(() => {});
    return pending;
  };
  // Requests already made for pages beyond the one in hand, by page number.
  const ahead = new Map<number, Promise<Answer>>();
  let next = request(page);
  // A page of 1,000 sessions takes ~100 ms to check and normalise: the web server of the same process answers
  // in between.
  const slice = new TimeSlice();
  try {
    for (;;) {
      const { json: body, clock } = await next;
      const envelope = zListEnvelope.safeParse(body);
      if (!envelope.success) {
        throw new InvalidResponseError(endpoint, 200, `page ${page}: ${issueReason(envelope.error.issues)}`);
      }
      const { data, customFieldsMetadata } = envelope.data;
      const paging = envelope.data.pagination ?? envelope.data.paginationData;
      // No pagination object (seen on student-teams): the response is the whole listing.
      const currentPage = paging?.currentPage ?? page;
      const lastPage = paging ? paging.lastPage : currentPage;
      // Advance by the page asked for, not the one echoed, so a server that misreports currentPage cannot loop
      // us; an empty page means the listing shrank under us and there is nothing further.
      const more = paging !== null && paging !== undefined && page < lastPage && data.length > 0;
      if (more) {
        for (let p = page + 1; p <= Math.min(lastPage, page + pagesAhead); p++) {
          if (!ahead.has(p)) ahead.set(p, request(p));
        }
      }

      const skipped: MalformedRecord[] = [];
      const report: Report = (m) => {
        skipped.push(m);
        onMalformed(m);
      };
      const fields = readCustomFieldsMetadata(customFieldsMetadata, endpoint, report);
      const ctx: RecordContext = { customFields: indexCustomFields(fields) };
      const records: T[] = [];
      for (const raw of data) {
        await slice.pause();
        const record = parseRecord(raw, ep.schema, ep.normalise, ctx, endpoint, report);
        if (record !== undefined) records.push(record);
      }
      const result: Page<T> = {
        records,
        skipped,
        currentPage,
        lastPage,
        numRecords: paging?.numRecords ?? data.length,
        received: data.length,
      };
      if (paging?.pageLength != null) result.pageLength = paging.pageLength;
      if (fields !== undefined) result.customFieldsMetadata = fields;
      if (clock) result.clock = clock;
      yield result;
      if (!more) return;
      page++;
      next = ahead.get(page) ?? request(page);
      ahead.delete(page);
    }
  } finally {
    abandon.abort();
  }
}
