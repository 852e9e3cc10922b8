// Capability tokens for feed URLs.
//
// A token is HMAC-SHA256(secret, "school|scope|id|version"), first 24 bytes, base64url (32 characters, 192 bits).
// The store keeps only sha256(token) for the request-path lookup, so a leaked database reveals no URL. Because
// the token is derived, `rostercal feeds list` can print every URL again from the secret plus the stored
// version; rotating bumps the version, which yields a new token and revokes the old hash (old URL → 404).
//
// The secret: FEED_SECRET (≥32 characters) or a random file `feed-secret` in the data directory, created with
// mode 0600. Deployments with several replicas must share FEED_SECRET so that any of them can print URLs;
// serving needs no secret at all (lookup is by hash).
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import type { Id } from '../domain/types.ts';
import { ensurePrivateDir, ensurePrivateFile } from '../private-files.ts';
import type { FeedScope, FeedToken, SchoolId, Store } from '../store/types.ts';
import { isStoreUnreachable, StoreUnreachableError, TransactionCutError } from '../store/unreachable.ts';
import type { Rotation, RotationJournal } from './rotations.ts';

export const FEED_SCOPES: readonly FeedScope[] = ['team', 'student', 'staff', 'activity'];
const TOKEN_RE = /^[A-Za-z0-9_-]{32}$/;

export function isFeedScope(v: string): v is FeedScope {
  return (FEED_SCOPES as readonly string[]).includes(v);
}

/** Where the feed secret comes from, as an operator would name it. */
export function feedSecretSource(opts: { secret?: string | null; dataDir?: string } = {}): string {
  if (opts.secret) return 'FEED_SECRET';
  return path.resolve(opts.dataDir ?? 'data', 'feed-secret');
}

/**
 * The configured secret (FEED_SECRET), or the data directory's secret file (created on first use, 0600 in a
 * 0700 directory, unless `create` is false: a store that already holds feeds needs the secret they were made with).
 */
export function loadFeedSecret(
  opts: { secret?: string | null; dataDir?: string; create?: boolean } = {},
): Buffer {
  return openFeedSecret(opts).secret;
}

/** loadFeedSecret, and whether this call created it (then no URL made with it can exist yet). */
export function openFeedSecret(opts: { secret?: string | null; dataDir?: string; create?: boolean } = {}): {
  secret: Buffer;
  created: boolean;
} {
  const given = opts.secret;
  if (given !== undefined && given !== null && given !== '') {
    if (given.length < 32) throw new Error('FEED_SECRET: must be at least 32 characters');
    return { secret: Buffer.from(given, 'utf8'), created: false };
  }
  const dir = opts.dataDir ?? 'data';
  const file = path.join(dir, 'feed-secret');
  try {
    const text = readFileSync(file, 'utf8').trim();
    ensurePrivateFile(file);
    if (text.length < 32) throw new Error(`${file}: feed secret too short`);
    return { secret: Buffer.from(text, 'utf8'), created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (opts.create === false)
    throw new FeedSecretError(`it is not set and ${path.resolve(file)} is missing`, path.resolve(file));
  ensurePrivateDir(dir);
  const secret = randomBytes(32).toString('base64url');
  try {
    writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return openFeedSecret(opts);
    throw err;
  }
  return { secret: Buffer.from(secret, 'utf8'), created: true };
}

/** The feed secret is not the one the store's feeds were made with: starting would break every URL. */
export class FeedSecretError extends Error {
  constructor(problem: string, file: string) {
    super(
      `FEED_SECRET: ${problem}. The database holds feed URLs made with another feed secret: starting would silently break every family's calendar URL. Restore ${file} from your backup, or set FEED_SECRET to the secret those URLs were made with.`,
    );
    this.name = 'FeedSecretError';
  }
}

export function deriveToken(
  secret: Buffer,
  schoolId: SchoolId,
  scope: FeedScope,
  scopeId: Id,
  version: number,
) {
  return createHmac('sha256', secret)
    .update(`${schoolId}|${scope}|${scopeId}|${version}`)
    .digest()
    .subarray(0, 24)
    .toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** What may appear in a log line: the first 6 characters, enough to tell two tokens apart in an incident. */
export function tokenForLog(token: string): string {
  return `${token.slice(0, 6)}…`;
}

export function looksLikeToken(s: string): boolean {
  return TOKEN_RE.test(s);
}

export interface IssuedFeed {
  record: FeedToken;
  /** null when the stored hash was made with another secret (the URL still works but cannot be shown). */
  token: string | null;
}

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A rotation that committed, and why the record beside the secret lacks it (if it does: a full disk, say). */
export interface RotatedFeed extends IssuedFeed {
  unrecorded?: string;
}

/**
 * A rotation that did not take effect: the old URL works on, now and after any restart. `unconfirmed`: the store
 * could not even be asked afterwards whether the commit went through (its answer lost); `rostercal feeds list`
 * tells once it can be reached.
 */
export class RotationFailedError extends Error {
  readonly unconfirmed: boolean;
  constructor(cause: unknown, unconfirmed: boolean) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(
      unconfirmed
        ? `the rotation may not have taken effect: the store failed (${why}) and could not be asked afterwards; \`rostercal feeds list\` shows which URL is current once it can be reached`
        : `the rotation did not take effect, the old URL still works: the store failed (${why})`,
      { cause },
    );
    this.name = 'RotationFailedError';
    this.unconfirmed = unconfirmed;
  }
}

/**
 * The link was replaced since the one a rotation was asked for (a form sent again with the browser's Back, a
 * second admin): it is not replaced once more, which would stop the new link that may already have been sent.
 */
export class AlreadyRotatedError extends Error {
  readonly current: number;
  constructor(asked: number, current: number) {
    super(
      `the link was already replaced: version ${current} now, the rotation asked for stops version ${asked}`,
    );
    this.name = 'AlreadyRotatedError';
    this.current = current;
  }
}

/** The feed secret is not vouched for by a rotation record (rotations.ts): no URL may be issued or shown. */
export class FeedTrustError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'FeedTrustError';
  }
}

/**
 * Revocations committed through a store object in this process: a FeedTokenResolver on the same store forgets
 * what it remembered at once (a rotation on the admin page, or by the harness beside the server).
 */
const localRevocations = new WeakMap<Pick<Store, 'links'>, number>();

function revokedThrough(store: Pick<Store, 'links'>): void {
  localRevocations.set(store, (localRevocations.get(store) ?? 0) + 1);
}

/**
 * How long a rotation made elsewhere (another replica, `rostercal feeds rotate`) may take to reach a running
 * server: a remembered token is used only while the store's rotation mark was read less than this long ago.
 */
export const REVOCATION_BOUND_MS = 1000;

/**
 * How long a server answers a remembered token (and a family link's calendar) from memory once it has found the
 * store unreachable. Cut off alone while another replica still reaches the store, it cannot tell a rotation made
 * there from none: this bounds how long it serves such a URL, whatever the cut lasts. Counted from the first read
 * that failed, not from the last that succeeded, so a replica nobody asked for a while serves through an outage
 * too. Five minutes covers a database restart and a managed failover (one to two minutes), with room.
 */
export const OUTAGE_MEMORY_MS = 5 * 60_000;

/** Resolves once a rotation committed before the call has reached every running server (REVOCATION_BOUND_MS). */
export function untilEveryServerKnows(): Promise<void> {
  // The bound, and a margin for a request already past its check when the bound ran out.
  return new Promise((resolve) => setTimeout(resolve, REVOCATION_BOUND_MS + 200));
}

/**
 * A rotation is an act a person waits for (the admin page, `rostercal feeds rotate`): its transaction is bounded by
 * the request deadline, so a store held by another connection answers in seconds, not when it lets go.
 */
const BOUNDED = { bounded: true } as const;

export class FeedTokens {
  readonly #store: Pick<Store, 'links' | 'transaction'>;
  readonly #secret: Buffer;
  readonly #now: () => Date;
  readonly #journal: RotationJournal | null;
  #unsure: (schoolId: SchoolId) => string | null = () => null;

  constructor(
    store: Pick<Store, 'links' | 'transaction'>,
    secret: Buffer,
    opts: { now?: () => Date; journal?: RotationJournal } = {},
  ) {
    this.#store = store;
    this.#secret = secret;
    this.#now = opts.now ?? (() => new Date());
    this.#journal = opts.journal ?? null;
  }

  /** While `unsure` names a reason for a school, nothing of it is issued, rotated or shown (FeedTrustError). */
  refuseWhile(unsure: (schoolId: SchoolId) => string | null): void {
    this.#unsure = unsure;
  }

  /** Why nothing of a school's feeds may be issued or shown now, or null. */
  untrustedBecause(schoolId: SchoolId): string | null {
    return this.#unsure(schoolId);
  }

  #trusted(schoolId: SchoolId): void {
    const why = this.#unsure(schoolId);
    if (why !== null) throw new FeedTrustError(why);
  }

  #tokenOf(record: FeedToken): string | null {
    const token = deriveToken(this.#secret, record.schoolId, record.scope, record.scopeId, record.version);
    return sameHash(hashToken(token), record.tokenHash) ? token : null;
  }

  /** The current version per feed of one school that the rotation record (store and file) knows. */
  async #recorded(schoolId: SchoolId): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const r of await this.#rotations())
      if (r.school === schoolId)
        out.set(`${r.scope}|${r.id}`, Math.max(out.get(`${r.scope}|${r.id}`) ?? 0, r.version));
    return out;
  }

  async #rotations(): Promise<Rotation[]> {
    return [
      ...(await this.#store.links.listFeedRotations()),
      ...(this.#journal?.exists() ? this.#journal.read().rotations.values() : []),
    ];
  }

  /**
   * The feed's latest rotation in the rotation record (store and file), or null when it was never rotated: its
   * version alone cannot tell (a feed rotated before its first token was issued is at version 1 too).
   */
  async lastRotation(schoolId: SchoolId, scope: FeedScope, scopeId: Id): Promise<Rotation | null> {
    let last: Rotation | null = null;
    for (const r of await this.#rotations())
      if (r.school === schoolId && r.scope === scope && r.id === scopeId && r.version > (last?.version ?? 0))
        last = r;
    return last;
  }

  /** The highest version of a feed the store's tokens and the rotation record have seen (0: none). */
  /** The feed's version now: its latest token's or its latest rotation's, whichever is higher (0: none yet). */
  async currentVersion(schoolId: SchoolId, scope: FeedScope, scopeId: Id): Promise<number> {
    const h = await this.#highest(schoolId, scope, scopeId);
    return Math.max(h.tokens, h.record);
  }

  async #highest(
    schoolId: SchoolId,
    scope: FeedScope,
    scopeId: Id,
  ): Promise<{ tokens: number; record: number }> {
    const all = await this.#store.links.listFeedTokens(schoolId);
    const versions = all.filter((t) => t.scope === scope && t.scopeId === scopeId).map((t) => t.version);
    return {
      tokens: versions.length ? Math.max(...versions) : 0,
      record: (await this.#recorded(schoolId)).get(`${scope}|${scopeId}`) ?? 0,
    };
  }

  async #issue(schoolId: SchoolId, scope: FeedScope, scopeId: Id, version: number): Promise<IssuedFeed> {
    const token = deriveToken(this.#secret, schoolId, scope, scopeId, version);
    const record: FeedToken = {
      schoolId,
      scope,
      scopeId,
      tokenHash: hashToken(token),
      version,
      createdAt: this.#now().toISOString(),
      revokedAt: null,
    };
    await this.#store.links.saveFeedToken(record);
    return { record, token };
  }

  /** The live token of a scope, issuing one when there is none. */
  async ensure(schoolId: SchoolId, scope: FeedScope, scopeId: Id): Promise<IssuedFeed> {
    this.#trusted(schoolId);
    const existing = await this.#store.links.getFeedToken(schoolId, scope, scopeId);
    if (existing) return { record: existing, token: this.#tokenOf(existing) };
    const h = await this.#highest(schoolId, scope, scopeId);
    return this.#issue(schoolId, scope, scopeId, Math.max(h.tokens + 1, h.record));
  }

  /** ensure, or null while no rotation record vouches for the secret (a page then shows no link). */
  async ensureIfVouched(schoolId: SchoolId, scope: FeedScope, scopeId: Id): Promise<IssuedFeed | null> {
    return this.#unsure(schoolId) === null ? this.ensure(schoolId, scope, scopeId) : null;
  }

  /**
   * The live tokens of many scopes of one school (in the order asked), issuing the missing ones: one read of the
   * school's tokens and one transaction for the new ones, whatever the number of feeds (a district lists 13,000+).
   */
  async ensureAll(
    schoolId: SchoolId,
    scopes: readonly { scope: FeedScope; scopeId: Id }[],
  ): Promise<IssuedFeed[]> {
    this.#trusted(schoolId);
    const key = (scope: FeedScope, id: Id) => `${scope}|${id}`;
    const live = new Map<string, FeedToken>();
    const highest = new Map<string, number>();
    for (const t of await this.#store.links.listFeedTokens(schoolId)) {
      const k = key(t.scope, t.scopeId);
      if (t.revokedAt === null) live.set(k, t);
      highest.set(k, Math.max(highest.get(k) ?? 0, t.version));
    }
    const missing = scopes.filter((s) => !live.has(key(s.scope, s.scopeId)));
    if (missing.length) {
      const recorded = await this.#recorded(schoolId);
      await this.#store.transaction(async (tx) => {
        const inner = new FeedTokens(tx, this.#secret, { now: this.#now });
        for (const m of missing) {
          const k = key(m.scope, m.scopeId);
          if (live.has(k)) continue; // asked twice
          const version = Math.max((highest.get(k) ?? 0) + 1, recorded.get(k) ?? 0);
          live.set(k, (await inner.#issue(schoolId, m.scope, m.scopeId, version)).record);
        }
      });
    }
    return scopes.map((s) => {
      const record = live.get(key(s.scope, s.scopeId))!;
      return { record, token: this.#tokenOf(record) };
    });
  }

  /**
   * Revokes the current token (its URL starts answering 404) and issues the next version, all or nothing. The store
   * decides: the rotation, the revocation, the new token and `alsoInTransaction` (the act's audit record) are one
   * transaction, and only once it has committed does the rotation go to the record beside the secret (fsynced), so
   * that file never holds a rotation the store refused: a rotation that failed (a full disk, a lost connection)
   * can never be applied by a later start. A commit whose answer was lost is read back. Servers on this store
   * object forget the old token at once; other processes within REVOCATION_BOUND_MS (untilEveryServerKnows).
   * A file that cannot take the committed rotation does not undo it (`unrecorded` says why): every serving
   * process copies the store's record into its own file within seconds (trust.ts). A store that does not let the
   * transaction finish within the request deadline (BOUNDED) fails it: cut before its COMMIT, as not done.
   */
  async rotate(
    schoolId: SchoolId,
    scope: FeedScope,
    scopeId: Id,
    opts: {
      alsoInTransaction?: (tx: Store, version: number) => Promise<void>;
      /**
       * The version this rotation stops (the one the admin saw): refused with AlreadyRotatedError if the link is
       * at another. Two rotations from the same version make one (the second's version is taken: read back).
       */
      from?: number;
    } = {},
  ): Promise<RotatedFeed> {
    this.#trusted(schoolId);
    const current = await this.currentVersion(schoolId, scope, scopeId);
    if (opts.from !== undefined && opts.from !== current) throw new AlreadyRotatedError(opts.from, current);
    const version = current + 1;
    const rotation = { school: schoolId, scope, id: scopeId, version, at: this.#now().toISOString() };
    let issued: IssuedFeed;
    try {
      issued = await this.#store.transaction(async (tx) => {
        await tx.links.addFeedRotations([rotation]);
        await tx.links.revokeFeedToken(schoolId, scope, scopeId, this.#now().toISOString());
        const made = await new FeedTokens(tx, this.#secret, { now: this.#now }).#issue(
          schoolId,
          scope,
          scopeId,
          version,
        );
        await opts.alsoInTransaction?.(tx, version);
        return made;
      }, BOUNDED);
    } catch (err) {
      // Cut before its COMMIT (the store held past the deadline): known not to have happened, nothing to ask.
      if (err instanceof TransactionCutError && err.committed === false)
        throw new RotationFailedError(err, false);
      issued = await this.#readBack(schoolId, scope, scopeId, version, err);
    }
    revokedThrough(this.#store);
    try {
      this.#journal?.append([rotation]);
    } catch (err) {
      return { ...issued, unrecorded: `${this.#journal!.file}: ${(err as Error).message}` };
    }
    return issued;
  }

  /** After a failed commit: the rotation if the store holds it after all, else the failure (RotationFailedError). */
  async #readBack(
    schoolId: SchoolId,
    scope: FeedScope,
    scopeId: Id,
    version: number,
    err: unknown,
  ): Promise<IssuedFeed> {
    let live: FeedToken | null;
    try {
      live = await this.#store.links.getFeedToken(schoolId, scope, scopeId);
    } catch {
      throw new RotationFailedError(err, true);
    }
    if (live?.version !== version) throw new RotationFailedError(err, false);
    return { record: live, token: this.#tokenOf(live) };
  }

  /** Makes `version` the live token of a scope (older ones revoked): the rotation record's repair. */
  async issueVersion(schoolId: SchoolId, scope: FeedScope, scopeId: Id, version: number): Promise<void> {
    await this.#store.transaction(async (tx) => {
      await tx.links.revokeFeedToken(schoolId, scope, scopeId, this.#now().toISOString());
      await new FeedTokens(tx, this.#secret, { now: this.#now }).#issue(schoolId, scope, scopeId, version);
    });
    revokedThrough(this.#store);
  }

  /** Live tokens of the store that this secret did not make (0 of 0 for an empty store). */
  async foreignTokens(): Promise<{ foreign: number; live: number }> {
    const live = (await this.#store.links.listFeedTokens()).filter((t) => t.revokedAt === null);
    return { foreign: live.filter((t) => this.#tokenOf(t) === null).length, live: live.length };
  }

  async resolve(token: string): Promise<FeedToken | null> {
    return resolveFeedToken(this.#store, token);
  }
}

/**
 * The live token record for a URL's token, or null (malformed, unknown or revoked: all the same to callers).
 * Needs no secret: the lookup is by hash.
 */
export async function resolveFeedToken(
  store: Pick<Store, 'links'>,
  token: string,
): Promise<FeedToken | null> {
  if (!looksLikeToken(token)) return null;
  const record = await store.links.findFeedTokenByHash(hashToken(token));
  return record && record.revokedAt === null ? record : null;
}

/**
 * resolveFeedToken with a memory of live tokens, so that a feed request costs no database read while calendar
 * apps poll. A remembered token is used only while (1) no revocation was committed through this process's store
 * object since it was remembered (a rotation on this server takes effect at once) and (2) the store's rotation
 * mark, one cheap read, was confirmed unchanged less than REVOCATION_BOUND_MS ago (a rotation made by another
 * replica or by `rostercal feeds rotate` takes effect within that bound). Unknown tokens are never remembered
 * (each costs a lookup; the failed-lookup throttle bounds those).
 */
export class FeedTokenResolver {
  readonly #store: Pick<Store, 'links'>;
  readonly #boundMs: number;
  readonly #live: LRUCache<string, FeedToken>;
  /** Bumped whenever the memory is cleared: a lookup that began before a clear is not remembered. */
  #epoch = 0;
  #local = 0;
  #mark: number | null = null;
  #markAt = Number.NEGATIVE_INFINITY;
  /** When a read of the rotation mark first failed for want of the store, since the last that succeeded. */
  #unreachableSince: number | null = null;
  #reading: Promise<void> | null = null;

  constructor(store: Pick<Store, 'links'>, opts: { maxEntries?: number } = {}) {
    this.#store = store;
    this.#live = new LRUCache({ max: opts.maxEntries ?? 100_000 });
    this.#boundMs = REVOCATION_BOUND_MS;
  }

  #clear(): void {
    this.#live.clear();
    this.#epoch++;
  }

  /** Whether the memory may be used now (after forgetting what a revocation made stale). */
  async #fresh(): Promise<boolean> {
    const local = localRevocations.get(this.#store) ?? 0;
    if (local !== this.#local) {
      this.#local = local;
      this.#clear();
    }
    if (performance.now() - this.#markAt < this.#boundMs) return true;
    this.#reading ??= this.#readMark().finally(() => {
      this.#reading = null;
    });
    await this.#reading;
    // A read that took longer than the bound proves nothing for this request: ask the store directly.
    return (
      performance.now() - this.#markAt < this.#boundMs && local === (localRevocations.get(this.#store) ?? 0)
    );
  }

  async #readMark(): Promise<void> {
    const started = performance.now();
    let mark: number | null;
    try {
      mark = await this.#store.links.feedRotationsMark();
    } catch (err) {
      if (isStoreUnreachable(err)) this.#unreachableSince ??= started;
      throw err;
    }
    this.#unreachableSince = null;
    if (mark !== this.#mark) {
      this.#mark = mark;
      this.#clear();
    }
    this.#markAt = started;
  }

  /**
   * Changes whenever this memory is cleared (a revocation known here, a rotation mark that moved): what was
   * confirmed under one epoch may be answered from memory while the store cannot be reached, and only then.
   */
  get epoch(): number {
    return this.#epoch;
  }

  /**
   * Whether what was confirmed under the current epoch may be answered now that the store cannot be reached: this
   * server found it unreachable less than OUTAGE_MEMORY_MS ago.
   */
  answersFromMemory(): boolean {
    const since = this.#unreachableSince ?? performance.now();
    return performance.now() - since < OUTAGE_MEMORY_MS;
  }

  /** Reads the rotation mark when due (as a lookup would) and returns the epoch it leaves; throws like the store. */
  async confirm(): Promise<number> {
    await this.#fresh();
    return this.#epoch;
  }

  /**
   * The live record of a token. While the store cannot be reached, a token confirmed live since the last rotation
   * this process knows of is answered from memory, for OUTAGE_MEMORY_MS after it found the store unreachable (a
   * rotation made meanwhile, by a replica that can reach the store or just before the outage, reaches this one on
   * its first request once the store answers again); any other token, and any after that bound, is
   * StoreUnreachableError: neither "live" nor "unknown" can be said.
   */
  async resolve(token: string): Promise<FeedToken | null> {
    if (!looksLikeToken(token)) return null;
    try {
      return await this.#resolve(token);
    } catch (err) {
      if (!isStoreUnreachable(err)) throw err;
      const known = this.#live.get(token);
      if (known && this.answersFromMemory()) return known;
      throw new StoreUnreachableError(err);
    }
  }

  async #resolve(token: string): Promise<FeedToken | null> {
    const usable = await this.#fresh();
    const hit = usable ? this.#live.get(token) : undefined;
    if (hit) return hit;
    const epoch = this.#epoch;
    const local = this.#local;
    const record = await resolveFeedToken(this.#store, token);
    // A token the store no longer knows live stays dead in memory too.
    if (!record) this.#live.delete(token);
    else if (usable && epoch === this.#epoch && local === (localRevocations.get(this.#store) ?? 0)) {
      this.#live.set(token, record);
    }
    return record;
  }
}
