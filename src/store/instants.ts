// Instants as the store writes them: `YYYY-MM-DDTHH:mm:ss.sssZ`, so text comparison is time comparison in both
// dialects. Anything Date.parse cannot read is refused, naming the field.
import type { Instant } from '../domain/types.ts';

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
