// Event UIDs name the installation: two installations of one school (or two schools whose upstreams reuse ids)
// never publish one UID, while an installation whose subscribers already hold `@<school>.rostercal` UIDs keeps
// them, to the byte. Real SQLite files; a store "from before" is one whose installation row and migration
// record are taken away, as every store was before migration 0023.
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FeedService } from '../../src/feeds/feed-service.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import { type Harness, startHarness } from './harness.ts';

let one: Harness;
let two: Harness;
let reopened: Store | null = null;

beforeAll(async () => {
  [one, two] = await Promise.all([startHarness(), startHarness()]);
}, 120_000);
afterAll(async () => {
  await reopened?.close();
  await Promise.all([one?.close().catch(() => {}), two?.close()]);
});

const uids = (ics: string) => [...ics.matchAll(/^UID:(.*)\r$/gm)].map((m) => m[1]!);
const unfold = (ics: string) => ics.replace(/\r\n[ \t]/g, '');

describe('the UID domain', () => {
  let teamId: number;
  let before: string;
  let domain: string;

  it('a new store gets one of its own: two installations of one school share no UID', async () => {
    teamId = one.sandbox.school.teams[0]!.id;
    const [a, b] = await Promise.all([one.store.feeds.uidDomain(), two.store.feeds.uidDomain()]);
    expect(a).toMatch(/^[0-9a-f]{12}$/);
    expect(b).toMatch(/^[0-9a-f]{12}$/);
    expect(a).not.toBe(b);
    domain = a!;
    const fa = (await one.feeds.get('hill', 'team', teamId))!.body.toString('utf8');
    const fb = (await two.feeds.get('hill', 'team', teamId))!.body.toString('utf8');
    before = fa;
    const ua = uids(unfold(fa));
    expect(ua.length).toBeGreaterThan(0);
    for (const uid of ua)
      expect(uid).toMatch(new RegExp(`^session-\\d+-team-${teamId}@hill\\.${a}\\.rostercal$`));
    const ub = new Set(uids(unfold(fb)));
    expect(ua.filter((u) => ub.has(u))).toEqual([]);
  });

  it('is made once: the same store keeps it', async () => {
    const again = await openStore({ file: path.join(one.dir, 'rostercal.sqlite') });
    try {
      expect(await again.feeds.uidDomain()).toBe(domain);
    } finally {
      await again.close();
    }
  });

  it('a store from before keeps `@<school>.rostercal`: the same bytes but for the domain', async () => {
    const file = path.join(one.dir, 'rostercal.sqlite');
    await one.store.close();
    // As every store was before migration 0023, holding what its feeds published (their event versions); its
    // renders go, so the feed is rendered again by this code.
    const raw = new DatabaseSync(file);
    raw.exec('drop table installation');
    raw.exec('delete from rendered_feeds');
    raw.exec("delete from schema_migrations where name like '0023_%'");
    raw.close();
    reopened = await openStore({ file });
    expect(await reopened.feeds.uidDomain()).toBeNull();
    const feeds = new FeedService({ store: reopened, now: () => new Date(one.sandbox.now()) });
    const after = (await feeds.get('hill', 'team', teamId))!.body.toString('utf8');
    for (const uid of uids(unfold(after)))
      expect(uid).toMatch(new RegExp(`^session-\\d+-team-${teamId}@hill\\.rostercal$`));
    // Only the domain differs: SEQUENCE, LAST-MODIFIED and every other byte are what the store published.
    expect(unfold(after)).toBe(unfold(before).replaceAll(`@hill.${domain}.rostercal`, '@hill.rostercal'));
  });
});
