// `rostercal migrate --compact`, the real CLI as a child process: it rebuilds an SQLite store made with 4 KB
// pages into PAGE_SIZE pages with every record kept, the file still the service's alone; it refuses (exit 1,
// nothing changed) while another process has the store open; and it is a usage error on PostgreSQL.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, PAGE_SIZE } from '../../src/store/index.ts';
import { session } from './fixtures.ts';

const exec = promisify(execFile);
const root = mkdtempSync(path.join(tmpdir(), 'rostercal-compact-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function rostercal(args: string[], env: Record<string, string>) {
  const base = {
    PATH: process.env.PATH ?? '',
    UPSTREAM_URL: 'http://127.0.0.1:9',
    UPSTREAM_TOKEN: 'compact-test-token',
    SCHOOL_TZ: 'Australia/Sydney',
    SCHOOL_NAME: 'Hillcrest College',
    PUBLIC_URL: 'https://cal.example.org',
    LOG_LEVEL: 'silent',
  };
  try {
    const { stdout, stderr } = await exec(process.execPath, ['bin/rostercal.js', ...args], {
      env: { ...base, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function inspect(file: string) {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const one = (sql: string) => Object.values(db.prepare(sql).get() as object)[0];
    return {
      pageSize: one('PRAGMA page_size'),
      journal: one('PRAGMA journal_mode'),
      integrity: one('PRAGMA integrity_check'),
      sessions: one('SELECT count(*) FROM sessions WHERE deleted_at IS NULL'),
    };
  } finally {
    db.close();
  }
}

/** A store as versions before 16 KB pages made it: 4 KB pages, 300 sessions, a third of them deleted since. */
async function oldStore(dataDir: string): Promise<string> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, 'rostercal.sqlite');
  const made = new DatabaseSync(file);
  made.exec('PRAGMA page_size = 4096; PRAGMA journal_mode = WAL');
  made.close();
  const store = await openStore({ file });
  await store.records.upsertSchool({ id: 'hc', name: 'Hillcrest College', timeZone: 'Australia/Sydney' });
  const at = '2026-11-01T00:00:00.000Z';
  await store.records.upsert(
    'hc',
    'sessions',
    Array.from({ length: 300 }, (_, i) => session(i + 1, { notes: 'x'.repeat(2_000) })),
    at,
  );
  await store.records.markDeleted(
    'hc',
    'sessions',
    Array.from({ length: 100 }, (_, i) => i + 1),
    at,
  );
  await store.close();
  return file;
}

describe('rostercal migrate --compact', () => {
  it('moves a store made with 4 KB pages to PAGE_SIZE pages, every record kept, the file private', async () => {
    const dataDir = path.join(root, 'old');
    const file = await oldStore(dataDir);
    expect(inspect(file)).toMatchObject({ pageSize: 4096, sessions: 200 });

    const r = await rostercal(['migrate', '--compact'], { DATA_DIR: dataDir });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/compacted in [\d.]+ s: [\d.]+ MB → [\d.]+ MB, pages 4 KB → 16 KB/);

    expect(inspect(file)).toEqual({ pageSize: PAGE_SIZE, journal: 'wal', integrity: 'ok', sessions: 200 });
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
    // The service reads and writes it as ever.
    const store = await openStore({ file });
    expect((await store.records.get('hc', 'sessions', 250))?.notes).toBe('x'.repeat(2_000));
    await store.close();
  });

  it('refuses, changing nothing, while another process has the store open', async () => {
    const dataDir = path.join(root, 'busy');
    const file = await oldStore(dataDir);
    const open = await openStore({ file });
    try {
      expect(await open.records.get('hc', 'sessions', 250)).not.toBeNull();
      const r = await rostercal(['migrate', '--compact'], { DATA_DIR: dataDir });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/is open in another process \(a running rostercal serve or sync\?\): stop it/);
    } finally {
      await open.close();
    }
    expect(inspect(file)).toEqual({ pageSize: 4096, journal: 'wal', integrity: 'ok', sessions: 200 });
  });

  it('is a usage error on PostgreSQL', async () => {
    const r = await rostercal(['migrate', '--compact'], {
      DATA_DIR: path.join(root, 'pg'),
      DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--compact is for SQLite stores/);
  });
});
