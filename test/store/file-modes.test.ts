// Files holding children's data and secrets are readable by the service alone: the SQLite database and its
// -wal/-shm, the feed secret and the rotation record are 0600 in a 0700 data directory — created so, and
// narrowed when an older install left them readable by others.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { startService } from '../../src/running-service.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { startWeekSandbox } from '../support/clock.ts';

const run = promisify(execFile);
const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);
let sandbox: Sandbox;
let root: string;
let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startWeekSandbox({ seed: 2, scale: 'small' });
  root = mkdtempSync(path.join(tmpdir(), 'rostercal-modes-'));
  chmodSync(root, 0o755);
  dataDir = path.join(root, 'data');
  env = {
    PATH: process.env.PATH ?? '',
    DATA_DIR: dataDir,
    UPSTREAM_URL: sandbox.url,
    UPSTREAM_TOKEN: sandbox.token,
    SCHOOL_TZ: sandbox.school.timeZone,
    SCHOOL_NAME: 'Hillcrest College',
    PUBLIC_URL: 'https://cal.example.org',
    LOG_LEVEL: 'silent',
  };
});
afterAll(async () => {
  await sandbox?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('files holding children’s data', () => {
  it('are created 0600 in a 0700 data directory by the running service (database, -wal, -shm, secret, rotations)', async () => {
    const service = await startService({ config: await loadConfig(env), port: 0, host: '127.0.0.1' });
    try {
      await service.initialPulls;
      expect(mode(dataDir)).toBe('700');
      for (const f of [
        'rostercal.sqlite',
        'rostercal.sqlite-wal',
        'rostercal.sqlite-shm',
        'feed-secret',
        'feed-rotations.jsonl',
      ])
        expect(mode(path.join(dataDir, f)), f).toBe('600');
    } finally {
      await service.close();
    }
  });

  it('are narrowed when an older install left them readable by others', async () => {
    chmodSync(dataDir, 0o755);
    for (const f of ['rostercal.sqlite', 'feed-secret', 'feed-rotations.jsonl'])
      chmodSync(path.join(dataDir, f), 0o644);
    const { stdout } = await run(process.execPath, ['bin/rostercal.js', 'feeds', 'list', '--json'], {
      env,
      encoding: 'utf8',
    });
    expect(JSON.parse(stdout).length).toBeGreaterThan(0);
    expect(mode(dataDir)).toBe('700');
    for (const f of ['rostercal.sqlite', 'feed-secret', 'feed-rotations.jsonl'])
      expect(mode(path.join(dataDir, f)), f).toBe('600');
  });
});
