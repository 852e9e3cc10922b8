// Issue 29: the demo's OpenID provider (oidc-provider, identity/demo-idp.ts) and the sandbox (src/sandbox/) are the
// demo's and the tests' parts. `rostercal serve` for a real school, run for real with a module hook listing what it
// loads, must load neither; and `serve --demo` where oidc-provider is not installed (a production install, the
// Docker image's default target) stops at start-up saying what to do, not with Node's bare "Cannot find package".
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { freePort } from '../support/ports.ts';

const HOOK = join(import.meta.dirname, '../../bench/support/count-modules.js');

/** What the hook printed at exit, from every thread of the process (serve renders feeds on a worker thread). */
function loaded(stderr: string, prefix: string): string[] {
  const lines = stderr.split('\n').filter((l) => l.startsWith(prefix));
  expect(lines.length, stderr).toBeGreaterThan(0);
  return [...new Set(lines.flatMap((l) => l.slice(prefix.length).trim().split(' ').filter(Boolean)))];
}

describe('what production loads', () => {
  let sandbox: Sandbox;
  let dir: string;
  beforeAll(async () => {
    sandbox = await startWeekSandbox({ seed: 5, scale: 'small' });
    dir = mkdtempSync(join(tmpdir(), 'rostercal-production-loads-'));
  });
  afterAll(async () => {
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serve for a real school loads neither oidc-provider nor the sandbox', async () => {
    const child = rostercal(['serve'], {
      ...schoolEnv(sandbox, { DATA_DIR: join(dir, 'serve') }),
      PORT: String(await freePort()),
      NODE_OPTIONS: `--import=${HOOK}`,
    });
    try {
      await child.waitFor(/Stop with Ctrl-C/, 110_000);
    } finally {
      child.proc.kill('SIGTERM');
    }
    await child.ended;
    const packages = loaded(child.stderr(), 'packages loaded:');
    const sources = loaded(child.stderr(), 'sources loaded:');
    // The hook saw serve's own parts (so an empty list cannot pass for a clean one).
    expect(packages).toContain('express');
    expect(sources).toContain('running-service.ts');
    expect(packages).not.toContain('oidc-provider');
    expect(packages).not.toContain('koa');
    expect(sources.filter((s) => s.startsWith('sandbox/'))).toEqual([]);
    expect(sources).not.toContain('identity/demo-idp.ts');
  }, 150_000);

  it('serve --demo without oidc-provider installed says what to do', async () => {
    // A resolve hook answers for oidc-provider as Node does when the package is not installed.
    const blocker = join(dir, 'no-oidc-provider.js');
    writeFileSync(
      blocker,
      `import { registerHooks } from 'node:module';
registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === 'oidc-provider') {
      const err = new Error("Cannot find package 'oidc-provider' imported from " + context.parentURL);
      err.code = 'ERR_MODULE_NOT_FOUND';
      throw err;
    }
    return nextResolve(specifier, context);
  },
});
`,
    );
    const child = rostercal(['serve', '--demo'], {
      DATA_DIR: join(dir, 'demo'),
      PORT: String(await freePort()),
      NODE_OPTIONS: `--import=${blocker}`,
    });
    const code = await child.exit;
    expect(code, child.output()).toBe(1);
    const out = child.stderr();
    expect(out).toContain(
      'rostercal serve: start-up failed: the demo signs staff in through its own OpenID provider',
    );
    expect(out).toContain('run `npm install`');
    expect(out).toContain('docker build --target demo');
  }, 150_000);
});
