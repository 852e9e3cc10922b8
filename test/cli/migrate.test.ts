// `rostercal migrate` as a child process on a real SQLite file: a new store gets every migration, a second run
// finds it up to date, --compact rebuilds it and says by how much, and --compact on PostgreSQL is a usage error
// (exit 2) naming the option. The database a URL names is printed without its password.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRostercal } from '../support/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'rostercal-migrate-'));
const env = { DATA_DIR: dir };
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('rostercal migrate', () => {
  it('applies every migration to a new store, then finds it up to date', async () => {
    const first = await runRostercal(['migrate'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(
      new RegExp(`^SQLite ${join(dir, 'rostercal.sqlite')}: applied \\d+ migration\\(s\\): \\w`),
    );
    const again = await runRostercal(['migrate'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(`SQLite ${join(dir, 'rostercal.sqlite')}: schema up to date\n`);
  });

  it('--compact rebuilds the SQLite file and reports sizes and page sizes', async () => {
    const r = await runRostercal(['migrate', '--compact'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/: compacted in [\d.]+ s: [\d.]+ MB → [\d.]+ MB, pages \d+ KB → 16 KB\n$/);
  });

  it('--compact with a PostgreSQL URL is refused (exit 2) before connecting, and the password is never printed', async () => {
    const r = await runRostercal(['migrate', '--compact'], {
      DATABASE_URL: 'postgres://rc:hunter2-password@127.0.0.1:9/none',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--compact is for SQLite stores');
    expect(r.stdout + r.stderr).not.toContain('hunter2-password');
  });
});
