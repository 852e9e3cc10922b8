// Feed tokens ready for use, or a refusal (feeds/trust.ts), on a real SQLite store and DATA_DIR: a secret made only
// beside a store without feeds, a secret that did not make the store's feeds refused, no feed of an unsure school
// issued until an operator decides (looked at again at most every 2 s), the store's record mirrored into the file
// on stop, and a lost store's feed tokens issued again after the school's next pull (a pull of the sandbox).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { secretFingerprint } from '../../src/feeds/rotations.ts';
import { FeedSecretError, FeedTrustError, openFeedSecret } from '../../src/feeds/tokens.ts';
import { feedTokensAfterPull, prepareFeedTokens } from '../../src/feeds/trust.ts';
import { silentLogger } from '../../src/log.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import type { Store } from '../../src/store/types.ts';
import { fullPull, openTestStore, type TestStore, testSchool } from '../sync/helpers.ts';

const NOW = '2026-03-16T09:00:00.000Z';
let dataDir: string;
let ts: TestStore;
let store: Store;
beforeEach(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'rostercal-trust-'));
  ts = await openTestStore('sqlite');
  store = ts.store;
});
afterEach(async () => {
  vi.useRealTimers();
  await ts.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

const prepare = (secret?: string) =>
  prepareFeedTokens({ store, dataDir, schools: ['north', 'south'], secret });

describe('prepareFeedTokens', () => {
  it('makes a secret beside a store without feeds, and both records vouch for it', async () => {
    const { tokens, guard, journal, notes } = await prepare();
    expect(guard.unsure.size).toBe(0);
    expect(notes).toEqual([]);
    const issued = await tokens.ensure('north', 'team', 1);
    expect(issued.token).toBeTruthy();
    const { secret } = openFeedSecret({ dataDir });
    expect(journal.read().secret).toBe(secretFingerprint(secret));
    expect((await store.links.getFeedRotationRecord())?.secret).toBe(secretFingerprint(secret));
    expect(guard.takeReissue('north')).toBe(false);
  });

  it('refuses a secret that did not make the store’s feed URLs', async () => {
    const first = await prepare();
    await first.tokens.ensure('north', 'team', 1);
    await first.tokens.ensure('north', 'team', 2);
    const refused = prepare('b'.repeat(64));
    await expect(refused).rejects.toThrow(FeedSecretError);
    await expect(refused).rejects.toThrow(
      'FEED_SECRET did not make 2 of the 2 live feed URLs in the database',
    );
    // Nor is a new secret made beside feeds when the file is lost.
    rmSync(path.join(dataDir, 'feed-secret'));
    await expect(prepare()).rejects.toThrow(
      `it is not set and ${path.join(dataDir, 'feed-secret')} is missing`,
    );
  });

  it('issues nothing of an unsure school until an operator decides, looking again at most every 2 s', async () => {
    const first = await prepare();
    const fingerprint = secretFingerprint(openFeedSecret({ dataDir }).secret);
    await first.tokens.ensure('north', 'team', 1);
    const record = await store.links.getFeedToken('north', 'team', 1);
    // The database is replaced by one without a record (restored from before records), and the file is lost.
    await store.links.startFeedRotationRecord('fp-of-another-secret', NOW);
    rmSync(first.journal.file);

    vi.useFakeTimers({ toFake: ['performance'] });
    const { tokens, guard } = await prepare();
    expect([...guard.unsure.keys()]).toEqual(['north', 'south']);
    expect(guard.reason('north')).toContain(`no feed rotation record vouches for ${dataDir}/feed-secret:`);
    await expect(tokens.ensure('north', 'team', 1)).rejects.toThrow(FeedTrustError);
    expect(await tokens.ensureIfVouched('north', 'team', 1)).toBeNull();
    expect(await guard.vouchesFor(record)).toBe(false);
    expect(await guard.vouchesFor(null)).toBe(false);
    await guard.stop(); // no copy of a record that vouches for nothing
    expect(first.journal.exists()).toBe(false);

    // `rostercal feeds accept-store`: the store's record vouches for the secret.
    await store.links.startFeedRotationRecord(fingerprint, NOW);
    expect((await guard.problems()).size).toBe(2); // looked 0 s ago
    await guard.mirror(); // only once this process has seen that it is vouched for
    expect(first.journal.exists()).toBe(false);
    vi.advanceTimersByTime(2001);
    expect((await guard.problems()).size).toBe(0);
    expect(await guard.vouchesFor(record)).toBe(true);
    expect(await guard.vouchesFor(null)).toBe(true);
    expect((await tokens.ensure('north', 'team', 1)).token).toBeTruthy();
    await guard.stop();
    expect(first.journal.read().secret).toBe(fingerprint);
  });

  it('vouches for an unknown token while no school is unsure', async () => {
    const { guard } = await prepare();
    expect(await guard.vouchesFor(null)).toBe(true);
  });
});

describe('feedTokensAfterPull', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 45, scale: 'small', now: NOW });
  });
  afterAll(() => sandbox?.close());

  it('issues every feed of a school whose store lost its tokens once, after a good pull', async () => {
    const school = testSchool(sandbox);
    const first = await prepareFeedTokens({ store, dataDir, schools: [school.id] });
    await first.tokens.ensure(school.id, 'team', 1);
    // The store is lost (a new database; the secret and the file survive).
    await ts.cleanup();
    ts = await openTestStore('sqlite');
    store = ts.store;
    const { tokens, guard } = await prepareFeedTokens({ store, dataDir, schools: [school.id] });
    expect(guard.unsure.size).toBe(0);
    const summary = await fullPull(store, sandbox, NOW);
    const step = feedTokensAfterPull({ tokens, guard });
    const ctx = {
      store,
      school,
      summary,
      log: silentLogger,
      flags: {},
      print: () => {},
      now: () => new Date(NOW),
    };

    expect(await step.run({ ...ctx, summary: { ...summary, status: 'failed' } })).toBe(true);
    expect(await store.links.listFeedTokens(school.id)).toEqual([]);
    expect(await step.run(ctx)).toBe(true);
    const unrevoked = async () => (await store.links.listFeedTokens(school.id)).filter((t) => !t.revokedAt);
    const live = await unrevoked();
    expect(live.length).toBeGreaterThan(10);
    expect(new Set(live.map((t) => t.scope))).toEqual(new Set(['team', 'student', 'staff', 'activity']));
    // Once: the next pull issues nothing more.
    await store.links.revokeFeedToken(school.id, live[0]!.scope, live[0]!.scopeId, NOW);
    await step.run(ctx);
    expect(await unrevoked()).toHaveLength(live.length - 1);
  });
});
