// SQL for family links (feed-links-repository.ts delegates here). Members are kept as one JSON array: a link
// is read whole and never queried by member.
import type { Kysely, Transaction } from 'kysely';
import { storedInstant } from './instants.ts';
import type { DB } from './schema.ts';
import type { FamilyLink, FamilyMember } from './types.ts';

type Executor = Kysely<DB> | Transaction<DB>;

export async function saveFamilyLink(w: Executor, link: FamilyLink): Promise<void> {
  const members = JSON.stringify(
    link.members.map((m) => ({ scope: m.scope, scopeId: m.scopeId, feedTokenHash: m.feedTokenHash })),
  );
  const revoked = link.revokedAt === null ? null : storedInstant(link.revokedAt, 'revokedAt');
  await w
    .insertInto('family_links')
    .values({
      token_hash: link.tokenHash,
      school_id: link.schoolId,
      members,
      created_at: storedInstant(link.createdAt, 'createdAt'),
      revoked_at: revoked,
    })
    .onConflict((oc) => oc.column('token_hash').doUpdateSet({ members, revoked_at: revoked }))
    .execute();
}

export async function findFamilyLinkByHash(r: Executor, tokenHash: string): Promise<FamilyLink | null> {
  const row = await r
    .selectFrom('family_links')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (!row) return null;
  return {
    schoolId: row.school_id,
    tokenHash: row.token_hash,
    members: JSON.parse(row.members) as FamilyMember[],
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}
