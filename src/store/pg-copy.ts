// PostgreSQL's COPY FROM STDIN, as one more statement of the store's connections. Bulk rows go in by COPY about
// three times faster than by INSERT … SELECT from one JSON or array parameter (measured on a district's sessions:
// 1.2–1.4 s → 0.39–0.43 s; its 535,580 session_students rows: 0.96–1.02 s → 0.66–0.72 s), because the server
// inserts them many to a page without planning or parsing a parameter first.
//
// Kysely hands each statement to the pool client's `query(text, parameters)`. The pool given to Kysely's dialect
// wraps pg's, and its clients run a `copy … from stdin` whose one parameter is a CopyRows through
// pg-copy-streams on the same client, so a COPY belongs to whatever transaction the statement is part of.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import type { from as CopyFrom } from 'pg-copy-streams';
import { ReadDeadline } from './pg-deadline.ts';

/** Text handed to the server per write: small enough that a large table never sits whole in memory. */
const CHUNK_CHARS = 256 * 1024;

export type CopyValue = string | number | null;

/**
 * The rows of a COPY, as the parameter of its statement: `items`, each one row of `values`, in COPY's text
 * format. Items are taken as the server reads them, so a generator's rows are never all in memory at once.
 */
export class CopyRows<T = unknown> {
  readonly #items: Iterable<T>;
  readonly #values: (item: T) => readonly CopyValue[];
  constructor(items: Iterable<T>, values: (item: T) => readonly CopyValue[]) {
    this.#items = items;
    this.#values = values;
  }

  *chunks(): Generator<string> {
    let text = '';
    for (const item of this.#items) {
      const row = this.#values(item);
      for (let i = 0; i < row.length; i++) text += (i === 0 ? '' : '\t') + copyText(row[i]!);
      text += '\n';
      if (text.length >= CHUNK_CHARS) {
        yield text;
        text = '';
      }
    }
    if (text !== '') yield text;
  }
}

/** One value in COPY's text format: `\N` is null; backslash, tab, newline and carriage return are escaped. */
export function copyText(value: CopyValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'number') return String(value);
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, escapeChar) : value;
}

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const escapeChar = (c: string) => ESCAPES[c]!;

const COPY_FROM_STDIN = /^\s*copy\s[\s\S]*\sfrom\s+stdin\s*$/i;

async function runCopy(
  copyFrom: typeof CopyFrom,
  client: pg.PoolClient,
  text: string,
  rows: CopyRows,
): Promise<PostgresQueryResult<never>> {
  const stream = client.query(copyFrom(text));
  await pipeline(Readable.from(rows.chunks(), { objectMode: false }), stream);
  // Kysely's result type has no COPY; as an UPDATE, its row count becomes the statement's affected rows.
  return { command: 'UPDATE', rowCount: stream.rowCount, rows: [] };
}

/**
 * A pooled client that runs a COPY statement from its CopyRows parameter, and every other statement as pg does,
 * within `deadline` outside a transaction (pg-deadline.ts).
 */
function copyingClient(
  client: pg.PoolClient,
  copyFrom: typeof CopyFrom,
  deadline: ReadDeadline,
): PostgresPoolClient {
  const bounded = deadline.bind(client);
  const query = (text: string, parameters: readonly unknown[]) => {
    const rows = parameters[0];
    if (!(rows instanceof CopyRows)) return bounded.query(text, parameters as unknown[]);
    if (parameters.length !== 1 || !COPY_FROM_STDIN.test(text)) {
      throw new Error('CopyRows is the one parameter of a COPY … FROM STDIN statement');
    }
    return runCopy(copyFrom, client, text, rows);
  };
  return {
    query: query as unknown as PostgresPoolClient['query'],
    release: (destroy?: boolean) => bounded.release(destroy),
    get processID() {
      return (client as { processID?: number }).processID;
    },
  };
}

/**
 * pg's pool as Kysely's dialect takes it, with clients that understand CopyRows and a deadline on statements
 * outside a transaction (refused at once for a moment after one went unanswered). `connectTimeoutS` (0: none) is
 * the pool's own bound on a connection: one that ran out is said as the database not answering, and arms the same
 * refusal, so the next requests are refused at once, not each after its own timeout. The refusal itself comes before
 * the pool is asked, so it never reads as a new timeout (a healed replica asked every second refused for good, once).
 * pg-copy-streams is loaded here, for PostgreSQL only, like pg itself (store/index.ts): SQLite commands start without it.
 */
export async function copyingPool(
  pool: pg.Pool,
  deadline: ReadDeadline = new ReadDeadline(0, ''),
  connectTimeoutS = 0,
): Promise<PostgresPool> {
  const { from: copyFrom } = await import('pg-copy-streams');
  const connect = async () => {
    try {
      return await pool.connect();
    } catch (err) {
      // pg says "timeout exceeded when trying to connect" or "Connection terminated due to connection timeout".
      if (connectTimeoutS > 0 && err instanceof Error && /timeout/i.test(err.message)) {
        const why = `the database (PostgreSQL at ${deadline.where}) did not answer within ${connectTimeoutS} s (connect_timeout in DATABASE_URL sets the bound)`;
        deadline.unanswered(why);
        throw new Error(`${why}: ${err.message}`, { cause: err });
      }
      throw err;
    }
  };
  return {
    connect: async () => {
      deadline.refuseIfUnanswered();
      return copyingClient(await connect(), copyFrom, deadline);
    },
    end: () => pool.end(),
    options: pool.options,
  };
}
