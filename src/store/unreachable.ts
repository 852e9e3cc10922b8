// Whether an error means the store cannot be reached for now (a PostgreSQL server stopped, restarting or cut off),
// as opposed to a refusal of what was asked (a constraint, a full disk, damage) or a bug. Readers that can answer
// from memory (the feeds, their pages) do so on these errors; the rest answer 503 with Retry-After, never 500.
// Only the store knows its drivers' words for it.

/** PostgreSQL's SQLSTATEs of a server going away or not yet there: class 08 (connection) and 57P01–57P03. */
const PG_CODES = new Set(['08000', '08001', '08003', '08004', '08006', '57P01', '57P02', '57P03']);
/** Node's words for a connection refused, cut or never made. */
const NET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** pg and pg-pool's own messages, which carry no code. */
const PG_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end/;

/**
 * StoreUnreachableError's opening words, for people. Not read back: an error structured-cloned across a thread loses
 * its class and cause, so a render thread says `unreachable` in its outcome (feeds/school-render-worker.ts) rather
 * than have any message taken for it.
 */
const OWN_WORDS = 'the store cannot be reached: ';

/** SQLite's SQLITE_CANTOPEN (14): the file (or its directory) is gone from under a running process. */
const SQLITE_CANTOPEN = 14;

export function isStoreUnreachable(err: unknown): boolean {
  for (
    let e = err as { code?: unknown; errcode?: unknown; message?: unknown; cause?: unknown } | null,
      depth = 0;
    e && depth < 4;
    depth++
  ) {
    if (e instanceof StoreUnreachableError) return true;
    if (typeof e.code === 'string' && (PG_CODES.has(e.code) || NET_CODES.has(e.code))) return true;
    if (typeof e.errcode === 'number' && (e.errcode & 0xff) === SQLITE_CANTOPEN) return true;
    if (typeof e.message === 'string' && PG_MESSAGES.test(e.message)) return true;
    // AggregateError (a host with several addresses, each refused) and wrapped causes.
    const inner = (e as { errors?: unknown[] }).errors?.[0] ?? e.cause;
    e = inner as typeof e;
  }
  return false;
}

/**
 * The store cannot be reached and memory holds no answer: what a request answers is 503 with Retry-After (its
 * layout chosen by web/errors.ts), never 500.
 */
export class StoreUnreachableError extends Error {
  constructor(cause: unknown) {
    super(`${OWN_WORDS}${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = 'StoreUnreachableError';
  }
}

/**
 * A transaction bounded by the request deadline (pg-deadline.ts's withTransactionDeadline) that did not finish in
 * time, its connection cut. `committed`: false when it was cut before its COMMIT was sent (it never can commit);
 * 'unknown' when its COMMIT went unanswered.
 */
export class TransactionCutError extends StoreUnreachableError {
  readonly committed: false | 'unknown';
  constructor(cause: Error, committed: false | 'unknown') {
    super(
      new Error(
        committed === false
          ? `${cause.message}: it was cut before its commit, and nothing of it was written`
          : `${cause.message}: its commit went unanswered, so whether it was written is not known`,
        { cause },
      ),
    );
    this.name = 'TransactionCutError';
    this.committed = committed;
  }
}

/** Seconds a client is asked to wait before trying again while the store cannot be reached. */
export const STORE_RETRY_AFTER_S = 30;
