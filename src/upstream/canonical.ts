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

const NEVER: Predicate = () => false;
const ALWAYS: Predicate = () => true;
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

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

function compile(schema: z.ZodType): Predicate {
  const explicit = declared.get(schema);
  if (explicit) return explicit;
  // zod 4 keeps a schema's definition on `_zod.def`; only the stable, documented parts of it are read here.
  const def = (schema as unknown as { _zod: { def: Def } })._zod.def;
  const checks = def.checks ?? [];
  switch (def.type) {
    case 'unknown':
    case 'any':
      return ALWAYS;
    case 'string':
      return checks.length === 0 ? (v) => typeof v === 'string' : NEVER;
    case 'boolean':
      return checks.length === 0 ? (v) => typeof v === 'boolean' : NEVER;
    case 'number':
      if (checks.length === 0) return (v) => typeof v === 'number' && Number.isFinite(v);
      if (checks.length === 1 && checks[0]?._zod.def.format === 'safeint') return Number.isSafeInteger;
      return NEVER;
    case 'enum': {
      const set = new Set<unknown>(Object.values(def.entries ?? {}));
      return (v) => set.has(v);
    }
    case 'literal': {
      const set = new Set<unknown>(def.values ?? []);
      return (v) => set.has(v);
    }
    case 'optional': {
      const inner = canonicalCheck(def.innerType!);
      return (v) => v === undefined || inner(v);
    }
    case 'nullable': {
      const inner = canonicalCheck(def.innerType!);
      return (v) => v === null || inner(v);
    }
    case 'union': {
      // A union answers with its first option that succeeds; when that option does not transform, its output is
      // its input. So the first option's canonical form is the union's.
      const first = def.options?.[0];
      return first ? canonicalCheck(first) : NEVER;
    }
    case 'array': {
      if (checks.length > 0) return NEVER;
      const element = canonicalCheck(def.element!);
      return (v) => {
        if (!Array.isArray(v)) return false;
        for (const item of v) if (!element(item)) return false;
        return true;
      };
    }
    case 'record': {
      const keyDef = (def.keyType as unknown as { _zod: { def: Def } })._zod.def;
      if (keyDef.type !== 'string' || (keyDef.checks?.length ?? 0) > 0) return NEVER;
      const value = canonicalCheck(def.valueType!);
      return (v) => {
        if (!isObject(v)) return false;
        for (const k in v) if (!value(v[k])) return false;
        return true;
      };
    }
    case 'object': {
      if (checks.length > 0) return NEVER;
      const fields = Object.entries(def.shape ?? {}).map(([k, s]) => [k, canonicalCheck(s)] as const);
      return (v) => {
        if (!isObject(v)) return false;
        for (const [k, check] of fields) if (!check(v[k])) return false;
        return true;
      };
    }
    default:
      return NEVER;
  }
}
