// SQL for rendered feeds (rendered-feeds-repository.ts delegates here): one row per feed with its compressed
// bytes (gzip always, brotli once a client asked for it), the validators it was served with, and what it was
// made from. The bytes carry children's data, so they live in the same store with the same protections as the
// snapshot.
import type { Kysely, Transaction } from 'kysely';
import type { Id } from '../domain/types.ts';
import { yieldToEventLoop } from '../util/event-loop.ts';
import type { DB, RenderedFeedsTable } from './schema.ts';
import type { RenderedFeedRecord, RenderedFeedState, SchoolId, StoredFeedScope } from './types.ts';

type Executor = Kysely<DB> | Transaction<DB>;

/** node:sqlite returns BLOBs as Uint8Array, pg as Buffer: callers get a Buffer either way, without a copy. */
function buffer(v: Uint8Array): Buffer {
  return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

function toRecord(r: RenderedFeedsTable): RenderedFeedRecord {
  return {
    schoolId: r.school_id,
    scope: r.scope as StoredFeedScope,
    scopeId: Number(r.scope_id),
    dataVersion: Number(r.data_version),
    windowKey: r.window_key,
    inputs: r.inputs,
    etag: r.etag,
    lastModified: r.last_modified,
    gzip: buffer(r.gzip),
    br: r.br ? buffer(r.br) : null,
    eventCount: Number(r.event_count),
    trimmed: Number(r.trimmed),
    upcoming: r.upcoming,
    def: r.def,
    renderedAt: r.rendered_at,
  };
}

export async function getRenderedFeed(
  r: Executor,
  schoolId: SchoolId,
  scope: StoredFeedScope,
  scopeId: Id,
): Promise<RenderedFeedRecord | null> {
  const row = await r
    .selectFrom('rendered_feeds')
    .selectAll()
    .where('school_id', '=', schoolId)
    .where('scope', '=', scope)
    .where('scope_id', '=', scopeId)
    .executeTakeFirst();
  return row ? toRecord(row) : null;
}

/** Rows per read of listRenderedFeedStates: each row's columns after the bytes cost a walk through them. */
const STATES_PER_READ = 500;

/**
 * Every rendered feed of a school without its bytes: what a re-render decides with. Read in pages by key with
 * the event loop's turn between them: a district's 14,000 rows are half a second of reading in one statement,
 * which a web server sharing the process would wait out.
 */
export async function listRenderedFeedStates(r: Executor, schoolId: SchoolId): Promise<RenderedFeedState[]> {
  const out: RenderedFeedState[] = [];
  let after: { scope: string; scopeId: number } | null = null;
  for (;;) {
    let q = r
      .selectFrom('rendered_feeds')
      .select([
        'scope',
        'scope_id',
        'data_version',
        'window_key',
        'inputs',
        'etag',
        'last_modified',
        'rendered_at',
      ])
      .where('school_id', '=', schoolId);
    if (after) {
      const { scope, scopeId } = after;
      q = q.where((eb) =>
        eb.or([eb('scope', '>', scope), eb.and([eb('scope', '=', scope), eb('scope_id', '>', scopeId)])]),
      );
    }
    const rows = await q.orderBy('scope').orderBy('scope_id').limit(STATES_PER_READ).execute();
    for (const row of rows) {
      out.push({
        scope: row.scope as StoredFeedScope,
        scopeId: Number(row.scope_id),
        dataVersion: Number(row.data_version),
        windowKey: row.window_key,
        inputs: row.inputs,
        etag: row.etag,
        lastModified: row.last_modified,
        renderedAt: row.rendered_at,
      });
    }
    const last = out.at(-1);
    if (rows.length < STATES_PER_READ || !last) return out;
    after = { scope: last.scope, scopeId: last.scopeId };
    await yieldToEventLoop();
  }
}

export async function saveRenderedFeed(w: Executor, rec: RenderedFeedRecord): Promise<void> {
  const row: RenderedFeedsTable = {
    school_id: rec.schoolId,
    scope: rec.scope,
    scope_id: rec.scopeId,
    data_version: rec.dataVersion,
    window_key: rec.windowKey,
    inputs: rec.inputs,
    etag: rec.etag,
    last_modified: rec.lastModified,
    gzip: rec.gzip,
    br: rec.br,
    event_count: rec.eventCount,
    trimmed: rec.trimmed,
    upcoming: rec.upcoming,
    def: rec.def,
    rendered_at: rec.renderedAt,
  };
  const { school_id: _s, scope: _c, scope_id: _i, ...update } = row;
  await w
    .insertInto('rendered_feeds')
    .values(row)
    .onConflict((oc) => oc.columns(['school_id', 'scope', 'scope_id']).doUpdateSet(update))
    .execute();
}

/** The brotli bytes of the render with this ETag (a no-op when the feed was re-rendered meanwhile). */
export async function saveRenderedFeedBrotli(
  w: Executor,
  schoolId: SchoolId,
  scope: StoredFeedScope,
  scopeId: Id,
  etag: string,
  br: Buffer,
): Promise<void> {
  await w
    .updateTable('rendered_feeds')
    .set({ br })
    .where('school_id', '=', schoolId)
    .where('scope', '=', scope)
    .where('scope_id', '=', scopeId)
    .where('etag', '=', etag)
    .execute();
}

/**
 * Records that these feeds' stored bytes are still right for `dataVersion` (what they were made from did not
 * change), without touching the bytes. Only rows made from `inputs` qualify, so a concurrent re-render wins.
 */
export async function markRenderedFeedsCurrent(
  w: Executor,
  schoolId: SchoolId,
  feeds: readonly { scope: StoredFeedScope; scopeId: Id; inputs: string }[],
  dataVersion: number,
): Promise<void> {
  for (const f of feeds) {
    await w
      .updateTable('rendered_feeds')
      .set({ data_version: dataVersion })
      .where('school_id', '=', schoolId)
      .where('scope', '=', f.scope)
      .where('scope_id', '=', f.scopeId)
      .where('inputs', '=', f.inputs)
      .execute();
  }
}

export async function deleteRenderedFeeds(
  w: Executor,
  schoolId: SchoolId,
  feeds: readonly { scope: StoredFeedScope; scopeId: Id }[],
): Promise<void> {
  for (const f of feeds) {
    await w
      .deleteFrom('rendered_feeds')
      .where('school_id', '=', schoolId)
      .where('scope', '=', f.scope)
      .where('scope_id', '=', f.scopeId)
      .execute();
  }
}
