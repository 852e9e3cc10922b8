// Feed tokens ready for use, or a refusal: the one start-up path of `rostercal serve` and `rostercal feeds`.
// 1. The secret must be the one the store's feeds were made with (else every family's URL would die quietly).
// 2. A rotation record (the store's, or the file in DATA_DIR) must vouch for the secret (rotations.ts); until one
//    does, no URL of it is issued, shown or served (503 with Retry-After, never 404), and /readyz says why.

import type { AfterPullStep } from '../jobs/after-pull-step.ts';
import type { FeedToken, SchoolId, Store } from '../store/types.ts';
import { listFeedDefs } from './feed-defs.ts';
import {
  RecordMirror,
  RotationJournal,
  type RotationState,
  reconcileRotations,
  secretFingerprint,
  vouched,
} from './rotations.ts';
import { FeedSecretError, FeedTokens, feedSecretSource, openFeedSecret } from './tokens.ts';

/** How often an unsure process looks again whether an operator decided (`feeds accept-store`, a restore). */
const RECHECK_MS = 2000;
/** How often a serving process copies the store's record into its own file. */
export const MIRROR_EVERY_MS = 5000;

/** Which schools' feed tokens may be served; looks again, while unsure, whether an operator decided. */
export class RotationGuard {
  readonly #state: RotationState;
  readonly #journal: RotationJournal;
  readonly #store: Pick<Store, 'links'>;
  readonly #secret: string;
  readonly #mirror: RecordMirror;
  #checkedAt = Number.NEGATIVE_INFINITY;
  #checking: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(state: RotationState, journal: RotationJournal, store: Pick<Store, 'links'>, secret: string) {
    this.#state = state;
    this.#journal = journal;
    this.#store = store;
    this.#secret = secret;
    this.#mirror = new RecordMirror(store, journal, secret);
  }

  /** Schools not served, with the reason (for /readyz and the start-up message). */
  get unsure(): ReadonlyMap<SchoolId, string> {
    return this.#state.unsure;
  }

  /** The reason a school's feeds are not served, or null. */
  reason(schoolId: SchoolId): string | null {
    return this.#state.unsure.get(schoolId) ?? null;
  }

  /** The unsure schools after looking again whether an operator decided. */
  async problems(): Promise<ReadonlyMap<SchoolId, string>> {
    await this.#recheck();
    return this.#state.unsure;
  }

  /**
   * Whether this process can vouch for a feed URL: for a known token, its school is vouched for; for an unknown
   * one (null), no school is unsure (else the token may be one the lost store knew, and "gone" would be a lie).
   */
  async vouchesFor(record: FeedToken | null): Promise<boolean> {
    if (this.#state.unsure.size === 0) return true;
    await this.#recheck();
    return record ? !this.#state.unsure.has(record.schoolId) : this.#state.unsure.size === 0;
  }

  async #recheck(): Promise<void> {
    if (
      this.#state.unsure.size === 0 ||
      this.#state.stuck ||
      performance.now() - this.#checkedAt < RECHECK_MS
    )
      return;
    this.#checking ??= (async () => {
      this.#checkedAt = performance.now();
      if (!(await vouched(this.#store, this.#journal, this.#secret))) return;
      this.#state.unsure.clear();
      // The store's record now vouches (an operator ran `feeds accept-store`, or another replica brought it):
      // this DATA_DIR gets its copy at the next mirror, off the request path.
    })().finally(() => {
      this.#checking = null;
    });
    await this.#checking;
  }

  /** Copies the store's record into this DATA_DIR's file now (only while vouched for). */
  async mirror(): Promise<void> {
    if (this.#state.unsure.size === 0) await this.#mirror.sync();
  }

  /** Mirrors every MIRROR_EVERY_MS until stop(); failures go to onError (serving goes on). */
  start(onError: (err: unknown) => void): void {
    this.#timer = setInterval(() => {
      this.mirror().catch(onError);
    }, MIRROR_EVERY_MS);
    this.#timer.unref();
  }

  /** Stops mirroring, after a last copy. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.mirror();
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
  store: Pick<Store, 'links' | 'transaction'>;
  dataDir: string;
  schools: SchoolId[];
  /** FEED_SECRET, when configured. */
  secret?: string | null;
}): Promise<PreparedFeedTokens> {
  const source = feedSecretSource({ secret: opts.secret ?? null, dataDir: opts.dataDir });
  const file = feedSecretSource({ dataDir: opts.dataDir });
  const holdsFeeds = (await opts.store.links.listFeedTokens()).length > 0;
  // Never make a new secret beside a store whose feeds were made with the old one.
  const { secret, created } = openFeedSecret({
    secret: opts.secret ?? null,
    dataDir: opts.dataDir,
    create: !holdsFeeds,
  });
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
  const fingerprint = secretFingerprint(secret);
  let state: RotationState;
  try {
    state = await reconcileRotations({
      store: opts.store,
      journal,
      schools: opts.schools,
      secret: fingerprint,
      secretSource: source,
      newSecret: created,
      issue: (school, scope, id, version) => tokens.issueVersion(school, scope, id, version),
    });
  } catch (err) {
    // A database (or file system) failing mid-reconcile, a damaged SQLite page say: which URLs were rotated cannot
    // be told, so no feed is served; serve still starts, so /readyz can name the damage instead of a crash loop.
    // Errors of our own (a malformed rotation file) carry no code and still stop the start.
    if (typeof (err as { code?: unknown } | null)?.code !== 'string') throw err;
    const why = `the database failed while rostercal read which feed URLs were rotated (${(err as Error).message}): no feed is served until rostercal starts again with a readable database`;
    state = {
      unsure: new Map(opts.schools.map((s) => [s, why])),
      reissue: new Set(),
      notes: [],
      stuck: true,
    };
  }
  const guard = new RotationGuard(state, journal, opts.store, fingerprint);
  tokens.refuseWhile((school) => guard.reason(school));
  return { tokens, guard, journal, notes: state.notes };
}

/** After a pull of a school whose store had lost its feed tokens: every feed's URL works again. */
export function feedTokensAfterPull(opts: { tokens: FeedTokens; guard: RotationGuard }): AfterPullStep {
  return {
    name: 'feed-tokens',
    async run(ctx) {
      if (ctx.summary.status === 'failed' || opts.guard.reason(ctx.school.id) !== null) return true;
      if (!opts.guard.takeReissue(ctx.school.id)) return true;
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
