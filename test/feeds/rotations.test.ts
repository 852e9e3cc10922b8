// The feed rotation record (feeds/rotations.ts), kept in the store and in DATA_DIR's file: the file read and written
// as a restart finds it (torn last line, damaged line, a file of another secret kept aside), and reconcileRotations
// deciding, on a real SQLite store, whether the secret is vouched for and bringing both copies together: a lost
// database gets its rotations back and its tokens issued at their recorded version, a lost file gets the store's,
// and no record at all means no feed is served. RecordMirror copies another replica's rotations into the file.
import {
  appendFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  latestVersions,
  RecordMirror,
  type Rotation,
  RotationJournal,
  reconcileRotations,
  secretFingerprint,
} from '../../src/feeds/rotations.ts';
import type { FeedScope, Store } from '../../src/store/types.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';

const T = '2026-11-02T08:00:00.000Z';
const rotation = (school: string, id: number, version: number, scope: FeedScope = 'team'): Rotation => ({
  school,
  scope,
  id,
  version,
  at: T,
});

let dir: string;
let ts: TestStore;
let store: Store;
let journal: RotationJournal;
beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'rostercal-rotations-'));
  ts = await openTestStore('sqlite');
  store = ts.store;
  journal = new RotationJournal(path.join(dir, 'data'));
});
afterEach(async () => {
  await ts.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

async function token(school: string, id: number, version: number, revoked = false): Promise<void> {
  await store.links.saveFeedToken({
    schoolId: school,
    scope: 'team',
    scopeId: id,
    tokenHash: `hash-${school}-${id}-${version}`,
    version,
    createdAt: T,
    revokedAt: revoked ? T : null,
  });
}

const issued: [string, FeedScope, number, number][] = [];
const reconcile = (over: { secret?: string; newSecret?: boolean; schools?: string[] } = {}) => {
  issued.length = 0;
  return reconcileRotations({
    store,
    journal,
    schools: over.schools ?? ['north', 'south'],
    secret: over.secret ?? 'fp-a',
    secretSource: 'FEED_SECRET',
    newSecret: over.newSecret ?? false,
    issue: async (school, scope, id, version) => {
      issued.push([school, scope, id, version]);
    },
  });
};

const inStore = async () => [...latestVersions(await store.links.listFeedRotations()).values()];
const inFile = () => [...journal.read().rotations.values()];

describe('RotationJournal (the file copy)', () => {
  it('keeps the latest version per feed, for the secret it was made for, in a private file', () => {
    journal.create('fp-a');
    journal.append([rotation('north', 1, 2), rotation('north', 1, 3), rotation('north', 2, 2, 'student')]);
    journal.append([]);
    const read = journal.read();
    expect(read.secret).toBe('fp-a');
    expect(read.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(inFile()).toEqual([rotation('north', 1, 3), rotation('north', 2, 2, 'student')]);
    expect(journal.version('north', 'team', 1)).toBe(3);
    expect(journal.version('north', 'team', 2)).toBe(0);
    expect(new RotationJournal(path.join(dir, 'none')).version('north', 'team', 1)).toBe(0);
    expect(statSync(journal.file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(journal.file)).mode & 0o777).toBe(0o700);
  });

  it('reads past a torn last line (a power cut mid-append), and names the file and line of a damaged one', () => {
    journal.create('fp-a');
    journal.append([rotation('north', 1, 2)]);
    appendFileSync(journal.file, '{"school":"north","sco');
    expect(inFile()).toEqual([rotation('north', 1, 2)]);
    appendFileSync(journal.file, '\n{"school":"north","scope":"team","id":1,"version":3}\n');
    expect(() => journal.read()).toThrow(`${journal.file}: line 3 is not a rotation record`);
    writeFileSync(journal.file, '{"school":"north","scope":"team","id":1,"version":"2"}\n');
    expect(() => journal.read()).toThrow(/line 1 is not a rotation record/);
    writeFileSync(journal.file, `${JSON.stringify(rotation('north', 1, 2))}\n`);
    expect(() => journal.read()).toThrow(`${journal.file}: no header line`);
  });

  it('keeps a file of another secret aside when made anew, and a file from before fingerprints claims one', () => {
    journal.create('fp-a');
    journal.append([rotation('north', 1, 2)]);
    journal.create('fp-b');
    expect(journal.read()).toMatchObject({ secret: 'fp-b', rotations: new Map() });
    const aside = readdirSync(path.dirname(journal.file)).filter((f) => f.endsWith('.old'));
    expect(aside).toHaveLength(1);
    expect(readFileSync(path.join(path.dirname(journal.file), aside[0]!), 'utf8')).toContain('"fp-a"');

    writeFileSync(journal.file, `{"journal":"old-one"}\n${JSON.stringify(rotation('north', 1, 4))}\n`);
    expect(journal.read().secret).toBeNull();
    journal.claim('fp-c');
    expect(journal.read()).toMatchObject({ id: 'old-one', secret: 'fp-c' });
    expect(inFile()).toEqual([rotation('north', 1, 4)]);
  });
});

describe('reconcileRotations (at start)', () => {
  it('starts both records empty for a secret made just now', async () => {
    const state = await reconcile({ newSecret: true });
    expect(state).toEqual({ unsure: new Map(), reissue: new Set(), notes: [] });
    expect(await store.links.getFeedRotationRecord()).toMatchObject({ secret: 'fp-a' });
    expect(journal.read().secret).toBe('fp-a');
  });

  it('serves no feed while neither record vouches for the secret, and says why', async () => {
    await token('north', 1, 1);
    const state = await reconcile();
    expect([...state.unsure.keys()]).toEqual(['north', 'south']);
    expect(state.unsure.get('north')).toContain('no feed rotation record vouches for FEED_SECRET');
    expect(state.unsure.get('north')).toContain(journal.file);
    // The store lost south's tokens: once an operator decides, the next pull issues them again.
    expect([...state.reissue]).toEqual(['south']);
    expect(journal.exists()).toBe(false);
    expect(await store.links.getFeedRotationRecord()).toBeNull();
  });

  it('refuses a store record of another secret, and a file of another secret', async () => {
    await store.links.startFeedRotationRecord('fp-other', T);
    journal.create('fp-other');
    expect((await reconcile()).unsure.size).toBe(2);
  });

  it('gives a lost database back its rotations, issuing each feed at its recorded version', async () => {
    journal.create('fp-a');
    journal.append([rotation('north', 1, 3), rotation('south', 2, 2), rotation('north', 5, 2)]);
    await token('north', 5, 2);
    const state = await reconcile();
    expect(state.unsure.size).toBe(0);
    expect(issued).toEqual([
      ['north', 'team', 1, 3],
      ['south', 'team', 2, 2],
    ]);
    expect(state.notes).toEqual([
      `north: the database did not know 1 feed rotation(s) recorded in ${journal.file}; the rotated URLs stay dead and the current ones work again`,
      `south: the database did not know 1 feed rotation(s) recorded in ${journal.file}; the rotated URLs stay dead and the current ones work again`,
    ]);
    expect([...state.reissue]).toEqual(['south']);
    const versions = (rows: Rotation[]) => rows.map((r) => `${r.school}/${r.id}@${r.version}`).sort();
    expect(versions(await inStore())).toEqual(['north/1@3', 'north/5@2', 'south/2@2']);
    expect(versions(inFile())).toEqual(versions(await inStore()));
  });

  it('gives a lost file the store’s rotations, and rotations the tokens alone knew join both records', async () => {
    await store.links.startFeedRotationRecord('fp-a', T);
    await store.links.addFeedRotations([rotation('north', 1, 2)]);
    await token('north', 1, 2);
    await token('north', 7, 3, true);
    await token('north', 7, 4);
    await token('north', 8, 1);
    const state = await reconcile({ schools: ['north'] });
    expect(state).toEqual({ unsure: new Map(), reissue: new Set(), notes: [] });
    expect(issued).toEqual([]);
    const expected = [rotation('north', 1, 2), { ...rotation('north', 7, 4), at: expect.any(String) }];
    expect(inFile()).toEqual(expected);
    expect(await inStore()).toEqual(expected);
  });

  it('vouches through a file from before fingerprints, which then names the secret', async () => {
    journal.create('placeholder');
    writeFileSync(journal.file, `{"journal":"old-one"}\n${JSON.stringify(rotation('north', 1, 2))}\n`);
    const state = await reconcile({ schools: ['north'] });
    expect(state.unsure.size).toBe(0);
    expect(issued).toEqual([['north', 'team', 1, 2]]);
    expect(journal.read()).toMatchObject({ id: 'old-one', secret: 'fp-a' });
    expect(await store.links.getFeedRotationRecord()).toMatchObject({ secret: 'fp-a' });
    // From now on it vouches for this secret alone.
    expect((await reconcile({ secret: 'fp-b', schools: ['north'] })).unsure.size).toBe(1);
  });
});

describe('RecordMirror', () => {
  it('copies into the file what another replica recorded in the store, and nothing for another secret', async () => {
    await reconcile({ newSecret: true });
    const mirror = new RecordMirror(store, journal, 'fp-a');
    await store.links.addFeedRotations([rotation('north', 1, 2)]);
    await mirror.sync();
    expect(inFile()).toEqual([rotation('north', 1, 2)]);
    await store.links.addFeedRotations([rotation('north', 1, 3), rotation('south', 4, 2)]);
    await mirror.sync();
    expect(inFile()).toEqual([rotation('north', 1, 3), rotation('south', 4, 2)]);
    // Nothing recorded since: the store's mark alone is read, not the file (here made unreadable).
    const kept = readFileSync(journal.file);
    writeFileSync(journal.file, 'not json\n{}\n');
    await mirror.sync();
    writeFileSync(journal.file, kept);

    rmSync(journal.file);
    await mirror.sync();
    expect(journal.read().secret).toBe('fp-a');
    expect(inFile()).toEqual([rotation('north', 1, 3), rotation('south', 4, 2)]);

    const other = new RecordMirror(store, new RotationJournal(path.join(dir, 'other')), 'fp-b');
    await other.sync();
    expect(new RotationJournal(path.join(dir, 'other')).exists()).toBe(false);
  });
});

it('takes the highest version of each feed, whatever the order of the rows', () => {
  const rows = [rotation('north', 1, 3), rotation('north', 1, 2), rotation('north', 1, 2, 'student')];
  expect([...latestVersions(rows).values()]).toEqual([
    rotation('north', 1, 3),
    rotation('north', 1, 2, 'student'),
  ]);
});

it('names a secret by a fingerprint that reveals nothing of it', () => {
  const secret = Buffer.from('feed-secret-of-32-bytes-or-more!!');
  expect(secretFingerprint(secret)).toMatch(/^[0-9a-f]{32}$/);
  expect(secretFingerprint(secret)).toBe(secretFingerprint(Buffer.from(secret)));
  expect(secretFingerprint(Buffer.from('another'))).not.toBe(secretFingerprint(secret));
  expect(secretFingerprint(secret)).not.toContain(secret.toString('hex').slice(0, 8));
});
