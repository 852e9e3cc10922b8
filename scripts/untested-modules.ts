// The modules of src/ that hold logic (a function, method or class body) and that no test file (test/**/*.test.ts)
// imports directly: where a newcomer looking for a module's tests finds none. A module reached only through another
// (a harness, the CLI as a child process) is listed: its behaviour may be covered, but not where anyone looks.
// Run: node scripts/untested-modules.ts [--count]. Prints one path a line (or only the count), then the count.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

function* files(dir: string, match: RegExp): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(p, match);
    else if (match.test(entry.name)) yield p;
  }
}

/** Whether a module has a body that runs: a function, method, accessor or class with members (types do not). */
export function holdsLogic(file: string, text: string): boolean {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  let found = false;
  const visit = (node: ts.Node) => {
    if (found) return;
    if (ts.isFunctionLike(node) && 'body' in node && node.body) found = true;
    else ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The relative module specifiers a file imports, statically or dynamically (with `import()` of a literal). */
export function importsOf(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier)
      out.push((node.moduleSpecifier as ts.StringLiteral).text);
    else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      out.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out.filter((s) => s.startsWith('.'));
}

export function untestedModules(root: string): string[] {
  const imported = new Set<string>();
  for (const test of files(path.join(root, 'test'), /\.test\.ts$/))
    for (const spec of importsOf(test, readFileSync(test, 'utf8')))
      imported.add(path.relative(root, path.resolve(path.dirname(test), spec)));
  const out: string[] = [];
  for (const file of files(path.join(root, 'src'), /\.ts$/)) {
    const rel = path.relative(root, file);
    if (rel.startsWith(path.join('src', 'web', 'assets')) || rel.endsWith('.d.ts')) continue;
    if (!imported.has(rel) && holdsLogic(rel, readFileSync(file, 'utf8'))) out.push(rel);
  }
  return out.sort();
}

if (import.meta.main) {
  const list = untestedModules(process.cwd());
  if (!process.argv.includes('--count')) for (const m of list) console.log(m);
  console.log(`${list.length} modules of src/ hold logic that no test file imports directly`);
}
