// Issue 28: a command that needs little loads only what it uses. `rostercal status`, `sessions` and `feeds list`
// read the store and print: run for real, with a module hook counting what each loads, none of them may bring
// the logger, the PDF renderer, the web server or a push provider's client. (bench:start times them.)
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rostercal } from '../support/cli.ts';
import { type PulledSchool, schoolPulledByCli } from '../support/pulled-school.ts';

const HOOK = join(import.meta.dirname, '../../bench/support/count-modules.js');
/** What these commands never use: pino (logs), the PDF stack, the web server, push providers, PostgreSQL. */
const HEAVY = [
  'pino',
  'pdfkit',
  'fontkit',
  'express',
  '@googleapis/calendar',
  'google-auth-library',
  '@azure/identity',
  '@microsoft/microsoft-graph-client',
  'openid-client',
  'oidc-provider',
  'qrcode',
  'pg',
];

async function packagesLoaded(args: string[], env: Record<string, string>): Promise<string[]> {
  const child = rostercal(args, { ...env, NODE_OPTIONS: `--import=${HOOK}` });
  const code = await child.exit;
  expect(code, child.output()).toBe(0);
  const line = child
    .stderr()
    .split('\n')
    .find((l) => l.startsWith('packages loaded:'));
  expect(line, child.stderr()).toBeDefined();
  return line!.slice('packages loaded:'.length).trim().split(' ').filter(Boolean);
}

describe('little commands load only what they use', () => {
  let school: PulledSchool;
  let env: Record<string, string>;

  beforeAll(async () => {
    school = await schoolPulledByCli({ seed: 5, dirPrefix: 'rostercal-light-' });
    env = school.env;
  }, 120_000);
  afterAll(async () => {
    await school?.close();
  });

  it('status, sessions and feeds list: none of the heavy packages', async () => {
    const team = school.sandbox.school.teams.find((t) => !t.hidden)!;
    for (const args of [['status'], ['sessions', '--team', String(team.id)], ['feeds', 'list']]) {
      const loaded = await packagesLoaded(args, env);
      // The store's query builder and the configuration's validator are what these commands do use.
      expect(loaded, args.join(' ')).toContain('kysely');
      expect(
        loaded.filter((p) => HEAVY.includes(p)),
        args.join(' '),
      ).toEqual([]);
    }
  }, 120_000);
});
