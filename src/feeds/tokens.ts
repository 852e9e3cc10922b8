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
import type { Id } from '../domain/types.ts';
import { ensurePrivateDir, ensurePrivateFile } from '../private-files.ts';
import type { FeedScope, FeedToken, SchoolId, Store } from '../store/types.ts';
import type { RotationJournal } from './rotations.ts';

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
  const given = opts.secret;
  if (given !== undefined && given !== null && given !== '') {
    if (given.length < 32) throw new Error('FEED_SECRET: must be at least 32 characters');
    return Buffer.from(given, 'utf8');
  }
  const dir = opts.dataDir ?? 'data';
  const file = path.join(dir, 'feed-secret');
  try {
    const text = readFileSync(file, 'utf8').trim();
    ensurePrivateFile(file);
    if (text.length < 32) throw new Error(`${file}: feed secret too short`);
    return Buffer.from(text, 'utf8');
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
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadFeedSecret(opts);
    throw err;
  }
  return Buffer.from(secret, 'utf8');
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

export class FeedTokens {
  readonly #store: Store;
  readonly #secret: Buffer;
  readonly #now: () => Date;
  readonly #journal: RotationJournal | null;

  constructor(store: Store, secret: Buffer, opts: { now?: () => Date; journal?: RotationJournal } = {}) {
    this.#store = store;
    this.#secret = secret;
    this.#now = opts.now ?? (() => new Date());
    this.#journal = opts.journal ?? null;
  }

  #tokenOf(record: FeedToken): string | null {
    const token = deriveToken(this.#secret, record.schoolId, record.scope, record.scopeId, record.version);
    return sameHash(hashToken(token), record.tokenHash) ? token : null;
  }

  /** The next version to issue: past every version the store or the rotation record has seen. */
  async #nextVersion(schoolId: SchoolId, scope: FeedScope, scopeId: Id): Promise<number> {
    const all = await this.#store.listFeedTokens(schoolId);
    const versions = all.filter((t) => t.scope === scope && t.scopeId === scopeId).map((t) => t.version);
    return Math.max(
      versions.length ? Math.max(...versions) + 1 : 1,
      this.#journal?.version(schoolId, scope, scopeId) ?? 0,
    );
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
    await this.#store.saveFeedToken(record);
    return { record, token };
  }

  /** The live token of a scope, issuing one when there is none. */
  async ensure(schoolId: SchoolId, scope: FeedScope, scopeId: Id): Promise<IssuedFeed> {
    const existing = await this.#store.getFeedToken(schoolId, scope, scopeId);
    if (existing) return { record: existing, token: this.#tokenOf(existing) };
    return this.#issue(schoolId, scope, scopeId, await this.#nextVersion(schoolId, scope, scopeId));
  }

  /**
   * The live tokens of many scopes of one school (in the order asked), issuing the missing ones: one read of the
   * school's tokens and one transaction for the new ones, whatever the number of feeds (a district lists 13,000+).
   */
  async ensureAll(
    schoolId: SchoolId,
    scopes: readonly { scope: FeedScope; scopeId: Id }[],
  ): Promise<IssuedFeed[]> {
    const key = (scope: FeedScope, id: Id) => `${scope}|${id}`;
    const live = new Map<string, FeedToken>();
    const highest = new Map<string, number>();
    for (const t of await this.#store.listFeedTokens(schoolId)) {
      const k = key(t.scope, t.scopeId);
      if (t.revokedAt === null) live.set(k, t);
      highest.set(k, Math.max(highest.get(k) ?? 0, t.version));
    }
    const missing = scopes.filter((s) => !live.has(key(s.scope, s.scopeId)));
    if (missing.length) {
      await this.#store.transaction(async (tx) => {
        const inner = new FeedTokens(tx, this.#secret, { now: this.#now });
        for (const m of missing) {
          const k = key(m.scope, m.scopeId);
          if (live.has(k)) continue; // asked twice
          const version = Math.max(
            (highest.get(k) ?? 0) + 1,
            this.#journal?.version(schoolId, m.scope, m.scopeId) ?? 0,
          );
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
   * Revokes the current token (its URL starts answering 404) and issues the next version. The rotation record
   * beside the secret is written first, so no later loss of the database can bring the old URL back.
   */
  async rotate(schoolId: SchoolId, scope: FeedScope, scopeId: Id): Promise<IssuedFeed> {
    return this.#store.transaction(async (tx) => {
      const inner = new FeedTokens(tx, this.#secret, {
        now: this.#now,
        ...(this.#journal ? { journal: this.#journal } : {}),
      });
      const version = await inner.#nextVersion(schoolId, scope, scopeId);
      this.#journal?.append([
        { school: schoolId, scope, id: scopeId, version, at: this.#now().toISOString() },
      ]);
      await tx.revokeFeedToken(schoolId, scope, scopeId, this.#now().toISOString());
      return inner.#issue(schoolId, scope, scopeId, version);
    });
  }

  /** Makes `version` the live token of a scope (older ones revoked): the rotation record's repair. */
  async issueVersion(schoolId: SchoolId, scope: FeedScope, scopeId: Id, version: number): Promise<void> {
    await this.#store.transaction(async (tx) => {
      await tx.revokeFeedToken(schoolId, scope, scopeId, this.#now().toISOString());
      await new FeedTokens(tx, this.#secret, { now: this.#now }).#issue(schoolId, scope, scopeId, version);
    });
  }

  /** Live tokens of the store that this secret did not make (0 of 0 for an empty store). */
  async foreignTokens(): Promise<{ foreign: number; live: number }> {
    const live = (await this.#store.listFeedTokens()).filter((t) => t.revokedAt === null);
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
export async function resolveFeedToken(store: Store, token: string): Promise<FeedToken | null> {
  if (!looksLikeToken(token)) return null;
  const record = await store.findFeedTokenByHash(hashToken(token));
  return record && record.revokedAt === null ? record : null;
}

/**
 * resolveFeedToken with a short memory of live tokens, so a feed request costs no database read while a
 * calendar app polls. A rotation or revocation made elsewhere (the CLI, another replica) takes effect within
 * ttlMs; unknown tokens are never remembered (each costs a lookup, and the rate limit bounds those).
 */
export class FeedTokenResolver {
  readonly #store: Store;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #live = new Map<string, { record: FeedToken; at: number }>();
  readonly #serves: ((record: FeedToken) => Promise<boolean>) | null;

  constructor(
    store: Store,
    opts: {
      ttlMs?: number;
      maxEntries?: number;
      /** Whether a live token may be answered (false while its school's current URLs are unknown). */
      serves?: (record: FeedToken) => Promise<boolean>;
    } = {},
  ) {
    this.#store = store;
    this.#serves = opts.serves ?? null;
    this.#ttlMs = opts.ttlMs ?? 2000;
    this.#maxEntries = opts.maxEntries ?? 100_000;
  }

  async resolve(token: string): Promise<FeedToken | null> {
    if (!looksLikeToken(token)) return null;
    const now = performance.now();
    const hit = this.#live.get(token);
    if (hit && now - hit.at < this.#ttlMs) return hit.record;
    let record = await resolveFeedToken(this.#store, token);
    if (record && this.#serves && !(await this.#serves(record))) record = null;
    if (record && this.#ttlMs > 0) {
      if (this.#live.size >= this.#maxEntries) this.#live.clear();
      this.#live.set(token, { record, at: now });
    } else this.#live.delete(token);
    return record;
  }

  /** Forget everything (after a rotation in this process). */
  clear(): void {
    this.#live.clear();
  }
}
