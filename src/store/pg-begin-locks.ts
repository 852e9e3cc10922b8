// PostgreSQL's BEGIN carrying the advisory locks a transaction will take anyway. A pull's transaction per resource
// took its kind's lock in a statement of its own right after BEGIN, a round trip each (10 of a first pull's 110,
// issue 46); sent as one simple-protocol query (`begin; select pg_advisory_xact_lock(…)`), it is one.
//
// Kysely's driver starts a transaction with a bare `begin`: this driver looks, as it begins one, for the locks
// the call chain asked for (withBeginLocks, from SqlContext.transaction), whose text it must write with literals
// (a simple query takes no parameters).
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  PostgresDialect,
  type PostgresDialectConfig,
  PostgresDriver,
  type TransactionSettings,
} from 'kysely';

/** A transaction-scoped advisory lock: `pg_advisory_xact_lock(hashtext(school), hashtext(table))`. */
export type LockKey = readonly [schoolId: string, table: string];

/** The locks for the next BEGIN of the call chain; `taken` once it has begun, so no other transaction takes them. */
const pending = new AsyncLocalStorage<{ locks: readonly LockKey[]; taken: boolean }>();

/**
 * Runs fn with `locks` to be taken by the BEGIN of the transaction it opens first; `begun()` says whether they
 * were (only this dialect's driver takes them: another leaves them to be taken as before).
 */
export function withBeginLocks<T>(
  locks: readonly LockKey[],
  fn: (begun: () => boolean) => Promise<T>,
): Promise<T> {
  const asked = { locks, taken: false };
  return pending.run(asked, () => fn(() => asked.taken));
}

/** The statement that takes a lock, the one every writer of a kind uses (records-repository.ts). */
export function lockText(key: LockKey, literal: (s: string) => string): string {
  return `select pg_advisory_xact_lock(hashtext(${literal(key[0])}), hashtext(${literal(key[1])}))`;
}

class LockingDriver extends PostgresDriver {
  readonly #literal: (s: string) => string;
  constructor(config: PostgresDialectConfig, literal: (s: string) => string) {
    super(config);
    this.#literal = literal;
  }

  override async beginTransaction(
    connection: DatabaseConnection,
    settings: TransactionSettings,
  ): Promise<void> {
    const asked = pending.getStore();
    if (!asked || asked.taken || asked.locks.length === 0 || settings.isolationLevel || settings.accessMode)
      return super.beginTransaction(connection, settings);
    asked.taken = true;
    // No parameters: pg sends it by the simple protocol, which takes several statements in one round trip.
    const text = ['begin', ...asked.locks.map((k) => lockText(k, this.#literal))].join('; ');
    await connection.executeQuery(CompiledQuery.raw(text));
  }
}

/** Kysely's PostgreSQL dialect whose transactions can begin with their locks (withBeginLocks). */
export class LockingPostgresDialect extends PostgresDialect {
  readonly #config: PostgresDialectConfig;
  readonly #literal: (s: string) => string;
  /** `literal` quotes a string for the server (pg's escapeLiteral). */
  constructor(config: PostgresDialectConfig, literal: (s: string) => string) {
    super(config);
    this.#config = config;
    this.#literal = literal;
  }

  override createDriver(): Driver {
    return new LockingDriver(this.#config, this.#literal);
  }
}
