// What this process has seen of its store (web/store-trouble.ts), for /readyz: the writes it refuses, one line a
// kind, from the first refusal of the streak; damage met by a request said at once and checked again; a real
// SQLite store's integrity check behind it. Errors are real ones: a write to a read-only SQLite file, a read of a
// file that is not a database.
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreTrouble } from '../../src/web/store-trouble.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';

let ts: TestStore;
let readOnlyError: unknown;
let notADatabase: unknown;

function caught(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}

beforeAll(async () => {
  ts = await openTestStore('sqlite');
  const dir = ts.env.DATA_DIR!;
  const file = join(dir, 'small.sqlite');
  new DatabaseSync(file).exec('CREATE TABLE t (x)');
  const ro = new DatabaseSync(file, { readOnly: true });
  readOnlyError = caught(() => ro.exec('INSERT INTO t VALUES (1)'));
  const junk = join(dir, 'junk.sqlite');
  writeFileSync(junk, Buffer.alloc(8192, 0x5a));
  notADatabase = caught(() => new DatabaseSync(junk).prepare('SELECT * FROM sqlite_master').all());
});
afterAll(async () => {
  await ts?.cleanup();
});

describe('StoreTrouble', () => {
  it('names each kind of write refused since the first refusal of its streak, until one is written', () => {
    let at = Date.parse('2026-12-01T00:00:00Z');
    const t = new StoreTrouble({ checkIntegrity: async () => null, now: () => new Date(at) });
    expect(t.write('rendered feeds', readOnlyError)).toBe(true);
    at += 60_000;
    expect(t.write('rendered feeds', readOnlyError)).toBe(false);
    expect(t.writeProblems()).toEqual([
      expect.stringMatching(/^rendered feeds cannot be stored since 2026-12-01T00:00:00\.000Z: .*readonly/),
    ]);
    expect(t.write('rendered feeds', null)).toBe(false);
    expect(t.writeProblems()).toEqual([]);
  });

  it('never repeats a URL or a credential an error quotes', () => {
    const t = new StoreTrouble({ checkIntegrity: async () => null });
    t.write('runs', new Error('connect to postgres://rc:hunter2@db.internal:5432/rc refused'));
    const [line] = t.writeProblems();
    expect(line).toContain('<url>');
    expect(line).not.toContain('hunter2');
  });

  it("the real store's check: intact is null, asked once per interval", async () => {
    let checks = 0;
    const t = new StoreTrouble({
      checkIntegrity: () => {
        checks++;
        return ts.store.checkIntegrity();
      },
    });
    expect(await t.damage()).toBeNull();
    expect(await t.damage()).toBeNull();
    expect(checks).toBe(1);
  });

  it('a request that met damage makes it damaged at once and checks again; other errors do not', async () => {
    let checks = 0;
    const t = new StoreTrouble({
      checkIntegrity: async () => {
        checks++;
        return checks > 1 ? 'page 7: btree corrupt' : null;
      },
    });
    expect(await t.damage()).toBeNull();
    t.requestFailed(readOnlyError);
    expect(await t.damage()).toBeNull();
    t.requestFailed(notADatabase);
    expect(await t.damage()).toMatch(/^a read failed: file is not a database/);
    await new Promise((r) => setTimeout(r, 50));
    expect(checks).toBe(2);
    expect(await t.damage()).toBe('page 7: btree corrupt');
  });

  it('a write refused because the store could not be reached is forgotten once it answers; a refusal of its own is not', async () => {
    // A real refusal to connect: nothing listens on a port just closed.
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await new Promise((r) => server.close(r));
    const socket = connect(port, '127.0.0.1');
    const [refused] = (await once(socket, 'error')) as [unknown];
    const t = new StoreTrouble({ checkIntegrity: async () => null });
    t.write('feed renders', refused);
    t.write('absence reports', readOnlyError);
    expect(t.writeProblems()).toHaveLength(2);
    t.reached();
    expect(t.writeProblems()).toEqual([expect.stringMatching(/^absence reports cannot be stored since /)]);
  });

  it('a check that itself fails is said as damage, not thrown', async () => {
    const t = new StoreTrouble({ checkIntegrity: async () => Promise.reject(notADatabase) });
    expect(await t.damage()).toMatch(/^the integrity check failed: file is not a database/);
  });
});
