// npm run check's size bounds (house rules): no function over 120 lines and no file over 800, lines counted as
// the file shows them — comments, blank lines and template literals included. Biome's noExcessiveLinesPerFunction
// skips comment and template-literal lines, so a function it passes could be far longer than 120 lines on screen.
// Run: node scripts/check-size.ts [dir…] (default src). Exits 1 naming each offender.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const MAX_FUNCTION_LINES = 120;
const MAX_FILE_LINES = 800;

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(p);
    else if (/\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) yield p;
  }
}

/** The name a reader would look for: the function's own, or the variable, property or class member it is. */
function nameOf(node: ts.Node, file: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name) return named.name.getText(file);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText(file);
  return '(anonymous)';
}

export function oversized(file: string, text: string): string[] {
  const out: string[] = [];
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > MAX_FILE_LINES) out.push(`${file}: ${lines} lines (at most ${MAX_FILE_LINES})`);
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const n = last - first + 1;
      const name = nameOf(node, source);
      if (n > MAX_FUNCTION_LINES)
        out.push(`${file}:${first + 1}: ${name} is ${n} lines (at most ${MAX_FUNCTION_LINES})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

if (import.meta.main) {
  const dirs = process.argv.slice(2);
  const problems = (dirs.length ? dirs : ['src']).flatMap((dir) =>
    [...sources(dir)].flatMap((f) => oversized(f, readFileSync(f, 'utf8'))),
  );
  for (const p of problems) console.error(p);
  if (problems.length) process.exit(1);
}
