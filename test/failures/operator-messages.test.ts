// What school IT sees when a setting is wrong, through the real `rostercal` CLI: one line naming the setting and
// what to check (as a bad configuration file already gets), never a stack trace or the same error per resource.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';

let sandbox: Sandbox;
let dir: string;
let n = 0;
const fresh = () => path.join(dir, `store-${n++}`);

beforeAll(async () => {
  sandbox = await startWeekSandbox({ scale: 'small' });
  dir = mkdtempSync(path.join(tmpdir(), 'rostercal-operator-'));
});
afterAll(async () => {
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The lines meant for people: not the JSON log lines. */
/** The log's own lines: JSON for log tools, or text where sync's stderr is read by a person (0a0d330). */
const LOG_LINE = /^(\{|rostercal sync: (trace|debug|info|warn|error|fatal): )/;
const human = (out: string) => out.split('\n').filter((l) => !LOG_LINE.test(l));

/** Lines that look like a stack trace or a JSON log carrying one. */
const STACK = /"stack"|\n\s+at .+\(.+:\d+:\d+\)/;

describe('a wrong upstream token or URL (rostercal sync)', () => {
  it('a wrong UPSTREAM_TOKEN: one line naming UPSTREAM_TOKEN, no stack, the 401 said once per place', async () => {
    const env = { ...schoolEnv(sandbox, { DATA_DIR: fresh() }), UPSTREAM_TOKEN: 'not-the-token-1234' };
    const child = rostercal(['sync'], env);
    expect(await child.exit, child.output()).toBe(1);
    const out = child.output();
    expect(out).not.toMatch(STACK);
    expect(out).not.toContain('not-the-token-1234');
    // Once in the progress (stderr), once in the summary's problem line (stdout); no line per resource. The log
    // says it once more, in its own line.
    expect(
      human(out).filter((l) => l.includes('401')),
      out,
    ).toHaveLength(2);
    expect(
      out.split('\n').filter((l) => LOG_LINE.test(l) && l.includes('401')),
      out,
    ).toHaveLength(1);
    expect(child.stdout()).toMatch(
      new RegExp(
        `problem: departments: UPSTREAM_TOKEN was refused by the upstream service at ${sandbox.url.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: check it is the school's API token for that service \\(GET /departments failed with 401: .+\\)`,
      ),
    );
    expect(out).toMatch(/not attempted after that failure: year groups, .*, sessions\n/);
  });

  it('a config-file school names its field, and the variable an env: token reads', async () => {
    const file = path.join(dir, 'school.json');
    writeFileSync(
      file,
      JSON.stringify({
        dataDir: fresh(),
        publicUrl: 'https://calendars.hill.example',
        schools: [
          {
            id: 'hill',
            name: 'Hill School',
            timeZone: 'Australia/Sydney',
            upstream: { url: sandbox.url, token: 'env:HILL_API_TOKEN' },
          },
        ],
      }),
    );
    const child = rostercal(['sync'], { ROSTERCAL_CONFIG: file, HILL_API_TOKEN: 'wrong-token-5678' });
    expect(await child.exit, child.output()).toBe(1);
    expect(child.stdout()).toMatch(
      /problem: departments: HILL_API_TOKEN \(schools\[0\]\.upstream\.token\) was refused by the upstream service at \S+: check it is the school's API token/,
    );
    expect(child.output()).not.toMatch(STACK);
  });

  it('a path typo in UPSTREAM_URL (/v1 too many): one request, one line saying to check the path of UPSTREAM_URL', async () => {
    const before = sandbox.stats().total;
    const env = { ...schoolEnv(sandbox, { DATA_DIR: fresh() }), UPSTREAM_URL: `${sandbox.url}/v1` };
    const child = rostercal(['sync'], env);
    expect(await child.exit, child.output()).toBe(1);
    const out = child.output();
    expect(out).not.toMatch(STACK);
    // The first listing's 404 ends the pull: of the others only the one already downloading ahead is asked for.
    expect(sandbox.stats().total - before).toBeLessThanOrEqual(2);
    expect(
      human(out).filter((l) => l.includes('404')),
      out,
    ).toHaveLength(2);
    expect(child.stdout()).toMatch(
      /problem: departments: check the path of UPSTREAM_URL: \S+\/v1 has no such endpoint; it must be the API's base address, the part before \/sessions, e\.g\. https:\/\/api\.example\.com\/v1 \(GET \/departments failed with 404: no such endpoint: GET \/v1\/departments\)/,
    );
    const status = rostercal(['status'], env);
    expect(await status.exit).toBe(0);
    expect(status.output()).toMatch(/check the path of UPSTREAM_URL/);
  });
});

describe('time zones people write', () => {
  it.each([
    ['Australia/Sidney', /"Australia\/Sidney" is not a known time zone\. Did you mean Australia\/Sydney\?/],
    ['AEST', /"AEST" is not a known time zone\. Did you mean Australia\/Sydney or Australia\/Brisbane\?/],
    ['Sydney', /Did you mean Australia\/Sydney\?/],
    ['Europe/Lodnon', /"Europe\/Lodnon" is not a known time zone\. Did you mean Europe\/London\?/],
    [
      'EST',
      /"EST" is a fixed offset that ignores daylight saving, not a place's time zone\. Did you mean America\/New_York or America\/Toronto\?/,
    ],
  ])('SCHOOL_TZ=%s is refused with a suggestion (exit 2)', async (tz, expected) => {
    const child = rostercal(['status'], { ...schoolEnv(sandbox, { DATA_DIR: fresh() }), SCHOOL_TZ: tz });
    expect(await child.exit).toBe(2);
    expect(child.output()).toMatch(
      /^config: SCHOOL_TZ \(the school’s IANA time zone, e\.g\. Europe\/London\): /,
    );
    expect(child.output()).toMatch(expected);
  });

  it('a zone nothing resembles gets no guess', async () => {
    const child = rostercal(['status'], {
      ...schoolEnv(sandbox, { DATA_DIR: fresh() }),
      SCHOOL_TZ: 'Mars/Olympus_Mons',
    });
    expect(await child.exit).toBe(2);
    expect(child.output()).toMatch(/"Mars\/Olympus_Mons" is not a known time zone\.\n/);
  });
});

describe('serve with no configuration (a container whose ROSTERCAL_CONFIG is missing or misspelt)', () => {
  it('refuses to start the demo unless asked for with --demo, naming a misspelt variable', async () => {
    const child = rostercal(['serve', '--port', '0'], {
      DATA_DIR: fresh(),
      ROSTERCAL_CONFG: '/etc/rostercal/school.json',
    });
    expect(await child.exit, child.output()).toBe(2);
    const out = child.output();
    expect(out).toMatch(
      /^config: no configuration: neither ROSTERCAL_CONFIG \(a JSON file\) nor UPSTREAM_URL is set/,
    );
    expect(out).toContain('Set but not recognised: ROSTERCAL_CONFG (ROSTERCAL_CONFIG?).');
    expect(out).toContain('run `rostercal serve --demo`');
    expect(out).not.toMatch(/serving|sandbox|first pull/);
  });

  it('npm start asks for the demo', async () => {
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { scripts: { start: string } };
    expect(pkg.scripts.start).toMatch(/ serve --demo$/);
    const docker = await readFile('Dockerfile', 'utf8');
    expect(docker).toMatch(/^CMD \["serve"\]$/m);
  });
});

describe('the README', () => {
  it('lists every command of `rostercal --help` in its Commands table', async () => {
    const { readFile } = await import('node:fs/promises');
    const help = rostercal(['--help'], {});
    expect(await help.exit).toBe(0);
    const commands = [...help.stdout().matchAll(/^ {2}(\w+) {2,}/gm)].map((m) => m[1]!);
    expect(commands).toContain('sessions');
    const readme = await readFile('README.md', 'utf8');
    const table = readme.slice(readme.indexOf('## Commands'), readme.indexOf('## Feeds'));
    for (const c of commands) expect(table, c).toContain(`| \`rostercal ${c}`);
  });
});
