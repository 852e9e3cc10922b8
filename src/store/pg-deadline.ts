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
// pg_dump: neither passes here.
//
// One request reads the store several times in a row, so a read (or connection) that just went unanswered leaves
// a memo: for UNANSWERED_MEMO_MS, or until a statement succeeds, a new connection is refused at once
// (StoreUnreachableError) instead of each read of the request waiting its own deadline. Short, because while it
// lasts a healed network goes unseen: a rotation made elsewhere reaches this replica up to that much later (the
// same second a replica's memory of the rotation mark lasts, feeds/README.md).
import type { PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { StoreUnreachableError } from './unreachable.ts';

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
    return {
      query: (text, parameters) => {
        const bounded = this.#ms > 0 && !inTransaction && !TAKES_LOCKS.test(text);
        if (BEGIN.test(text)) inTransaction = true;
        else if (END.test(text)) inTransaction = false;
        const sent = client.query(text, parameters) as Promise<PostgresQueryResult<unknown>>;
        const answered = (r: PostgresQueryResult<unknown>) => {
          this.answered();
          return r;
        };
        if (!bounded) return sent.then(answered);
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => {
            destroyed = true;
            const why = `the database (PostgreSQL at ${this.#where}) did not answer a read within ${this.#ms / 1000} s`;
            this.unanswered(why);
            sent.catch(() => {});
            destroy(client);
            reject(new StoreUnreachableError(new Error(why)));
          }, this.#ms);
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
