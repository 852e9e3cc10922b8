import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('rostercal sandbox', () => {
  it('--help prints usage with every option', async () => {
    const { stdout } = await run(process.execPath, ['bin/rostercal.js', 'sandbox', '--help']);
    for (const o of [
      '--port',
      '--seed',
      '--scale',
      '--token',
      '--readonly-token',
      '--now',
      '--rate-limit',
      '--burst',
      '--error-rate',
      '--latency-ms',
      '--malformed-rate',
    ]) {
      expect(stdout).toContain(o);
    }
  });

  it('rejects a bad option value with exit status 2 naming it', async () => {
    const err = await run(process.execPath, ['bin/rostercal.js', 'sandbox', '--scale', 'huge']).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 2, stderr: expect.stringContaining('--scale') });
  });

  it('serves until SIGTERM, then exits cleanly', async () => {
    const child = spawn(
      process.execPath,
      [
        'bin/rostercal.js',
        'sandbox',
        '--port',
        '0',
        '--seed',
        '3',
        '--now',
        '2026-03-02T01:00:00Z',
        '--token',
        'tok-1',
        '--rate-limit',
        '50/s',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      let out = '';
      child.stdout.setEncoding('utf8');
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: string) => {
          out += chunk;
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m && out.includes('stats:')) resolve(m[1]!);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
      });
      expect(out).toContain('tok-1');
      const res = await fetch(`${url}/departments`, { headers: { authorization: 'Bearer tok-1' } });
      expect(res.status).toBe(200);
      const refused = await fetch(`${url}/departments`, {
        headers: { authorization: 'Bearer sandbox-token' },
      });
      expect(refused.status).toBe(401);
      // Its Date is on its clock (--now, and the seconds since), as every time it gives: a sandbox set off from
      // the real time plays an upstream whose clock is off (Node would write the real time there).
      for (const answer of [res, refused, await fetch(`${url}/_sandbox/health`)]) {
        const date = Date.parse(answer.headers.get('date') ?? '');
        expect(date - Date.parse('2026-03-02T01:00:00Z')).toBeGreaterThanOrEqual(0);
        expect(date - Date.parse('2026-03-02T01:00:00Z')).toBeLessThan(60_000);
      }
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
