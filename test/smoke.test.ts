import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('cli', () => {
  it('prints usage listing every command', () => {
    const out = execFileSync(process.execPath, ['src/main.ts', '--help'], { encoding: 'utf8' });
    for (const c of ['serve', 'sync', 'sandbox', 'feeds', 'roster']) expect(out).toContain(c);
  });
});
