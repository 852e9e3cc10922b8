// SQL for what each feed last published per session (rendered-feeds-repository.ts delegates here). One row
// per feed holding a JSON object: a feed's versions are read and written whole, at render time, and never
// queried by session.
import type { Kysely, Transaction } from 'kysely';
import type { Id } from '../domain/types.ts';
import type { DB } from './schema.ts';
import type { PublishedEvent, SchoolId, StoredFeedScope } from './types.ts';

type Executor = Kysely<DB> | Transaction<DB>;

export async function getFeedEventVersions(
  r: Executor,
  schoolId: SchoolId,
  scope: StoredFeedScope,
  scopeId: Id,
): Promise<Map<Id, PublishedEvent>> {
  const row = await r
    .selectFrom('feed_event_versions')
    .select('versions')
    .where('school_id', '=', schoolId)
    .where('scope', '=', scope)
    .where('scope_id', '=', scopeId)
    .executeTakeFirst();
  const out = new Map<Id, PublishedEvent>();
  if (!row) return out;
  const raw = JSON.parse(row.versions) as Record<string, [string, number, string]>;
  for (const [id, [hash, sequence, lastModified]] of Object.entries(raw)) {
    out.set(Number(id), { hash, sequence, lastModified });
  }
  return out;
}

export async function saveFeedEventVersions(
  w: Executor,
  schoolId: SchoolId,
  scope: StoredFeedScope,
  scopeId: Id,
  versions: ReadonlyMap<Id, PublishedEvent>,
): Promise<void> {
  const raw: Record<string, [string, number, string]> = {};
  for (const [id, v] of versions) raw[String(id)] = [v.hash, v.sequence, v.lastModified];
  const json = JSON.stringify(raw);
  await w
    .insertInto('feed_event_versions')
    .values({ school_id: schoolId, scope, scope_id: scopeId, versions: json })
    .onConflict((oc) => oc.columns(['school_id', 'scope', 'scope_id']).doUpdateSet({ versions: json }))
    .execute();
}
