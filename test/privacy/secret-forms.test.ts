// Secret forms that once got through the masking, fed through the real error paths of the CLI: a provider's
// error text (stored in run history, printed by `sync` and `status`, logged) and a configuration file the JSON
// parser refuses (quoted in the error every command prints). Each form: a private key's body after -----BEGIN,
// a JSON "clientSecret" value, a Google refresh token (1//…) and a family link (/family/<token>).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import { runCli, writeSchoolConfig } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { googleTeamTarget } from '../support/live-google.ts';

const PEM_BODY = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7cHJvdmlkZXJrZXk';
const PEM_LINE2 = 'c2Vjb25kbGluZW9mdGhla2V5Ym9keQ';
const CLIENT_SECRET = 'Zq8Q~providerEchoedSecret.Xyz-987';
const REFRESH_TOKEN = '1//0eEchoedRefreshToken-AbCdEfGhIjKlMnOpQrStUv';
const FAMILY_TOKEN = 'Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56';
const LEAKS = [PEM_BODY, PEM_LINE2, CLIENT_SECRET, REFRESH_TOKEN.slice(3), FAMILY_TOKEN];

const cli = runCli;

function expectNoLeak(text: string): void {
  for (const leak of LEAKS) expect(text).not.toContain(leak);
}

describe('a provider error text holding every form', () => {
  let sandbox: Sandbox;
  let echo: Server;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    sandbox = await startWeekSandbox({ seed: 12, scale: 'small' });
    // A front end that quotes back what it was configured with, as misconfigured gateways do.
    echo = createServer((req, res) => {
      req.resume();
      const message = [
        'Invalid grant.',
        `key: -----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n${PEM_LINE2}\n-----END PRIVATE KEY-----`,
        `request: {"grant_type":"client_credentials","clientSecret":"${CLIENT_SECRET}"}`,
        `refresh_with: ${REFRESH_TOKEN}`,
        `referer: https://cal.example.org/family/${FAMILY_TOKEN}`,
      ].join('\n');
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 401, message, status: 'UNAUTHENTICATED' } }));
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    dir = mkdtempSync(join(tmpdir(), 'rostercal-secret-forms-'));
    const config = writeSchoolConfig(dir, sandbox.url, [
      googleTeamTarget(`http://127.0.0.1:${(echo.address() as AddressInfo).port}/`),
    ]);
    env = {
      PATH: process.env.PATH ?? '',
      ROSTERCAL_CONFIG: config,
      HILL_TOKEN: sandbox.token,
      GOOGLE_TOKEN: 'ya29.some-access-token-value',
      LOG_LEVEL: 'debug',
    };
  });
  afterAll(async () => {
    await new Promise((r) => echo?.close(r));
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is masked in what sync prints and logs, in the run history, and in status', async () => {
    const sync = await cli(['sync'], env);
    expect(sync.code, sync.out).toBe(1);
    expect(sync.out).toMatch(/Invalid grant/);
    expectNoLeak(sync.out);
    const store = await openStore({ dataDir: join(dir, 'data') });
    try {
      const runs = await store.runs.listRuns('hill');
      const push = runs.find((r) => r.kind === 'push');
      expect(push?.status).toBe('failed');
      expect(push!.errors.join('\n')).toMatch(/Invalid grant/);
      expectNoLeak(JSON.stringify(runs));
    } finally {
      await store.close();
    }
    for (const args of [['status'], ['status', '--json']]) {
      const status = await cli(args, env);
      expect(status.code).toBe(0);
      expect(status.out).toMatch(/Invalid grant/);
      expectNoLeak(status.out);
    }
  }, 120_000);
});

describe('a configuration file the JSON parser refuses', () => {
  it.each([
    [
      'an unquoted clientSecret',
      `{"schools": [{"targets": [{"outlook": {"clientSecret": ${CLIENT_SECRET}}}]}]}`,
    ],
    ['an unquoted refresh token', `{"schools": [], "refreshToken": ${REFRESH_TOKEN}}`],
    ['a key body after a stray character', `{"key": "-----BEGIN PRIVATE KEY-----", x${PEM_BODY}}`],
  ])('%s: the error names the file and the place, not the text', async (_what, text) => {
    const dir = mkdtempSync(join(tmpdir(), 'rostercal-secret-config-'));
    try {
      const file = join(dir, 'config.json');
      writeFileSync(file, text);
      const r = await cli(['feeds', 'list'], { PATH: process.env.PATH ?? '', ROSTERCAL_CONFIG: file });
      expect(r.code).toBe(2);
      expect(r.out).toContain(`config: ${file} is not valid JSON`);
      // The place of the mistake instead of the text around it.
      const [, column] = /line 1 column (\d+)/.exec(r.out) ?? [];
      expect(text[Number(column) - 1]).toMatch(/[Z/x]/);
      expectNoLeak(r.out);
      for (const leak of LEAKS) expect(r.out).not.toContain(leak.slice(0, 8));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
