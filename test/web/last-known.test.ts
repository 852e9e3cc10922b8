// What a page last read from the store, kept for while the store cannot be reached (web/last-known.ts), on a real
// SQLite store, with a real outage: a SQLite file that cannot be opened (SQLITE_CANTOPEN, what a lost volume gives).
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnreachableError } from '../../src/store/unreachable.ts';
import { knownLastPull, knownSchool, LastKnown, unlessUnreachable } from '../../src/web/last-known.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';

let ts: TestStore;
/** A read that meets a store that cannot be reached. */
const outage = () =>
  new DatabaseSync('/nonexistent-rostercal-volume/rostercal.sqlite').prepare('SELECT 1').get();

beforeAll(async () => {
  ts = await openTestStore('sqlite');
  await ts.store.records.upsertSchool({
    id: 'hill',
    name: 'Hillcrest College',
    timeZone: 'Australia/Sydney',
  });
});
afterAll(async () => {
  await ts?.cleanup();
});

describe('LastKnown', () => {
  it('gives what it read, then the same while the store cannot be reached', async () => {
    const known = new LastKnown();
    expect(await known.read('k', () => 'first')).toBe('first');
    expect(await known.read('k', () => 'second')).toBe('second');
    expect(await known.read('k', outage)).toBe('second');
  });

  it('a key never read is StoreUnreachableError (a 503), and an error that is no outage is thrown as it is', async () => {
    const known = new LastKnown();
    await expect(known.read('never', outage)).rejects.toBeInstanceOf(StoreUnreachableError);
    await known.read('k', () => 1);
    await expect(
      known.read('k', () => {
        throw new TypeError('a bug');
      }),
    ).rejects.toThrow(TypeError);
  });

  it('remembers "not found" (undefined) as an answer, and forgets the oldest beyond its size', async () => {
    const known = new LastKnown(1);
    expect(await known.read('a', () => undefined)).toBeUndefined();
    expect(await known.read('a', outage)).toBeUndefined();
    await known.read('b', () => 2);
    await expect(known.read('a', outage)).rejects.toBeInstanceOf(StoreUnreachableError);
  });
});

describe('unlessUnreachable, knownSchool, knownLastPull', () => {
  it('unlessUnreachable gives the fallback during an outage only', async () => {
    expect(await unlessUnreachable(async () => 'read', 'fallback')).toBe('read');
    expect(await unlessUnreachable(async () => outage(), 'fallback')).toBe('fallback');
    await expect(unlessUnreachable(async () => JSON.parse('{'), 'fallback')).rejects.toThrow(SyntaxError);
  });

  it("the school's name and zone from the store, undefined for one it does not hold; no pull yet is null", async () => {
    const known = new LastKnown();
    expect(await knownSchool(known, ts.store, 'hill')).toEqual({
      id: 'hill',
      name: 'Hillcrest College',
      timeZone: 'Australia/Sydney',
    });
    expect(await knownSchool(known, ts.store, 'nowhere')).toBeUndefined();
    expect(await knownLastPull(known, ts.store, 'hill')).toBeNull();
  });
});
