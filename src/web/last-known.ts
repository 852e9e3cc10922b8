// What a page last read from the store (a school's last pull, its name and zone, a feed's live Google calendar),
// kept so that the page can still be made while the store cannot be reached: a landing page this process has
// shown is shown again as it was. A value never read is StoreUnreachableError (the page answers 503).
import { LRUCache } from 'lru-cache';
import type { SchoolId, Store } from '../store/types.ts';
import { isStoreUnreachable, StoreUnreachableError } from '../store/unreachable.ts';
import { lastPulledAt } from './freshness.ts';

export class LastKnown {
  /** Values of any kind, undefined included (a school not found), boxed for the LRU. */
  readonly #values: LRUCache<string, { value: unknown }>;

  constructor(max = 20_000) {
    this.#values = new LRUCache({ max });
  }

  /** `read()`, remembered under `key`; while the store cannot be reached, what it last gave. */
  async read<T>(key: string, read: () => Promise<T> | T): Promise<T> {
    try {
      const value = await read();
      this.#values.set(key, { value });
      return value;
    } catch (err) {
      if (!isStoreUnreachable(err)) throw err;
      const known = this.#values.get(key);
      if (known) return known.value as T;
      throw new StoreUnreachableError(err);
    }
  }
}

/** `read()`, or `fallback` while the store cannot be reached (a part of a page the outage may leave out). */
export async function unlessUnreachable<T, F>(read: () => Promise<T>, fallback: F): Promise<T | F> {
  try {
    return await read();
  } catch (err) {
    if (!isStoreUnreachable(err)) throw err;
    return fallback;
  }
}

/** When the school's last pull succeeded (freshness.ts), as last read while the store cannot be reached. */
export function knownLastPull(
  known: LastKnown,
  store: Pick<Store, 'runs'>,
  schoolId: SchoolId,
): Promise<Date | null> {
  return known.read(`pulled|${schoolId}`, () => lastPulledAt(store, schoolId));
}

/** The school's name and zone, as last read while the store cannot be reached (undefined: no such school). */
export function knownSchool(
  known: LastKnown,
  store: Pick<Store, 'records'>,
  schoolId: SchoolId,
): Promise<{ id: SchoolId; name: string; timeZone: string } | undefined> {
  return known.read(`school|${schoolId}`, () =>
    store.records.listSchools().then((all) => all.find((x) => x.id === schoolId)),
  );
}
