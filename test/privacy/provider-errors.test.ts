// A provider whose error text echoes the Authorization header (as Google and Microsoft front ends do): the
// token never reaches the run history, `rostercal sync`'s output or `rostercal status`.
import { mkdtempSync, rmSync } from 'node:fs';
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

const SECRET_PART = 'GOOGLE_ACCESS_TOKEN_k3yM4t3r1al9x';

const cli = runCli;

describe('provider error text that echoes credentials', () => {
  let sandbox: Sandbox;
  let echo: Server;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    sandbox = await startWeekSandbox({ seed: 9, scale: 'small' });
    // Every request is refused with the credentials it carried quoted back, in the message and in a field.
    echo = createServer((req, res) => {
      req.resume();
      const auth = req.headers.authorization ?? '';
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            code: 401,
            message: `Request had invalid authentication credentials. Authorization: ${auth}`,
            errors: [
              { reason: 'authError', message: `Invalid Credentials (${auth})`, access_token: auth.slice(7) },
            ],
            status: 'UNAUTHENTICATED',
          },
        }),
      );
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    dir = mkdtempSync(join(tmpdir(), 'rostercal-redact-'));
    const config = writeSchoolConfig(dir, sandbox.url, [
      googleTeamTarget(`http://127.0.0.1:${(echo.address() as AddressInfo).port}/`),
    ]);
    env = {
      PATH: process.env.PATH ?? '',
      ROSTERCAL_CONFIG: config,
      HILL_TOKEN: sandbox.token,
      GOOGLE_TOKEN: `ya29.${SECRET_PART}`,
      LOG_LEVEL: 'info',
    };
  });
  afterAll(async () => {
    await new Promise((r) => echo?.close(r));
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is redacted before it is stored, logged or shown', async () => {
    const sync = await cli(['sync'], env);
    expect(sync.code, sync.out).toBe(1);
    expect(sync.out).not.toContain(SECRET_PART);
    const store = await openStore({ dataDir: join(dir, 'data') });
    try {
      const runs = await store.runs.listRuns('hill');
      const push = runs.find((r) => r.kind === 'push');
      expect(push?.status).toBe('failed');
      expect(push!.errors.join('\n')).toMatch(/Authorization: Bearer \[redacted\]/);
      expect(JSON.stringify(runs)).not.toContain(SECRET_PART);
    } finally {
      await store.close();
    }
    for (const args of [['status'], ['status', '--json']]) {
      const status = await cli(args, env);
      expect(status.code).toBe(0);
      expect(status.out).not.toContain(SECRET_PART);
    }
  }, 180_000);
});
