// A cursor in the upstream's future (issue 41): one written by this server's clock before cursors followed the
// upstream's, or left by an upstream whose clock then went back by more than the overlap. A listing asked with it
// could not hold what was stamped before it, so the resource is read whole on the next pull instead of the edit
// being lost until a full pull. In process against a real sandbox and SQLite store.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SchoolConfig } from '../../src/config.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { formatSummary } from '../../src/sync/report.ts';
import type { UpstreamClient } from '../../src/upstream/api.ts';
import { TEST_NOW } from '../support/clock.ts';
import { type ReverseProxy, reverseProxy } from '../support/proxy.ts';
import { openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

const MINUTE = 60_000;

describe('a sessions cursor in the upstream’s future', () => {
  let sandbox: Sandbox;
  let ts: TestStore;
  let client: UpstreamClient;
  let school: SchoolConfig;
  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 8, scale: 'small', now: TEST_NOW });
    ts = await openTestStore('sqlite');
    client = testClient(sandbox);
    school = testSchool(sandbox);
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('is not trusted: the next pull reads the sessions whole and the edit arrives', async () => {
    const now = () => new Date(sandbox.now());
    const pull = (kind: 'full' | 'incremental') => pullSchool({ now, store: ts.store, client, school, kind });
    expect((await pull('full')).status).toBe('succeeded');

    const at = Date.parse(sandbox.now());
    const session = sandbox.school.sessions.find((s) => s.start > at + 86_400_000 && !s.cancelled)!;
    const email = sandbox.school.users.find((u) => u.email)!.email;
    await client.updateSessions({ email, sessions: [{ id: session.id, title: 'Retitled long ago' }] });
    // Ten minutes later upstream; the cursor, as this server's clock 5 min ahead wrote it before the fix, lies
    // beyond even that.
    sandbox.setNow(new Date(at + 10 * MINUTE).toISOString());
    await ts.store.records.setCursor(
      school.id,
      'updatedAfter:sessions',
      new Date(at + 13 * MINUTE).toISOString(),
    );

    // Asked from the upstream's future, the listing holds nothing; the cursor it leaves reads everything.
    const missed = await pull('incremental');
    expect(missed.counts.sessions).toMatchObject({ changed: 0 });
    expect(await ts.store.records.getCursor(school.id, 'updatedAfter:sessions')).toBe(
      new Date(0).toISOString(),
    );

    const read = await pull('incremental');
    expect(read.counts.sessions).toMatchObject({ changed: 1 });
    // The sandbox runs weeks off the real clock (TEST_NOW): `sync`'s summary says so.
    expect(formatSummary(read, 'Hillcrest College').join('\n')).toMatch(
      /upstream clock: (\d+ d )?(\d+ h )?(\d+ min )?(\d+ s )?(behind|ahead of) this server's/,
    );
    expect((await ts.store.records.get(school.id, 'sessions', session.id))!.title).toBe('Retitled long ago');
    // And the cursor is the upstream's time again, less the overlap.
    const cursor = Date.parse((await ts.store.records.getCursor(school.id, 'updatedAfter:sessions'))!);
    expect(Math.abs(cursor - (Date.parse(sandbox.now()) - 120_000))).toBeLessThan(10_000);
  });
});

// An upstream whose `Date` cannot be trusted: none (a proxy strips it), one that is not a date, one years in the
// future. With this server's clock 5 minutes ahead of the upstream's, none of them may cost the edit, and none may
// leave a cursor the upstream refuses (a year past 9999 made every later listing a 400, for ever).
const LYING_DATES: [string, () => string | undefined, RegExp?][] = [
  ['no Date header', () => undefined],
  ['a Date that is not a date', () => 'banana'],
  ['a Date in the year 9999', () => 'Fri, 31 Dec 9999 23:59:59 GMT', /ahead of this server's; .*not trusted/],
  ['a Date in the year 99999', () => '99999'],
];
describe.each(LYING_DATES)('an upstream sending %s, this server 5 min ahead', (_name, date, says) => {
  let sandbox: Sandbox;
  let front: ReverseProxy;
  let ts: TestStore;
  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 8, scale: 'small', now: TEST_NOW });
    front = await reverseProxy(sandbox.url, { date });
    ts = await openTestStore('sqlite');
  });
  afterAll(async () => {
    await ts?.cleanup();
    await front?.close();
    await sandbox?.close();
  });

  it('the edit arrives on the next pulls, which succeed', async () => {
    const upstream = { url: front.url, token: sandbox.token };
    const client = testClient(upstream);
    const school = testSchool(upstream);
    const now = () => new Date(Date.parse(sandbox.now()) + 5 * MINUTE);
    const pull = (kind: 'full' | 'incremental') => pullSchool({ now, store: ts.store, client, school, kind });
    expect((await pull('full')).status).toBe('succeeded');

    const at = Date.parse(sandbox.now());
    const session = sandbox.school.sessions.find((s) => s.start > at + 86_400_000 && !s.cancelled)!;
    const email = sandbox.school.users.find((u) => u.email)!.email;
    await client.updateSessions({ email, sessions: [{ id: session.id, title: 'Retitled behind a proxy' }] });
    sandbox.setNow(new Date(at + 10_000).toISOString());

    for (const run of [await pull('incremental'), await pull('incremental')]) {
      expect(run.status, run.errors.join('\n')).toBe('succeeded');
      // `sync`'s summary does not claim the lying clock is followed.
      if (says) expect(formatSummary(run, 'Hillcrest College').join('\n')).toMatch(says);
    }
    expect((await ts.store.records.get(school.id, 'sessions', session.id))!.title).toBe(
      'Retitled behind a proxy',
    );
  });
});

describe('a cursor the upstream refuses (a year past 9999, left by a lying Date)', () => {
  it('is not asked with: the resource is read whole and the pull succeeds', async () => {
    const sandbox = await startSandbox({ seed: 8, scale: 'small', now: TEST_NOW });
    const ts = await openTestStore('sqlite');
    try {
      const client = testClient(sandbox);
      const school = testSchool(sandbox);
      const now = () => new Date(sandbox.now());
      const pull = (kind: 'full' | 'incremental') =>
        pullSchool({ now, store: ts.store, client, school, kind });
      expect((await pull('full')).status).toBe('succeeded');
      await ts.store.records.setCursor(school.id, 'updatedAfter:sessions', '+099998-12-31T23:58:00.000Z');
      const run = await pull('incremental');
      expect(run.status, run.errors.join('\n')).toBe('succeeded');
      const cursor = Date.parse((await ts.store.records.getCursor(school.id, 'updatedAfter:sessions'))!);
      expect(Math.abs(cursor - (Date.parse(sandbox.now()) - 120_000))).toBeLessThan(10_000);
    } finally {
      await ts.cleanup();
      await sandbox.close();
    }
  });
});

// A listing answered without a `Date` (a proxy in front of one path strips it) while the upstream's other answers
// carry one: the cursor follows the upstream's clock as measured on those (issue 41's rule), so an incremental fire
// costs what it costs with a Date, not a whole read of the sessions; and the "no Date" warning is said once per
// school, not per resource per pull. This server 5 min ahead: no edit is lost either.
describe('sessions answered without a Date, the rest with one, this server 5 min ahead', () => {
  let sandbox: Sandbox;
  const proxies: ReverseProxy[] = [];
  const stores: TestStore[] = [];
  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 8, scale: 'small', now: TEST_NOW });
  });
  afterAll(async () => {
    for (const s of stores) await s.cleanup();
    for (const p of proxies) await p.close();
    await sandbox?.close();
  });

  /** Requests per incremental fire through a proxy (stripping sessions' Date or not), and the warnings said. */
  async function fires(strip: boolean, n: number) {
    let requests = 0;
    const front = await reverseProxy(sandbox.url, {
      intercept: () => {
        requests++;
        return false;
      },
      date: (d, req) => (strip && /\/sessions\b/.test(req.url ?? '') ? undefined : d),
    });
    proxies.push(front);
    const ts = await openTestStore('sqlite');
    stores.push(ts);
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (l: string) => void lines.push(l) });
    const upstream = { url: front.url, token: sandbox.token };
    const client = testClient(upstream);
    const school = testSchool(upstream);
    const now = () => new Date(Date.parse(sandbox.now()) + 5 * MINUTE);
    const pull = (kind: 'full' | 'incremental') =>
      pullSchool({ now, store: ts.store, client, school, kind, log });
    expect((await pull('full')).status).toBe('succeeded');
    const at = Date.parse(sandbox.now());
    const session = sandbox.school.sessions.find((s) => s.start > at + 86_400_000 && !s.cancelled)!;
    const email = sandbox.school.users.find((u) => u.email)!.email;
    await client.updateSessions({ email, sessions: [{ id: session.id, title: `Retitled, strip=${strip}` }] });
    const perFire: number[] = [];
    const sessionsRead: number[] = [];
    for (let i = 0; i < n; i++) {
      sandbox.setNow(new Date(Date.parse(sandbox.now()) + 10_000).toISOString());
      const before = requests;
      const run = await pull('incremental');
      expect(run.status, run.errors.join('\n')).toBe('succeeded');
      perFire.push(requests - before);
      const c = run.resources.find((r) => r.kind === 'sessions')?.counts;
      sessionsRead.push(c ? c.added + c.changed + c.unchanged + c.skipped : 0);
    }
    const title = (await ts.store.records.get(school.id, 'sessions', session.id))!.title;
    const noDate = lines.filter((l) => /Date header to trust/.test(l));
    return { perFire, sessionsRead, title, noDate };
  }

  it('costs an incremental fire what it costs with a Date, says so once, and loses no edit', async () => {
    const withDate = await fires(false, 4);
    const without = await fires(true, 4);
    console.log(
      `per incremental fire, requests / sessions read: with a Date ${withDate.perFire.join(', ')} / ${withDate.sessionsRead.join(', ')}; sessions without one ${without.perFire.join(', ')} / ${without.sessionsRead.join(', ')}`,
    );
    expect(without.title).toBe('Retitled, strip=true');
    expect(withDate.title).toBe('Retitled, strip=false');
    // After the first fire (which may still read what the full pull left whole), each fire costs what it costs
    // with a Date.
    for (let i = 1; i < 4; i++) {
      expect(without.perFire[i]).toBeLessThanOrEqual(withDate.perFire[i]!);
      expect(without.sessionsRead[i]).toBeLessThanOrEqual(withDate.sessionsRead[i]! + 1);
    }
    expect(withDate.noDate).toEqual([]);
    expect(without.noDate.length).toBe(1);
    expect(without.noDate[0]).toMatch(/without a Date header.*clock as measured/);
  });
});
