// A fast path for well-formed records. zod costs a few microseconds per object, which across 6,000 sessions with
// their teams, students and staff is more than the JSON parse itself. Most records arrive exactly in the form the
// schema would produce (numbers as numbers, canonical instants, lower-case statuses…): for those, parsing is the
// identity on every field rostercal reads. This module derives, from the zod schema itself, a predicate that
// recognises such input; a record that passes it is normalised directly, any other goes through zod, which does
// the coercing and writes the error reports. The schema stays the one source of truth: nothing here restates a
// field. Invariant (tested over the fixtures and the whole sandbox school): if `canonicalCheck(s)(x)` then
// normalising `x` gives the same result as normalising `s.parse(x)`.
import type { z } from 'zod';

export type Predicate = (value: unknown) => boolean;

const declared = new WeakMap<object, Predicate>();
const compiled = new WeakMap<object, Predicate>();

/** For a schema that transforms: which inputs it leaves unchanged (its output form). */
export function withCanonical<S extends z.ZodType>(schema: S, isCanonical: Predicate): S {
  declared.set(schema, isCanonical);
  return schema;
}

interface Def {
  type: string;
  checks?: { _zod: { def: { format?: string } } }[];
  shape?: Record<string, z.ZodType>;
  options?: z.ZodType[];
  innerType?: z.ZodType;
  element?: z.ZodType;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  entries?: Record<string, string | number>;
  values?: unknown[];
}

/** The predicate "already in output form" for a schema (cached). Unknown constructs never match: zod decides. */
export function canonicalCheck(schema: z.ZodType): Predicate {
  let p = compiled.get(schema);
  if (!p) {
    p = compile(schema);
    compiled.set(schema, p);
  }
  return p;
}

/**
 * Compiles the schema's checks into one straight-line function (as zod itself does for objects): a record of
 * 6,000 sessions with their students is checked in a few milliseconds, where a tree of closures took several
 * times longer. Only field names from the schema and generated variable names enter the source.
 */
function compile(schema: z.ZodType): Predicate {
  const explicit: Predicate[] = [];
  let n = 0;
  const fresh = () => `v${n++}`;

  const gen = (s: z.ZodType, e: string): string => {
    const declaredCheck = declared.get(s);
    if (declaredCheck) {
      explicit.push(declaredCheck);
      return `if (!p[${explicit.length - 1}](${e})) return false;\n`;
    }
    // zod 4 keeps a schema's definition on `_zod.def`; only its stable, documented parts are read here.
    const def = (s as unknown as { _zod: { def: Def } })._zod.def;
    const checks = def.checks ?? [];
    switch (def.type) {
      case 'unknown':
      case 'any':
        return '';
      case 'string':
        return checks.length === 0 ? `if (typeof ${e} !== 'string') return false;\n` : 'return false;\n';
      case 'boolean':
        return checks.length === 0 ? `if (typeof ${e} !== 'boolean') return false;\n` : 'return false;\n';
      case 'number':
        if (checks.length === 0)
          return `if (typeof ${e} !== 'number' || !Number.isFinite(${e})) return false;\n`;
        if (checks.length === 1 && checks[0]?._zod.def.format === 'safeint') {
          return `if (!Number.isSafeInteger(${e})) return false;\n`;
        }
        return 'return false;\n';
      case 'enum':
      case 'literal': {
        const values = def.type === 'enum' ? Object.values(def.entries ?? {}) : (def.values ?? []);
        const set = new Set<unknown>(values);
        explicit.push((v) => set.has(v));
        return `if (!p[${explicit.length - 1}](${e})) return false;\n`;
      }
      case 'optional':
        return `if (${e} !== undefined) {\n${gen(def.innerType!, e)}}\n`;
      case 'nullable':
        return `if (${e} !== null) {\n${gen(def.innerType!, e)}}\n`;
      case 'union': {
        // A union answers with its first option that succeeds; when that option does not transform, its output
        // is its input. So the first option's canonical form is the union's.
        const first = def.options?.[0];
        return first ? gen(first, e) : 'return false;\n';
      }
      case 'array': {
        if (checks.length > 0) return 'return false;\n';
        const item = fresh();
        return `if (!Array.isArray(${e})) return false;\nfor (const ${item} of ${e}) {\n${gen(def.element!, item)}}\n`;
      }
      case 'record': {
        const keyDef = (def.keyType as unknown as { _zod: { def: Def } })._zod.def;
        if (keyDef.type !== 'string' || (keyDef.checks?.length ?? 0) > 0) return 'return false;\n';
        const k = fresh();
        const v = fresh();
        return (
          `if (typeof ${e} !== 'object' || ${e} === null || Array.isArray(${e})) return false;\n` +
          `for (const ${k} in ${e}) {\nconst ${v} = ${e}[${k}];\n${gen(def.valueType!, v)}}\n`
        );
      }
      case 'object': {
        if (checks.length > 0) return 'return false;\n';
        let code = `if (typeof ${e} !== 'object' || ${e} === null || Array.isArray(${e})) return false;\n`;
        for (const [key, field] of Object.entries(def.shape ?? {})) {
          const v = fresh();
          code += `const ${v} = ${e}[${JSON.stringify(key)}];\n${gen(field, v)}`;
        }
        return `{\n${code}}\n`;
      }
      default:
        return 'return false;\n';
    }
  };

  const body = `${gen(schema, 'input')}return true;`;
  // Generated from the schema's own structure, never from data: the same technique zod uses for its fast path.
  const fn = new Function('p', 'input', body) as (p: Predicate[], input: unknown) => boolean;
  return (value) => fn(explicit, value);
}
