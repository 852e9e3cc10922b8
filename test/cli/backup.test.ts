// `rostercal backup --out DIR` as a child process on a real SQLite store (made by `rostercal migrate`): what it
// writes and says, the feed secret kept out of the backup when FEED_SECRET holds it, and the refusals (exit 2) that
// name what is wrong before anything is written. (Backups of a served school, restored: test/privacy/backup-*.)
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRostercal } from '../support/cli.ts';

let dir: string;
let env: Record<string, string>;
const SECRET = 'a-feed-secret-of-forty-characters-------';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rostercal-backup-'));
  env = { DATA_DIR: join(dir, 'data') };
  const migrated = await runRostercal(['migrate'], env);
  expect(migrated.code, migrated.stderr).toBe(0);
}, 60_000);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('rostercal backup', () => {
  it('writes the store, the rotation record and the secret file, 0600, and says so', async () => {
    writeFileSync(join(dir, 'data', 'feed-secret'), `${SECRET}\n`, { mode: 0o600 });
    const out = join(dir, 'with-file');
    const r = await runRostercal(['backup', '--out', out], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^backup written to .*with-file in [\d.]+ s: rostercal\.sqlite, feed-rotations\.at-backup\.jsonl, feed-secret \([\d.]+ MB\)\n$/,
    );
    expect(readdirSync(out).sort()).toEqual([
      'feed-rotations.at-backup.jsonl',
      'feed-secret',
      'rostercal.sqlite',
    ]);
    for (const f of readdirSync(out)) expect(statSync(join(out, f)).mode & 0o777, f).toBe(0o600);
    expect(r.stdout).not.toContain(SECRET);
  });

  it('with FEED_SECRET set, leaves the secret out and says to keep it', async () => {
    const out = join(dir, 'with-env');
    const r = await runRostercal(['backup', '--out', out], { ...env, FEED_SECRET: SECRET });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['feed-rotations.at-backup.jsonl', 'rostercal.sqlite']);
    expect(r.stdout).toContain(
      'FEED_SECRET is set: keep its value with this backup (it is not written here)',
    );
    expect(r.stdout).not.toContain(SECRET);
  });

  it('no --out, a file, a directory not empty or no store: exit 2 naming it, nothing written', async () => {
    const none = await runRostercal(['backup'], env);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--out DIR is required');
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    const onFile = await runRostercal(['backup', '--out', file], env);
    expect(onFile.code).toBe(2);
    expect(onFile.stderr).toContain(`${file} is a file: give a new or empty directory`);
    const full = join(dir, 'full');
    mkdirSync(full);
    writeFileSync(join(full, 'keep'), 'x');
    const notEmpty = await runRostercal(['backup', '--out', full], env);
    expect(notEmpty.code).toBe(2);
    expect(notEmpty.stderr).toContain(`${full} is not empty`);
    expect(readdirSync(full)).toEqual(['keep']);
    const noStore = await runRostercal(['backup', '--out', join(dir, 'nothing')], {
      DATA_DIR: join(dir, 'elsewhere'),
    });
    expect(noStore.code).toBe(2);
    expect(noStore.stderr).toMatch(/no store to back up: .*elsewhere.*rostercal\.sqlite does not exist/);
    expect(existsSync(join(dir, 'nothing'))).toBe(false);
  });

  it('a directory that cannot be made (under /proc) fails at once, naming it', async () => {
    const started = Date.now();
    const r = await runRostercal(['backup', '--out', '/proc/nope/backup'], { ...env, FEED_SECRET: SECRET });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('/proc/nope');
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 30_000);
});
