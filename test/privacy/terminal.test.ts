// What reaches an operator's terminal (and so a container's logs): no capability URL outside the demo, and no
// line forged by control characters planted in upstream names.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import { rostercal, runRostercal } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';

const FORGED = 'Smith\r\nhill    team    9999  Forged team         https://evil.example/feeds/x.ics';
const BIDI = 'Jones\u202Esc.live\u202C';

let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;
let staffIds: number[];

beforeAll(async () => {
  // The CLI runs on the real clock: a school of this week's shape.
  sandbox = await startWeekSandbox({ seed: 4, scale: 'small' });
  dir = mkdtempSync(join(tmpdir(), 'rostercal-terminal-'));
  env = {
    DATA_DIR: join(dir, 'data'),
    PUBLIC_URL: 'https://cal.example.org',
    UPSTREAM_URL: sandbox.url,
    UPSTREAM_TOKEN: sandbox.token,
    SCHOOL_ID: 'hill',
    SCHOOL_NAME: 'Hillcrest College',
    SCHOOL_TZ: sandbox.school.timeZone,
    LOG_LEVEL: 'info',
    PORT: '0',
  };
  // Two staff members renamed upstream with a forged line and a right-to-left override.
  const client = createUpstreamClient({ baseUrl: sandbox.url, token: sandbox.token });
  const staff = sandbox.school.users.filter((u) => !u.frozen && u.activityIds?.length !== 0).slice(0, 2);
  staffIds = staff.map((u) => u.id);
  await client.updateUsers({
    users: [
      { id: staff[0]!.id, lastName: FORGED },
      { id: staff[1]!.id, lastName: BIDI },
    ],
  });
  const sync = await runRostercal(['sync'], env);
  expect(sync.code, sync.stderr).toBe(0);
  expect(sync.stdout).toMatch(/succeeded|done|pull/i);
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('terminal output', () => {
  it('`feeds list` prints one line per feed whatever upstream names hold', async () => {
    const json = JSON.parse((await runRostercal(['feeds', 'list', '--json'], env)).stdout) as FeedListing[];
    const { stdout } = await runRostercal(['feeds', 'list'], env);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point.
    expect(stdout).not.toMatch(/[\r\u202A-\u202E\u2066-\u2069\u0000-\u0008\u001b]/);
    expect(stdout.trimEnd().split('\n')).toHaveLength(json.length + 1);
    expect(stdout.split('\n').filter((l) => l.startsWith('hill    team    9999'))).toHaveLength(0);
    const renamed = json.filter((r) => r.scope === 'staff' && staffIds.includes(r.id));
    expect(renamed.length).toBeGreaterThan(0);
  });

  it('`serve` outside the demo prints no feed URL, and its lines carry no control characters', async () => {
    const child = rostercal(['serve'], env);
    try {
      await child.waitFor(/Stop with Ctrl-C/);
    } finally {
      child.proc.kill('SIGTERM');
    }
    await child.ended;
    const out = child.output();
    expect(out).toContain('rostercal is serving');
    expect(out).not.toMatch(/\/feeds\/[A-Za-z0-9_-]{8,}/);
    expect(out).toMatch(/feeds list/);
    expect(out).not.toMatch(/[\r\u202A-\u202E]/);
  });
});
