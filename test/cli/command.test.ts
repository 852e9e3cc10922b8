// Every `rostercal` command behaves the same way at the edges: exit 0 on success, 1 when the work fails, 2 for
// bad usage or a bad configuration — whichever command meets it.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { idOption, numberOption, UsageError } from '../../src/cli/command.ts';

const exec = promisify(execFile);

async function rostercal(args: string[], env: NodeJS.ProcessEnv) {
  const { PATH, HOME } = process.env;
  try {
    const { stdout, stderr } = await exec(process.execPath, ['bin/rostercal.js', ...args], {
      env: { PATH, HOME, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('rostercal commands', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rostercal-cli-'));

  it.each([
    ['sync'],
    ['status'],
    ['migrate'],
    ['feeds', 'list'],
    ['roster', '--team', '1', '-o', '-'],
    ['serve', '--port', '0'],
  ])('%s exits 2 on a configuration error, printing only the message', async (...args) => {
    const r = await rostercal(args, { ROSTERCAL_CONFIG: path.join(dir, 'missing.json') });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^config: cannot read ROSTERCAL_CONFIG file .*missing\.json: ENOENT/);
  });

  it('exits 2 on a bad option, with the usage text', async () => {
    const r = await rostercal(['status', '--runs', 'many'], { DATA_DIR: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--runs must be a whole number ≥ 1, got "many"');
    expect(r.stderr).toContain('usage: rostercal status');
  });

  it("roster --team given a team's name says what the id is and where to find it, never '≥ 0'", async () => {
    const env = {
      DATA_DIR: dir,
      UPSTREAM_URL: 'http://127.0.0.1:9/',
      UPSTREAM_TOKEN: 'unused-token',
      SCHOOL_TZ: 'Australia/Sydney',
      SCHOOL_NAME: 'Hillcrest College',
    };
    const name = await rostercal(['roster', '--team', 'U14 Netball A', '-o', '-'], env);
    expect(name.code).toBe(2);
    expect(name.stderr).toContain(
      `--team must be a whole number: the team's id, like 3004 (rostercal feeds list shows each team's id beside its name), got "U14 Netball A"`,
    );
    expect(name.stderr).not.toContain('≥');
    const session = await rostercal(['roster', '--team', '3004', '--session', 'tonight', '-o', '-'], env);
    expect(session.code).toBe(2);
    expect(session.stderr).toContain(
      `--session must be a whole number: the session's id, like 100175 (rostercal sessions --team ID lists a team's sessions), got "tonight"`,
    );
    expect(session.stderr).not.toContain('≥');
  });

  it('migrate uses the store the configuration file names', async () => {
    const dataDir = path.join(dir, 'from-file');
    const file = path.join(dir, 'config.json');
    const school = {
      id: 'x',
      name: 'X',
      upstream: { url: 'http://127.0.0.1:1/', token: 't' },
      timeZone: 'UTC',
    };
    writeFileSync(file, JSON.stringify({ dataDir, schools: [school] }));
    const ok = await rostercal(['migrate'], { ROSTERCAL_CONFIG: file });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`SQLite ${path.join(dataDir, 'rostercal.sqlite')}: applied`);
    expect(existsSync(path.join(dataDir, 'rostercal.sqlite'))).toBe(true);

    // databaseUrl from the file: PostgreSQL is tried (nothing listens there), never the SQLite default.
    writeFileSync(file, JSON.stringify({ databaseUrl: 'postgres://u:pw@127.0.0.1:1/rc', schools: [school] }));
    const pg = await rostercal(['migrate'], { ROSTERCAL_CONFIG: file });
    expect(pg.code).toBe(1);
    expect(pg.stderr).toMatch(/ECONNREFUSED/);
    expect(pg.stderr).not.toContain('pw');
  });
});

describe('numberOption', () => {
  it('reads whole numbers within bounds and names the option otherwise', () => {
    expect(numberOption('--runs', undefined)).toBeUndefined();
    expect(numberOption('--runs', '7', { min: 1 })).toBe(7);
    expect(numberOption('--rate-limit', '10/s', { max: 1e6, integer: false })).toBe(10);
    expect(numberOption('--error-rate', '0.25', { max: 1, integer: false })).toBe(0.25);
    expect(() => numberOption('--port', '70000', { max: 65535 })).toThrow(
      'must be a whole number from 0 to 65535, got "70000"',
    );
    expect(() => numberOption('--team', '1.5')).toThrow(UsageError);
    expect(() => numberOption('--team', '')).toThrow(/--team/);
    // Number() reads these as 1000, 16 and 5: a whole-number option takes digits only.
    for (const odd of ['1e3', '0x10', '+5', '0b11', '1_000'])
      expect(() => numberOption('--port', odd, { max: 65535 }), odd).toThrow(`got "${odd}"`);
    expect(numberOption('--port', ' 8080 ', { max: 65535 })).toBe(8080);
  });

  it('reads an id as digits only, naming where to find one', () => {
    expect(idOption('--team', '3004', 'team')).toBe(3004);
    for (const odd of ['1e3', '0x10', '+5', '0', '-1', '1.5', ''])
      expect(() => idOption('--team', odd, 'team'), odd).toThrow(`rostercal feeds list shows each team's id`);
    expect(() => idOption('ID', 'U14 Netball A', 'feed')).toThrow(
      "ID must be a whole number: the feed's id (rostercal feeds list shows each feed's scope and id)",
    );
  });
});
