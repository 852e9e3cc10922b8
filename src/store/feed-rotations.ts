// SQL for the store's copy of the feed rotation record (feeds/rotations.ts; feed-links-repository.ts
// delegates here): which feed secret it vouches for (a fingerprint, never the secret) and every rotation, in
// the order made. Shared by every replica on the store; each mirrors it into its DATA_DIR.
import type { Kysely, Transaction } from 'kysely';
import type { Id } from '../domain/types.ts';
import { storedInstant } from './instants.ts';
import type { DB } from './schema.ts';
import type { FeedRotationRow, FeedScope } from './types.ts';

type Executor = Kysely<DB> | Transaction<DB>;

export async function getFeedRotationRecord(
  r: Executor,
): Promise<{ secret: string; createdAt: string } | null> {
  const row = await r.selectFrom('feed_rotation_record').selectAll().where('id', '=', 1).executeTakeFirst();
  return row ? { secret: row.secret, createdAt: row.created_at } : null;
}

export async function startFeedRotationRecord(w: Executor, secret: string, at: string): Promise<void> {
  const current = await getFeedRotationRecord(w);
  if (current?.secret === secret) return;
  // Rotations recorded for another secret name URLs this one never made.
  await w.deleteFrom('feed_rotations').execute();
  const created_at = storedInstant(at, 'startFeedRotationRecord');
  await w
    .insertInto('feed_rotation_record')
    .values({ id: 1, secret, created_at })
    .onConflict((oc) => oc.column('id').doUpdateSet({ secret, created_at }))
    .execute();
}

export async function addFeedRotations(w: Executor, rows: readonly FeedRotationRow[]): Promise<void> {
  for (const r of rows)
    await w
      .insertInto('feed_rotations')
      .values({
        school_id: r.school,
        scope: r.scope,
        scope_id: r.id,
        version: r.version,
        rotated_at: storedInstant(r.at, 'addFeedRotations'),
      })
      .execute();
}

export async function listFeedRotations(r: Executor): Promise<FeedRotationRow[]> {
  const rows = await r.selectFrom('feed_rotations').selectAll().orderBy('seq').execute();
  return rows.map((row) => ({
    school: row.school_id,
    scope: row.scope as FeedScope,
    id: Number(row.scope_id) as Id,
    version: row.version,
    at: row.rotated_at,
  }));
}

export async function feedRotationsMark(r: Executor): Promise<number> {
  const row = await r
    .selectFrom('feed_rotations')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}
