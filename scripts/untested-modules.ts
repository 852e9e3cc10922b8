// The modules of src/ that hold logic (a function, method or class body) and that no test file (test/**/*.test.ts)
// imports directly, nor sits at their mirrored path (test/<folder>/<module>.test.ts, a CLI command run as a child
// process): where a newcomer looking for a module's tests finds none. A module reached only through another (a
// harness, a composition root) is listed: its behaviour may be covered, but not where anyone looks. Modules that
// only wire parts together (WIRING, each with its reason) are counted apart, so the first count is the one to bring
// down. Run: node scripts/untested-modules.ts [--count]. Prints one path a line (or only the counts), then both counts.
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

/**
 * Whether a declaration brings in types alone (`import type …`, `import { type A, type B }`, `export type … from`):
 * TypeScript erases it, so it runs nothing of the module it names.
 */
function typesOnly(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  const allTypes = (named: ts.NamedImportBindings | ts.NamedExportBindings | undefined) =>
    !!named &&
    (ts.isNamedImports(named) || ts.isNamedExports(named)) &&
    named.elements.length > 0 &&
    named.elements.every((e) => e.isTypeOnly);
  if (ts.isExportDeclaration(node)) return node.isTypeOnly || allTypes(node.exportClause);
  const clause = node.importClause; // none: `import './x.ts'`, which runs it
  return !!clause && (clause.isTypeOnly || (!clause.name && allTypes(clause.namedBindings)));
}

/**
 * The relative module specifiers a file imports, statically or dynamically (with `import()` of a literal), leaving
 * out imports of types alone.
 */
export function importsOf(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (!typesOnly(node)) out.push((node.moduleSpecifier as ts.StringLiteral).text);
    } else if (
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

/**
 * Modules with a body that decide nothing of their own: they pick or join parts, or are a thread's message loop
 * around one library call. Their parts have the tests; a module that grows a decision leaves this list.
 */
export const WIRING: ReadonlyMap<string, string> = new Map([
  ['src/main.ts', 'the command table: loads src/cli/<command>.ts (test/cli/command.test.ts runs it)'],
  ['src/push/providers.ts', "picks GoogleProvider or OutlookProvider by the target's provider"],
  ['src/push/google/index.ts', 'GoogleProvider: each method hands its call to one module of push/google/'],
  ['src/push/outlook/index.ts', 'OutlookProvider: each method hands its call to one module of push/outlook/'],
  ['src/sync/pull/types.ts', "the pull stages' types; its bodies are two key-name templates and a zero"],
  ['src/store/sqlite-checkpoint-worker.ts', "a worker thread's message loop around PRAGMA wal_checkpoint"],
  ['src/store/sqlite-integrity-worker.ts', "a worker thread's message loop around PRAGMA quick_check"],
]);

export interface Untested {
  /** Modules that hold logic and have no test where a newcomer looks. */
  logic: string[];
  /** Allow-listed wiring modules that no test imports (see WIRING). */
  wiring: string[];
}

/** test/<folder>/<module>.test.ts for src/<folder>/<module>.ts. */
export function mirroredTest(rel: string): string {
  return path.join('test', path.relative('src', rel)).replace(/\.ts$/, '.test.ts');
}

export function untested(root: string): Untested {
  const imported = new Set<string>();
  const tests = new Set<string>();
  for (const test of files(path.join(root, 'test'), /\.test\.ts$/)) {
    tests.add(path.relative(root, test));
    for (const spec of importsOf(test, readFileSync(test, 'utf8')))
      imported.add(path.relative(root, path.resolve(path.dirname(test), spec)));
  }
  const out: Untested = { logic: [], wiring: [] };
  for (const file of files(path.join(root, 'src'), /\.ts$/)) {
    const rel = path.relative(root, file);
    if (rel.startsWith(path.join('src', 'web', 'assets')) || rel.endsWith('.d.ts')) continue;
    if (imported.has(rel) || tests.has(mirroredTest(rel)) || !holdsLogic(rel, readFileSync(file, 'utf8')))
      continue;
    (WIRING.has(rel.split(path.sep).join('/')) ? out.wiring : out.logic).push(rel);
  }
  out.logic.sort();
  out.wiring.sort();
  return out;
}

/** The modules that hold logic (wiring apart) and have no test where a newcomer looks. */
export function untestedModules(root: string): string[] {
  return untested(root).logic;
}

if (import.meta.main) {
  const { logic, wiring } = untested(process.cwd());
  if (!process.argv.includes('--count')) for (const m of logic) console.log(m);
  console.log(
    `${logic.length} modules of src/ hold logic and have no test that imports them or sits at their path`,
  );
  console.log(
    `${wiring.length} more only wire parts together (WIRING in scripts/untested-modules.ts says why)`,
  );
}
