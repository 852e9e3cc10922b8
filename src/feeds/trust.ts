// Feed tokens ready for use, or a refusal: the one start-up path of `rostercal serve` and `rostercal feeds`.
// 1. The secret must be the one the store's feeds were made with (else every family's URL would die quietly).
// 2. The rotation record beside it is reconciled with the store (rotations.ts); schools whose current URLs
//    cannot be told are not served until an operator decides (`rostercal feeds accept-store`).
import type { FeedToken, SchoolId, Store } from '../store/types.ts';
import type { AfterPullStep } from '../sync/after-pull.ts';
import { listFeedDefs } from './catalog.ts';
import { ROTATIONS_CURSOR, RotationJournal, type RotationState, reconcileRotations } from './rotations.ts';
import { FeedSecretError, FeedTokens, feedSecretSource, loadFeedSecret } from './tokens.ts';

/** Which schools' feed tokens may be served; re-checks an unsure school when the operator may have decided. */
export class RotationGuard {
  readonly #state: RotationState;
  readonly #journal: RotationJournal;
  readonly #store: Store;
  readonly #checkedAt = new Map<SchoolId, number>();

  constructor(state: RotationState, journal: RotationJournal, store: Store) {
    this.#state = state;
    this.#journal = journal;
    this.#store = store;
  }

  /** Schools not served, with the reason (for /readyz and the start-up message). */
  get unsure(): ReadonlyMap<SchoolId, string> {
    return this.#state.unsure;
  }

  /** The unsure schools after looking again whether an operator decided (`feeds accept-store`, a restore). */
  async problems(): Promise<ReadonlyMap<SchoolId, string>> {
    for (const school of [...this.#state.unsure.keys()]) await this.#recheck(school);
    return this.#state.unsure;
  }

  /** Whether a token of this school may be answered; after `feeds accept-store` ran elsewhere, within 2 s. */
  async serves(record: FeedToken): Promise<boolean> {
    if (!this.#state.unsure.has(record.schoolId)) return true;
    return this.#recheck(record.schoolId);
  }

  async #recheck(school: SchoolId): Promise<boolean> {
    const last = this.#checkedAt.get(school);
    if (last !== undefined && performance.now() - last < 2000) return false;
    this.#checkedAt.set(school, performance.now());
    if (!this.#journal.exists()) return false;
    const marker = await this.#store.getCursor(school, ROTATIONS_CURSOR);
    if (marker !== this.#journal.read().id) return false;
    this.#state.unsure.delete(school);
    return true;
  }

  /** Schools whose feed tokens must all be issued again after their next pull (their store lost them). */
  takeReissue(schoolId: SchoolId): boolean {
    return this.#state.reissue.delete(schoolId);
  }
}

export interface PreparedFeedTokens {
  tokens: FeedTokens;
  guard: RotationGuard;
  journal: RotationJournal;
  /** What reconciling repaired, for the operator. */
  notes: string[];
}

export async function prepareFeedTokens(opts: {
  store: Store;
  dataDir: string;
  schools: SchoolId[];
  /** FEED_SECRET, when configured. */
  secret?: string | null;
}): Promise<PreparedFeedTokens> {
  const source = feedSecretSource({ secret: opts.secret ?? null, dataDir: opts.dataDir });
  const file = feedSecretSource({ dataDir: opts.dataDir });
  const holdsFeeds = (await opts.store.listFeedTokens()).length > 0;
  // Never make a new secret beside a store whose feeds were made with the old one.
  const secret = loadFeedSecret({ secret: opts.secret ?? null, dataDir: opts.dataDir, create: !holdsFeeds });
  const journal = new RotationJournal(opts.dataDir);
  const tokens = new FeedTokens(opts.store, secret, { journal });
  if (holdsFeeds) {
    const { foreign, live } = await tokens.foreignTokens();
    if (foreign > 0)
      throw new FeedSecretError(
        `${source === 'FEED_SECRET' ? 'FEED_SECRET' : `the secret in ${source}`} did not make ${foreign} of the ${live} live feed URLs in the database`,
        file,
      );
  }
  const state = await reconcileRotations(opts.store, journal, opts.schools, (school, scope, id, version) =>
    tokens.issueVersion(school, scope, id, version),
  );
  return { tokens, guard: new RotationGuard(state, journal, opts.store), journal, notes: state.notes };
}

/** After a pull of a school whose store had lost its feed tokens: every feed's URL works again. */
export function feedTokensAfterPull(opts: { tokens: FeedTokens; guard: RotationGuard }): AfterPullStep {
  return {
    name: 'feed-tokens',
    async run(ctx) {
      if (ctx.summary.status === 'failed' || !opts.guard.takeReissue(ctx.school.id)) return true;
      const defs = await listFeedDefs(ctx.store, ctx.school.id);
      await opts.tokens.ensureAll(ctx.school.id, defs);
      ctx.log.info(
        { school: ctx.school.id, feeds: defs.length },
        'feed tokens issued again after a lost database',
      );
      return true;
    },
  };
}
