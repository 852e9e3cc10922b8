// Instants as the store writes them: `YYYY-MM-DDTHH:mm:ss.sssZ`, so text comparison is time comparison in both
// dialects. Anything Date.parse cannot read is refused, naming the field.
import { type RawBuilder, sql } from 'kysely';
import type { Instant } from '../domain/types.ts';
import type { Dialect } from './migrations.ts';

const CANONICAL_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function storedInstant(value: Instant, what: string): string {
  if (typeof value === 'string' && CANONICAL_INSTANT.test(value)) return value;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new Error(`invalid instant for ${what}: ${JSON.stringify(value)}`);
  return new Date(ms).toISOString();
}

export function maybeInstant(value: Instant | null, what: string): string | null {
  return value === null ? null : storedInstant(value, what);
}

/**
 * The database's own clock as a stored instant, less `beforeMs`: what the store judges by when its caller gave no
 * time, so no repository reads this process's clock (two replicas' clocks then never meet in one comparison).
 */
export function databaseNow(dialect: Dialect, beforeMs = 0): RawBuilder<string> {
  if (dialect === 'postgres')
    return sql<string>`to_char((now() - make_interval(secs => ${beforeMs / 1000})) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  return sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ${`-${beforeMs / 1000} seconds`})`;
}
