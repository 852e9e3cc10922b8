// npm run sizes (scripts/check-size.ts): lines are counted as a reader sees them, comments and template literals
// included, which biome's own rule skips.
import { describe, expect, it } from 'vitest';
import { oversized } from '../../scripts/check-size.ts';

const fn = (inner: string[]) => ['export function f(): string {', ...inner, '}', ''].join('\n');

describe('the size check', () => {
  it('counts comment lines: 120 lines pass, 121 do not', () => {
    expect(oversized('x.ts', fn(Array(117).fill('  // why')))).toEqual([]);
    expect(oversized('x.ts', fn([...Array(118).fill('  // why'), '  return "";']))).toEqual([
      'x.ts:1: f is 121 lines (at most 120)',
    ]);
  });

  it('counts the lines of a template literal, in an arrow function named by its variable', () => {
    const text = ['const page = () => `', ...Array(120).fill('  <p>line</p>'), '`;', ''].join('\n');
    expect(oversized('x.ts', text)).toEqual(['x.ts:1: page is 122 lines (at most 120)']);
  });

  it('bounds a file at 800 lines', () => {
    expect(oversized('x.ts', `${Array(800).fill('// a').join('\n')}\n`)).toEqual([]);
    expect(oversized('x.ts', `${Array(801).fill('// a').join('\n')}\n`)).toEqual([
      'x.ts: 801 lines (at most 800)',
    ]);
  });
});
