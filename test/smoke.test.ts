import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('cli', () => {
  it('prints usage listing every command', () => {
    const out = execFileSync(process.execPath, ['bin/rostercal.js', '--help'], { encoding: 'utf8' });
    for (const c of ['serve', 'sync', 'sandbox', 'feeds', 'roster']) expect(out).toContain(c);
  });

  it('runs as an executable, as npm installs it: its flags apply, and a warm start never loads the type stripper', () => {
    const cache = mkdtempSync(join(tmpdir(), 'rostercal-compile-cache-'));
    // Reports, at exit, the heap limit (set by the first line's flags) and whether Node loaded its TypeScript
    // stripper (amaro), which only a .ts file missing from the compile cache makes it do.
    const probe =
      "import v8 from 'node:v8'; process.on('exit', () => process.stderr.write('PROBE ' + JSON.stringify({" +
      ' limitMb: Math.round(v8.getHeapStatistics().heap_size_limit / 1048576),' +
      " stripper: process.moduleLoadList.some((m) => m.includes('amaro')) })));";
    const run = () => {
      const r = spawnSync('./bin/rostercal.js', ['sync', '--help'], {
        encoding: 'utf8',
        env: {
          ...process.env,
          // The first line's `env -S node …` finds this Node first on PATH.
          PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
          // Where enableCompileCache() keeps its cache (os.tmpdir()): empty at first. NODE_COMPILE_CACHE would
          // turn the cache on by itself and hide a launcher that forgot to.
          TMPDIR: cache,
          NODE_COMPILE_CACHE: undefined,
          NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(probe)}`,
        },
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain('rostercal sync');
      const line = /PROBE (.+)/.exec(r.stderr)?.[1];
      return JSON.parse(line ?? 'null') as { limitMb: number; stripper: boolean };
    };
    try {
      const cold = run();
      // 1,536 MB of old space plus the young generation and V8's own reserve.
      expect(cold.limitMb).toBeGreaterThanOrEqual(1536);
      expect(cold.limitMb).toBeLessThan(1700);
      expect(cold.stripper).toBe(true);
      expect(run().stripper).toBe(false);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
