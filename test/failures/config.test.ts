// Configuration traps, tried through the real `rostercal` CLI: what cannot work is refused at start with the
// field named (exit 2), before anything runs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { rostercal } from '../support/cli.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rostercal-config-traps-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function configFile(outlook: Record<string, unknown>): string {
  const name = `school-${n++}`;
  const file = join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      dataDir: join(dir, name),
      publicUrl: 'https://calendars.hill.example',
      schools: [
        {
          id: 'hill',
          name: 'Hill School',
          upstream: { url: 'http://127.0.0.1:9/', token: 'x' },
          timeZone: 'Australia/Sydney',
          targets: [{ id: 'staff', provider: 'outlook', scope: 'staff', outlook }],
        },
      ],
    }),
  );
  return file;
}

describe('Outlook URLs that cannot work', () => {
  const app = { tenantId: 't', clientId: 'c', clientSecret: 's' };
  const cases: [field: string, url: string, outlook: Record<string, string>][] = [
    ['authorityHost', 'http://login.example.com', app],
    ['authorityHost', 'http://127.0.0.1:8443', app],
    ['baseUrl', 'http://graph.example.com', { accessToken: 't' }],
  ];
  for (const [field, url, rest] of cases) {
    const outlook = { ...rest, [field]: url };
    it(`${field} ${url}: sync exits 2 naming the field`, async () => {
      const child = rostercal(['sync'], { ROSTERCAL_CONFIG: configFile(outlook) });
      onTestFinished(() => void child.proc.kill());
      expect(await child.exit, child.output()).toBe(2);
      expect(child.output()).toMatch(
        new RegExp(`schools\\[0\\]\\.targets\\[0\\]\\.outlook\\.${field}: must be an https:// URL`),
      );
      expect(child.output()).not.toMatch(/\n\s+at /);
    });
  }
});

/** `rostercal …` with exactly this environment (no inherited school or deployment variables). */
async function bare(args: string[], env: Record<string, string>) {
  const { PATH, HOME } = process.env;
  const child = rostercal(args, {
    ...Object.fromEntries(Object.keys(process.env).map((k) => [k, undefined])),
    PATH,
    HOME,
    DATA_DIR: join(dir, `bare-${n++}`),
    ...env,
  });
  onTestFinished(() => void child.proc.kill());
  const code = await child.exit;
  return { code, output: child.output(), stdout: child.stdout() };
}

describe('a partial environment configuration', () => {
  const sets: Record<string, string>[] = [
    { UPSTREAM_TOKEN: 'tok-1234' },
    { SCHOOL_TZ: 'Europe/London' },
    { UPSTREAM_TOKEN: 'tok-1234', SCHOOL_TZ: 'Europe/London', SCHOOL_NAME: 'Hill School' },
  ];
  for (const set of sets) {
    it(`${Object.keys(set).join(' + ')} without UPSTREAM_URL: exit 2 naming UPSTREAM_URL, no demo`, async () => {
      const r = await bare(['status'], set);
      expect(r.code, r.output).toBe(2);
      expect(r.output).toMatch(/^config: UPSTREAM_URL: is required/m);
      for (const name of Object.keys(set)) expect(r.output).toContain(name);
      expect(r.output).not.toContain('tok-1234');
      expect(r.output).not.toMatch(/Demo School/);
    });
  }

  it('UPSTREAM_URL & co. without SCHOOL_NAME: exit 2 naming SCHOOL_NAME', async () => {
    const r = await bare(['status'], {
      UPSTREAM_URL: 'https://api.hill.example/v1',
      UPSTREAM_TOKEN: 'tok-1234',
      SCHOOL_TZ: 'Europe/London',
      PUBLIC_URL: 'https://calendars.hill.example',
    });
    expect(r.code, r.output).toBe(2);
    expect(r.output).toMatch(/^config: SCHOOL_NAME.*: is required/m);
  });

  it('a school without PUBLIC_URL: a loud warning naming PUBLIC_URL (links would point at localhost)', async () => {
    const school = {
      UPSTREAM_URL: 'https://api.hill.example/v1',
      UPSTREAM_TOKEN: 'tok-1234',
      SCHOOL_TZ: 'Europe/London',
      SCHOOL_NAME: 'Hill School',
    };
    const r = await bare(['status'], school);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toMatch(/warning: PUBLIC_URL is not set.*http:\/\/localhost:8080/);
    const given = await bare(['status'], { ...school, PUBLIC_URL: 'https://calendars.hill.example' });
    expect(given.output).not.toMatch(/PUBLIC_URL/);
    const demo = await bare(['status'], {});
    expect(demo.output).not.toMatch(/PUBLIC_URL/);
  });
});

describe('rostercal with no command', () => {
  it('prints the usage on stderr and exits 2', async () => {
    const r = await bare([], {});
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.output).toMatch(/^usage: rostercal <command>/);
  });
  it('--help still prints it on stdout and exits 0', async () => {
    const r = await bare(['--help'], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^usage: rostercal <command>/);
  });
});
