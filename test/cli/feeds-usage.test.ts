// `rostercal feeds` with words it cannot take (an outside tester, stop 54, LOW): the usage error came after the
// configuration's long PUBLIC_URL warning, the one line that matters below a paragraph about something else. A
// mistake in the command is said alone, exit 2, before the configuration is read.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRostercal } from '../support/cli.ts';

let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rostercal-feeds-usage-'));
  // A school by environment without PUBLIC_URL: the configuration warns about it when it is read.
  env = {
    UPSTREAM_URL: 'http://127.0.0.1:9/v1',
    UPSTREAM_TOKEN: 'feeds-usage-token',
    SCHOOL_TZ: 'UTC',
    SCHOOL_NAME: 'Usage College',
    DATA_DIR: dir,
  };
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('rostercal feeds, words it cannot take', () => {
  for (const [args, said] of [
    [['rotate'], 'rotate: need SCOPE'],
    [['rotate', 'team'], 'rotate: need SCOPE'],
    [['rotate', 'bogus', '1'], 'rotate: need SCOPE'],
    [['rotate', 'team', 'abc'], 'ID must be a whole number'],
    [['list', 'extra'], 'list: unexpected extra'],
    [['accept-store', 'x'], 'accept-store: unexpected x'],
  ] as const)
    it(`feeds ${args.join(' ')}: exit 2, the usage error first and alone`, async () => {
      const r = await runRostercal(['feeds', ...args], env);
      expect(r.code, r.stderr).toBe(2);
      const first = r.stderr.split('\n')[0]!;
      expect(first).toContain(said);
      expect(r.stderr).not.toContain('PUBLIC_URL is not set');
    });
});
