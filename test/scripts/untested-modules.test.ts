// npm run untested (scripts/untested-modules.ts): a module counts as tested when a test imports it or sits at its
// mirrored path (an import of types alone runs nothing of it, so does not count); type-only modules are not counted;
// allow-listed wiring is counted apart.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdsLogic, mirroredTest, untested, WIRING } from '../../scripts/untested-modules.ts';

let root: string;

async function put(rel: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
  await writeFile(path.join(root, rel), text);
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'rostercal-untested-'));
  const logic = 'export function f(): number { return 1; }\n';
  await put('src/a/imported.ts', logic);
  await put('src/a/mirrored.ts', logic);
  await put('src/a/alone.ts', logic);
  await put('src/a/types.ts', 'export interface T { a: number }\nexport type U = T | null;\n');
  await put('src/main.ts', logic);
  await put('test/x/some.test.ts', "import { f } from '../../src/a/imported.ts';\nf();\n");
  await put('test/a/mirrored.test.ts', '// runs it as a child process\n');
  // Imports of types alone run nothing of the module they name.
  await put('src/b/type-import.ts', `${logic}export interface T { a: number }\n`);
  await put('src/b/type-names.ts', `${logic}export type U = number;\n`);
  await put('src/b/type-reexport.ts', `${logic}export type V = string;\n`);
  await put('src/b/mixed.ts', `${logic}export type W = number;\n`);
  await put(
    'test/y/types.test.ts',
    [
      "import type { T } from '../../src/b/type-import.ts';",
      "import { type U } from '../../src/b/type-names.ts';",
      "export type { V } from '../../src/b/type-reexport.ts';",
      "import { f, type W } from '../../src/b/mixed.ts';",
      'const t: T | U | W = f();',
      '',
    ].join('\n'),
  );
}, 30_000);

afterAll(() => rm(root, { recursive: true, force: true }));

describe('which modules have no test where a newcomer looks', () => {
  it('counts modules with logic that no test imports nor mirrors, and wiring apart', () => {
    expect(untested(root)).toEqual({
      logic: ['src/a/alone.ts', 'src/b/type-import.ts', 'src/b/type-names.ts', 'src/b/type-reexport.ts'],
      wiring: ['src/main.ts'],
    });
  });

  it('maps a module to its mirrored test, and tells bodies from types', () => {
    expect(mirroredTest('src/families/absence-settle.ts')).toBe('test/families/absence-settle.test.ts');
    expect(holdsLogic('x.ts', 'export type A = () => void;\nexport interface B { f(): void }\n')).toBe(false);
    expect(holdsLogic('x.ts', 'export const f = () => 1;\n')).toBe(true);
  });

  it('gives every wiring module a reason, and names only modules that exist', () => {
    for (const [file, why] of WIRING) {
      expect(existsSync(file), file).toBe(true);
      expect(why.length, file).toBeGreaterThan(20);
    }
  });
});
