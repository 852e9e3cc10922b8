// `rostercal serve` as a child process for one school pulled from the sandbox over HTTP into a real SQLite store:
// it pulls, says so, serves on the port it names and stops on SIGTERM with 0; its banner never prints a feed URL,
// the upstream token or ADMIN_TOKEN (the terminal is a container's log). Without a configuration it refuses to
// start the demo unless asked (exit 2), and a bad --port is a usage error naming it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { expectNoSecrets, rostercal, runRostercal, schoolEnv, stopped } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { freePort } from '../support/ports.ts';

let sandbox: Sandbox;
let dir: string;

beforeAll(async () => {
  sandbox = await startWeekSandbox({ scale: 'small', seed: 16 });
  dir = mkdtempSync(join(tmpdir(), 'rostercal-serve-'));
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('rostercal serve', () => {
  it('pulls, serves on its port with a banner free of secrets, and stops with 0 on SIGTERM', async () => {
    const port = await freePort();
    const admin = 'admin-token-that-must-not-be-printed-0123';
    const child = rostercal(['serve', '--port', String(port)], {
      ...schoolEnv(sandbox, { DATA_DIR: dir }),
      ADMIN_TOKEN: admin,
    });
    try {
      await child.waitFor(/Stop with Ctrl-C\./, 120_000);
      const out = child.stdout();
      expect(out).toMatch(/^rostercal: hillcrest: last pull succeeded \(full, started .*, took [\d.]+ s\)$/m);
      expect(out).toContain(`rostercal is serving 1 school(s) on http://`);
      expect(out).toContain(
        'feeds:   URLs on https://calendars.hillcrest.example/admin or from `rostercal feeds list`',
      );
      expect(out).toContain('ADMIN_TOKEN works as a bearer token');
      expectNoSecrets(child.output(), sandbox.token);
      expect(child.output()).not.toContain(admin);
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
      child.proc.kill('SIGTERM');
      expect(await child.exit).toBe(0);
    } finally {
      await stopped(child);
    }
  }, 180_000);

  it('with no configuration refuses the demo unless --demo asks (exit 2); a bad --port names it', async () => {
    const bare = { DATA_DIR: join(dir, 'bare'), UPSTREAM_URL: '', UPSTREAM_TOKEN: '', ROSTERCAL_CONFIG: '' };
    const noDemo = await runRostercal(['serve', '--port', '0'], bare);
    expect(noDemo.code).toBe(2);
    expect(noDemo.stderr).toMatch(/--demo/);
    const port = await runRostercal(['serve', '--port', 'eighty'], bare);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port must be a whole number');
  });
});
