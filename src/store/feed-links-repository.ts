// The capabilities that open feeds: one token per feed (only its hash kept), the store's copy of the feed rotation
// record (feed-rotations.ts) and family links, one capability for several feeds (family-links.ts).
import type { Id, Instant } from '../domain/types.ts';
import * as familyLinks from './family-links.ts';
import * as feedRotations from './feed-rotations.ts';
import { maybeInstant, storedInstant } from './instants.ts';
import type { SqlContext } from './sql-context.ts';
import type {
  FamilyLink,
  FeedLinksRepository,
  FeedRotationRow,
  FeedScope,
  FeedToken,
  SchoolId,
} from './types.ts';

export class SqlFeedLinks implements FeedLinksRepository {
  readonly #ctx: SqlContext;

  constructor(ctx: SqlContext) {
    this.#ctx = ctx;
  }

  /**
   * Inserts a token, or updates the version/revocation of one with the same hash. Saving does not revoke the
   * scope's other tokens: rotation is `revokeFeedToken` then `saveFeedToken`, in one transaction.
   */
  async saveFeedToken(token: FeedToken): Promise<void> {
    await this.#ctx.w
      .insertInto('feed_tokens')
      .values({
        token_hash: token.tokenHash,
        school_id: token.schoolId,
        scope: token.scope,
        scope_id: token.scopeId,
        version: token.version,
        created_at: storedInstant(token.createdAt, 'createdAt'),
        revoked_at: maybeInstant(token.revokedAt, 'revokedAt'),
      })
      .onConflict((oc) =>
        oc.column('token_hash').doUpdateSet({
          version: token.version,
          revoked_at: maybeInstant(token.revokedAt, 'revokedAt'),
        }),
      )
      .execute();
  }

  async getFeedToken(schoolId: SchoolId, scope: FeedScope, scopeId: Id): Promise<FeedToken | null> {
    const row = await this.#ctx.r
      .selectFrom('feed_tokens')
      .selectAll()
      .where('school_id', '=', schoolId)
      .where('scope', '=', scope)
      .where('scope_id', '=', scopeId)
      .where('revoked_at', 'is', null)
      .orderBy('version', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? toFeedToken(row) : null;
  }

  async findFeedTokenByHash(tokenHash: string): Promise<FeedToken | null> {
    const row = await this.#ctx.r
      .selectFrom('feed_tokens')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
    return row ? toFeedToken(row) : null;
  }

  async revokeFeedToken(schoolId: SchoolId, scope: FeedScope, scopeId: Id, at: Instant): Promise<void> {
    await this.#ctx.w
      .updateTable('feed_tokens')
      .set({ revoked_at: storedInstant(at, 'revokeFeedToken') })
      .where('school_id', '=', schoolId)
      .where('scope', '=', scope)
      .where('scope_id', '=', scopeId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async listFeedTokens(schoolId?: SchoolId): Promise<FeedToken[]> {
    let q = this.#ctx.r.selectFrom('feed_tokens').selectAll();
    if (schoolId !== undefined) q = q.where('school_id', '=', schoolId);
    const rows = await q
      .orderBy('school_id')
      .orderBy('scope')
      .orderBy('scope_id')
      .orderBy('version')
      .execute();
    return rows.map(toFeedToken);
  }

  async feedTokensMark(schoolId: SchoolId): Promise<string> {
    // Tokens are never deleted: an issue adds a row, a revocation sets revoked_at once.
    const row = await this.#ctx.r
      .selectFrom('feed_tokens')
      .select((eb) => [
        eb.fn.countAll<number | string>().as('issued'),
        eb.fn.count<number | string>('revoked_at').as('revoked'),
        eb.fn.max('created_at').as('lastIssued'),
        eb.fn.max('revoked_at').as('lastRevoked'),
      ])
      .where('school_id', '=', schoolId)
      .executeTakeFirst();
    return `${Number(row?.issued ?? 0)}/${Number(row?.revoked ?? 0)}/${row?.lastIssued ?? ''}/${row?.lastRevoked ?? ''}`;
  }

  getFeedRotationRecord(): Promise<{ secret: string; createdAt: Instant } | null> {
    return feedRotations.getFeedRotationRecord(this.#ctx.r);
  }
  startFeedRotationRecord(secret: string, at: Instant): Promise<void> {
    return this.#ctx.transaction(() => feedRotations.startFeedRotationRecord(this.#ctx.w, secret, at));
  }
  addFeedRotations(rows: readonly FeedRotationRow[]): Promise<void> {
    return feedRotations.addFeedRotations(this.#ctx.w, rows);
  }
  listFeedRotations(): Promise<FeedRotationRow[]> {
    return feedRotations.listFeedRotations(this.#ctx.r);
  }
  feedRotationsMark(): Promise<number> {
    return feedRotations.feedRotationsMark(this.#ctx.r);
  }

  saveFamilyLink(link: FamilyLink): Promise<void> {
    return familyLinks.saveFamilyLink(this.#ctx.w, link);
  }
  findFamilyLinkByHash(tokenHash: string): Promise<FamilyLink | null> {
    return familyLinks.findFamilyLinkByHash(this.#ctx.r, tokenHash);
  }
}

function toFeedToken(r: {
  school_id: string;
  scope: string;
  scope_id: number;
  token_hash: string;
  version: number;
  created_at: string;
  revoked_at: string | null;
}): FeedToken {
  return {
    schoolId: r.school_id,
    scope: r.scope as FeedScope,
    scopeId: Number(r.scope_id),
    tokenHash: r.token_hash,
    version: Number(r.version),
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
  };
}
