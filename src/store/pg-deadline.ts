// A deadline on PostgreSQL statements made outside a transaction: the reads a request makes (the rotation mark,
// the data version, tokens, renders). A network that drops packets instead of resetting connections leaves the
// store's connections looking open, and without a deadline every request of the replica waited unanswered until
// the kernel gave up on the connection (~15 min on Linux; test/failures/store-partition.test.ts). A statement
// with no answer by the deadline becomes "store unreachable" (StoreUnreachableError, which isStoreUnreachable
// recognises): the feeds answer from memory, the rest 503 with Retry-After.
//
// Not bounded: statements inside a transaction (a pull's writes and COPYs, migrations, a lease's fence: long work
// that must not be cut halfway), a BEGIN that takes advisory locks (it may legitimately wait for another writer's
// lock), and COPY (its rows stream from the caller). pg-boss has its own pool (fire-queue.ts) and backups run
// pg_dump: neither passes here. A request's transaction (a feed's rotation) is bounded as a whole instead
// (withTransactionDeadline): from its BEGIN to its COMMIT's answer within the deadline, or its connection is cut.
// Cut before its COMMIT was sent, it was not committed and never can be (TransactionCutError says which):
// a request waiting on a lock another connection holds then answers 503 in time, and says truly that nothing changed.
//
// One request reads the store several times in a row, so a read (or connection) that just went unanswered leaves
// a memo: for UNANSWERED_MEMO_MS, or until a statement succeeds, a new connection is refused at once
// (StoreUnreachableError) instead of each read of the request waiting its own deadline. Short, because while it
// lasts a healed network goes unseen: a rotation made elsewhere reaches this replica up to that much later (the
// same second a replica's memory of the rotation mark lasts, feeds/README.md).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { StoreUnreachableError, TransactionCutError } from './unreachable.ts';

/**
 * How long a statement outside a transaction may go unanswered. Request-path reads take milliseconds; a
 * district's largest (a feed's sessions, a chunk of a pull's live rows) well under a second. Below the 5-s
 * connect timeout, so that one request waits at most about one of either.
 */
export const PG_READ_DEADLINE_MS = 4000;

/** How long after a statement or connection went unanswered new connections are refused without trying. */
export const UNANSWERED_MEMO_MS = 1000;

const BEGIN = /^\s*(begin|start\s+transaction)\b/i;
/** COMMIT / ROLLBACK of the transaction itself, not `rollback to savepoint`. */
const END = /^\s*(commit|end|rollback|abort)(\s+(work|transaction))?\s*;?\s*$/i;
const TAKES_LOCKS = /pg_advisory/i;

/** The transactions begun in this call chain are bounded by the deadline (withTransactionDeadline). */
const boundedTransactions = new AsyncLocalStorage<true>();

/**
 * Runs fn with the transactions it begins bounded as a whole by the read deadline, from BEGIN to COMMIT's answer
 * (a request's: it must answer in time). One that runs out throws TransactionCutError, its connection cut.
 */
export function withTransactionDeadline<T>(fn: () => Promise<T>): Promise<T> {
  return boundedTransactions.run(true, fn);
}

/** Whether this call chain is in withTransactionDeadline (SQLite's busy wait is bounded by it too). */
export function inBoundedTransaction(): boolean {
  return boundedTransactions.getStore() === true;
}

/** The client's socket, ended at once: a partition would hold a polite Terminate as long as the rest. */
function destroy(client: pg.PoolClient): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  client.release(true);
}

export class ReadDeadline {
  readonly #ms: number;
  readonly #where: string;
  /** performance.now() until which a new connection is refused; 0: none. */
  #refuseUntil = 0;
  #why = '';

  /** `where`: the server's host and port, for the message (never its URL: it may carry a password). */
  constructor(ms: number, where: string) {
    this.#ms = ms;
    this.#where = where;
  }

  /** The server's host and port, as messages name it. */
  get where(): string {
    return this.#where;
  }

  /** Throws while a statement or connection that just went unanswered is fresh (see the file's comment). */
  refuseIfUnanswered(): void {
    if (this.#refuseUntil === 0) return;
    if (performance.now() >= this.#refuseUntil) {
      this.#refuseUntil = 0;
      return;
    }
    throw new StoreUnreachableError(new Error(this.#why));
  }

  /** A connection or statement went unanswered for `why`: refuse new ones for a moment. */
  unanswered(why: string): void {
    this.#why = why;
    this.#refuseUntil = performance.now() + UNANSWERED_MEMO_MS;
  }

  answered(): void {
    this.#refuseUntil = 0;
  }

  /**
   * `client`'s statements, each outside a transaction bounded by the deadline; `release` as pg's, a no-op for a
   * client the deadline destroyed (Kysely releases it after the failed statement).
   */
  bind(client: pg.PoolClient): {
    query(text: string, parameters: unknown[]): Promise<PostgresQueryResult<unknown>>;
    release(destroy?: boolean): void;
  } {
    let inTransaction = false;
    let destroyed = false;
    /** performance.now() by which the open transaction must have committed (withTransactionDeadline); 0: none. */
    let transactionEnds = 0;
    /** The error the transaction was cut with: what follows it (Kysely's ROLLBACK) meets it. */
    let cut: Error | null = null;
    return {
      query: (text, parameters) => {
        const begins = BEGIN.test(text);
        const ends = END.test(text);
        if (cut) {
          // The connection is gone: its transaction can never commit, so the ROLLBACK that follows is done.
          if (ends) return Promise.resolve({ command: 'SELECT', rowCount: 0, rows: [] });
          return Promise.reject(cut);
        }
        if (begins && this.#ms > 0 && boundedTransactions.getStore())
          transactionEnds = performance.now() + this.#ms;
        const inBoundedTransaction = transactionEnds > 0 && (inTransaction || begins);
        const committing = inBoundedTransaction && ends && /^\s*(commit|end)\b/i.test(text);
        const bound = inBoundedTransaction
          ? Math.max(0, transactionEnds - performance.now())
          : this.#ms > 0 && !inTransaction && !TAKES_LOCKS.test(text)
            ? this.#ms
            : -1;
        if (begins) inTransaction = true;
        else if (ends) {
          inTransaction = false;
          transactionEnds = 0;
        }
        const sent = client.query(text, parameters) as Promise<PostgresQueryResult<unknown>>;
        const answered = (r: PostgresQueryResult<unknown>) => {
          this.answered();
          return r;
        };
        if (bound < 0) return sent.then(answered);
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => {
            destroyed = true;
            const s = this.#ms / 1000;
            const why = inBoundedTransaction
              ? `the database (PostgreSQL at ${this.#where}) did not finish a transaction within ${s} s (another connection holding what it writes, or no answer)`
              : `the database (PostgreSQL at ${this.#where}) did not answer a read within ${s} s`;
            this.unanswered(why);
            sent.catch(() => {});
            destroy(client);
            const err = inBoundedTransaction
              ? new TransactionCutError(new Error(why), committing ? 'unknown' : false)
              : new StoreUnreachableError(new Error(why));
            if (inBoundedTransaction) cut = err;
            reject(err);
          }, bound);
          sent.then(
            (r) => {
              clearTimeout(timer);
              resolve(answered(r));
            },
            (err: unknown) => {
              clearTimeout(timer);
              reject(err);
            },
          );
        });
      },
      release: (destroy?: boolean) => {
        if (!destroyed) client.release(destroy);
      },
    };
  }
}
