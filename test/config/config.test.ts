import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, describeConfig, loadConfig } from '../../src/config.ts';
import { scrubSecrets } from '../../src/log-text.ts';
import { rostercal } from '../support/cli.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rostercal-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const goodSchool = {
  id: 'north',
  name: 'North High',
  upstream: {
    url: 'https://api.example.org/v1',
    token: 'env:NORTH_TOKEN',
    rateLimit: { requestsPerSecond: 5 },
  },
  timeZone: 'Australia/Sydney',
  syncWindow: { daysBack: 30 },
  schedules: { incremental: '*/5 * * * *' },
  // Shape owned by src/config/push-targets.ts; loadConfig validates it with the rest and carries the targets typed.
  targets: [{ id: 'g', scope: 'team', provider: 'google', google: { auth: { accessToken: 'ya29.static' } } }],
};

let n = 0;
async function fileWith(content: unknown): Promise<string> {
  const file = path.join(dir, `config-${n++}.json`);
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

async function configError(content: unknown, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const file = await fileWith(content);
  try {
    await loadConfig({ ROSTERCAL_CONFIG: file, NORTH_TOKEN: 'secret-north-token-123', ...env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

const withSchool = (patch: Record<string, unknown>) => ({ schools: [{ ...goodSchool, ...patch }] });

describe('config file', () => {
  it('loads a good file with defaults filled and env:NAME tokens resolved', async () => {
    const file = await fileWith({ schools: [goodSchool], port: 9000 });
    const cfg = await loadConfig({ ROSTERCAL_CONFIG: file, NORTH_TOKEN: 'secret-north-token-123' });
    expect(cfg.source).toEqual({ kind: 'file', path: file });
    expect(cfg.port).toBe(9000);
    expect(cfg.publicUrl).toBe('http://localhost:9000');
    expect(cfg.dataDir).toBe('./data');
    expect(cfg.databaseUrl).toBeUndefined();
    const s = cfg.schools[0]!;
    expect(s.upstream.token).toBe('secret-north-token-123');
    expect(s.upstream.rateLimit).toEqual({ requestsPerSecond: 5, concurrency: 4 });
    expect(s.demo).toBe(false);
    expect(s.syncWindow).toEqual({ daysBack: 30, daysAhead: 365 });
    expect(s.schedules).toEqual({ incremental: '*/5 * * * *', full: '0 */6 * * *' });
    expect(s.deletionGuard).toEqual({ maxShrinkFraction: 0.3 });
    expect(s.targets).toMatchObject([
      {
        id: 'g',
        scope: 'team',
        provider: 'google',
        google: { auth: { kind: 'token', accessToken: 'ya29.static' } },
      },
    ]);
  });

  it("cuts the configuration's own secrets out of any scrubbed text, even one that reads like a word", async () => {
    const file = await fileWith({ schools: [goodSchool] });
    const feedSecret = 'correcthorsebatterystaplecorrecthorse';
    await loadConfig({ ROSTERCAL_CONFIG: file, NORTH_TOKEN: 'plainwordtokenvalue', FEED_SECRET: feedSecret });
    // Prose after a name keeps its words (log-text isProse), but never the configured value itself.
    expect(scrubSecrets(`FEED_SECRET: ${feedSecret} was set`)).toBe('FEED_SECRET: [redacted] was set');
    expect(scrubSecrets('the upstream said plainwordtokenvalue is wrong')).toBe(
      'the upstream said [redacted] is wrong',
    );
    expect(scrubSecrets('FEED_SECRET: neither the database')).toBe('FEED_SECRET: neither the database');
  });

  it('takes deployment settings from the environment over the file', async () => {
    const file = await fileWith({ schools: [goodSchool], port: 9000, dataDir: '/srv/a' });
    const cfg = await loadConfig({
      ROSTERCAL_CONFIG: file,
      NORTH_TOKEN: 'x',
      PORT: '7000',
      DATA_DIR: '/srv/b',
      DATABASE_URL: 'postgres://u:pw@db/rc',
      PUBLIC_URL: 'https://cal.example.org/',
    });
    expect(cfg.port).toBe(7000);
    expect(cfg.dataDir).toBe('/srv/b');
    expect(cfg.databaseUrl).toBe('postgres://u:pw@db/rc');
    expect(cfg.publicUrl).toBe('https://cal.example.org');
  });

  it.each([
    [
      withSchool({ timeZone: 'Europe/Lodnon' }),
      'config: schools[0].timeZone: "Europe/Lodnon" is not a known time zone',
    ],
    [
      withSchool({ upstream: { url: 'ftp://x', token: 't' } }),
      'config: schools[0].upstream.url: is not an http(s) URL',
    ],
    [withSchool({ upstream: { url: 'https://x' } }), 'config: schools[0].upstream.token: is required'],
    [
      withSchool({ upstream: { url: 'https://x', token: '' } }),
      'config: schools[0].upstream.token: must not be empty',
    ],
    [withSchool({ name: 42 }), 'config: schools[0].name: expected string, received number'],
    [
      withSchool({ schedules: { full: 'every day' } }),
      'config: schools[0].schedules.full: "every day" is not a valid cron expression',
    ],
    [
      withSchool({ syncWindow: { daysBack: -1 } }),
      'config: schools[0].syncWindow.daysBack: Too small: expected number to be >=0',
    ],
    [
      withSchool({ deletionGuard: { maxShrinkFraction: 2 } }),
      'config: schools[0].deletionGuard.maxShrinkFraction: Too big: expected number to be <=1',
    ],
    [withSchool({ timezone: 'UTC' }), 'config: schools[0].timezone: unknown field'],
    [withSchool({ id: 'a b' }), 'config: schools[0].id: must be 1-63 letters, digits'],
    [{ schools: [] }, 'config: schools: needs at least one school'],
    [{ schools: [goodSchool, goodSchool] }, 'config: schools[1].id: "north" is used twice'],
    [{ schools: [goodSchool], port: 'eighty' }, 'config: port: "eighty" is not a port number (0–65535)'],
    [
      { schools: [goodSchool], databaseUrl: 'mysql://x' },
      'config: databaseUrl: must be a postgres:// or postgresql:// URL',
    ],
  ])('names the bad field: %#', async (content, expected) => {
    const msg = await configError(content);
    expect(msg).toContain(expected);
    expect(msg).not.toContain('secret-north-token-123');
  });

  it('lists every problem in one message', async () => {
    const msg = await configError(withSchool({ timeZone: 'Mars/Olympus', name: '' }));
    expect(msg).toContain('schools[0].timeZone');
    expect(msg).toContain('schools[0].name: must not be empty');
    expect(msg.split('\n').filter((l) => l.startsWith('config: '))).toHaveLength(2);
  });

  it('names a missing env:NAME variable without printing anything secret', async () => {
    const msg = await configError(withSchool({ upstream: { url: 'https://x', token: 'env:SOUTH_TOKEN' } }));
    expect(msg).toContain('config: schools[0].upstream.token: environment variable SOUTH_TOKEN is not set');
  });

  it('names an environment variable that overrides a file setting', async () => {
    const msg = await configError({ schools: [goodSchool] }, { PORT: 'x80' });
    expect(msg).toContain('config: PORT: "x80" is not a port number (0–65535)');
  });

  it('reports unreadable files and bad JSON with the file name', async () => {
    await expect(loadConfig({ ROSTERCAL_CONFIG: path.join(dir, 'nope.json') })).rejects.toThrow(
      /config: cannot read ROSTERCAL_CONFIG file .*nope\.json: ENOENT/,
    );
    const msg = await configError('{ "schools": [ ');
    expect(msg).toMatch(/config: .*config-\d+\.json is not valid JSON/);
    expect(await configError('[1]')).toContain('must hold a JSON object');
  });
});

describe('config from the environment', () => {
  it('describes one school with UPSTREAM_URL, UPSTREAM_TOKEN and SCHOOL_TZ', async () => {
    const cfg = await loadConfig({
      UPSTREAM_URL: 'https://api.example.org',
      UPSTREAM_TOKEN: 'tok-abcdef-123456',
      SCHOOL_TZ: 'America/New_York',
      SCHOOL_ID: 'east',
      SCHOOL_NAME: 'East Academy',
      PORT: '8081',
    });
    expect(cfg.source).toEqual({ kind: 'env' });
    expect(cfg.schools).toHaveLength(1);
    expect(cfg.schools[0]).toMatchObject({
      id: 'east',
      name: 'East Academy',
      demo: false,
      timeZone: 'America/New_York',
      upstream: { url: 'https://api.example.org', token: 'tok-abcdef-123456' },
    });
    expect(cfg.port).toBe(8081);
  });

  it('names the environment variable that is wrong', async () => {
    await expect(loadConfig({ UPSTREAM_URL: 'https://x', SCHOOL_TZ: 'UTC' })).rejects.toThrow(
      'config: UPSTREAM_TOKEN: is required',
    );
    await expect(
      loadConfig({ UPSTREAM_URL: 'https://x', UPSTREAM_TOKEN: 't', SCHOOL_TZ: 'Nowhere/Town' }),
    ).rejects.toThrow('config: SCHOOL_TZ');
    await expect(
      loadConfig({ UPSTREAM_URL: 'not a url', UPSTREAM_TOKEN: 't', SCHOOL_TZ: 'UTC' }),
    ).rejects.toThrow('config: UPSTREAM_URL: is not an http(s) URL');
    // Found from outside: a password in the URL reached the terminal and the logs through fetch's refusal.
    const withPassword = loadConfig({
      UPSTREAM_URL: 'http://bob:UPWSECRET@127.0.0.1:9/',
      UPSTREAM_TOKEN: 't',
      SCHOOL_TZ: 'UTC',
    });
    await expect(withPassword).rejects.toThrow(
      'config: UPSTREAM_URL: must not carry a user name or password',
    );
    await expect(withPassword).rejects.not.toThrow(/UPWSECRET|bob/);
    // Found from outside: a key in the query was refused by the client later, as our fault (exit 1).
    const withQuery = loadConfig({
      UPSTREAM_URL: 'http://127.0.0.1:9/v1?api_key=QUERYSECRET',
      UPSTREAM_TOKEN: 't',
      SCHOOL_TZ: 'UTC',
    });
    await expect(withQuery).rejects.toThrow('config: UPSTREAM_URL: must not carry a query or fragment');
    await expect(withQuery).rejects.not.toThrow(/QUERYSECRET/);
    await expect(loadConfig({ UPSTREAM_URL: 'https://x', UPSTREAM_TOKEN: 't' })).rejects.toThrow(
      'config: SCHOOL_TZ (the school’s IANA time zone, e.g. Europe/London): is required',
    );
  });
});

describe('deployment settings an operator gets wrong', () => {
  it('a DATA_DIR that is a file (or lies under one) is a configuration error naming DATA_DIR', async () => {
    const file = path.join(dir, 'not-a-dir');
    await writeFile(file, 'x');
    await expect(loadConfig({ DATA_DIR: file })).rejects.toThrow(
      `config: DATA_DIR: ${file} is not a directory (the SQLite store and the feed secret live there)`,
    );
    await expect(loadConfig({ DATA_DIR: path.join(file, 'sub') })).rejects.toThrow(
      `config: DATA_DIR: ${path.join(file, 'sub')} cannot be a directory: ${file} is a file`,
    );
    // The same from the file, under the file's own name for the field.
    expect(await configError({ ...withSchool({}), dataDir: file })).toContain('config: dataDir: ');
  });

  it('the CLI exits 2 with that message rather than 1 with a bare ENOTDIR', async () => {
    const file = path.join(dir, 'data-file');
    await writeFile(file, 'x');
    const child = rostercal(['status'], { DATA_DIR: path.join(file, 'sub') });
    expect(await child.exit).toBe(2);
    expect(child.output()).toContain('config: DATA_DIR: ');
    expect(child.output()).not.toContain('ENOTDIR');
  });

  it('a PORT that is not a number names the value and what is expected', async () => {
    await expect(loadConfig({ PORT: 'abc' })).rejects.toThrow(
      'config: PORT: "abc" is not a port number (0–65535)',
    );
  });
});

describe('demo config', () => {
  it('uses the sandbox school when nothing is configured', async () => {
    const cfg = await loadConfig({ DATA_DIR: '/tmp/demo-data' });
    expect(cfg.source).toEqual({ kind: 'demo' });
    expect(cfg.dataDir).toBe('/tmp/demo-data');
    expect(cfg.schools).toHaveLength(1);
    expect(cfg.schools[0]!.demo).toBe(true);
    expect(cfg.schools[0]!.id).toBe('demo');
  });
});

describe('describeConfig', () => {
  it('never shows tokens or database passwords', async () => {
    const file = await fileWith({ schools: [goodSchool] });
    const cfg = await loadConfig({
      ROSTERCAL_CONFIG: file,
      NORTH_TOKEN: 'secret-north-token-123',
      DATABASE_URL: 'postgres://rc:hunter2-password@db:5432/rc',
    });
    const text = JSON.stringify(describeConfig(cfg));
    expect(text).not.toContain('secret-north-token-123');
    expect(text).not.toContain('hunter2-password');
    expect(text).toContain('[redacted]');
    expect(text).toContain('Australia/Sydney');
  });
});
