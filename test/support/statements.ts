// Counts the SQL statements a piece of work sends to the store, by shape, at the drivers themselves: every
// `query` of pg's Client (COPY, BEGIN and COMMIT included) and every statement node:sqlite runs (a prepared
// statement's run/all/iterate, and `exec`: BEGIN IMMEDIATE, COMMIT). The store runs unchanged; this only looks.
// One counter at a time per process (vitest runs each file in its own worker).
import { DatabaseSync, StatementSync } from 'node:sqlite';
import pg from 'pg';

export interface StatementCount {
  total: number;
  /** Statements by shape (see shapeOf), most frequent first. */
  shapes: [shape: string, count: number][];
}

/**
 * A statement's text reduced to its shape: whitespace collapsed, SQLite's multi-row `(?, ?), (?, ?)` lists and
 * PostgreSQL's `$n` numbers folded, cut to 110 characters, so that the same statement with other rows is one shape.
 */
export function shapeOf(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/\$\d+/g, '$')
    .replace(/\((\?(, )?)+\)(, \((\?(, )?)+\))+/g, '(?…)×n')
    .trim()
    .slice(0, 110);
}

function textOf(arg: unknown): string {
  if (typeof arg === 'string') return arg;
  // pg's query config objects and pg-copy-streams' streams carry their text.
  const text = (arg as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? text : '(statement without text)';
}

type Patched = { target: object; name: string; original: unknown };

/** Starts counting; `stop()` restores the drivers and returns what was counted. */
export function countStatements(): { stop(): StatementCount } {
  const seen = new Map<string, number>();
  const note = (text: string) => {
    const shape = shapeOf(text);
    seen.set(shape, (seen.get(shape) ?? 0) + 1);
  };
  const patched: Patched[] = [];
  const wrap = <T extends object>(
    target: T,
    name: string,
    textFrom: (self: unknown, args: unknown[]) => string,
  ) => {
    const original = (target as Record<string, unknown>)[name] as (...args: unknown[]) => unknown;
    patched.push({ target, name, original });
    (target as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
      note(textFrom(this, args));
      return original.apply(this, args);
    };
  };
  wrap(pg.Client.prototype, 'query', (_self, args) => textOf(args[0]));
  const sourceOf = (self: unknown) => (self as StatementSync).sourceSQL;
  for (const name of ['run', 'all', 'get', 'iterate']) wrap(StatementSync.prototype, name, sourceOf);
  wrap(DatabaseSync.prototype, 'exec', (_self, args) => String(args[0]));
  return {
    stop() {
      for (const p of patched.reverse()) (p.target as Record<string, unknown>)[p.name] = p.original;
      const shapes = [...seen].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
      return { total: shapes.reduce((n, [, c]) => n + c, 0), shapes };
    },
  };
}

/** The count as lines for a person: the total, then each shape with its count. */
export function describeCount(title: string, count: StatementCount): string {
  return [
    `${title}: ${count.total} statements`,
    ...count.shapes.map(([s, n]) => `  ${String(n).padStart(4)}  ${s}`),
  ].join('\n');
}
