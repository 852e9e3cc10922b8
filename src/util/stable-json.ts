// Stable JSON: object keys sorted at every level, so equal content always gives equal text (and equal hashes)
// whatever order the producer built the object in. Used for the store's record hashes and push's content hashes.
import { hash } from 'node:crypto';

const quotedKeys = new Map<string, string>();

function quoteKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    // Record keys are a small fixed vocabulary; the bound only guards against pathological input.
    if (quotedKeys.size < 10_000) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/**
 * JSON.stringify's text with sorted keys. It runs over every record of every pull (10 MB of sessions at school
 * scale), so it takes the engine's own JSON.stringify, about 5× faster than building the text here, whenever
 * that writes the same text: plain objects whose keys are already in sorted order, at every level. The store's
 * records are built in that order (upstream/normalise.ts) and nearly always take it; anything else is written
 * key by key in sorted order below. Either way the text is the same, so a hash never depends on which path ran.
 */
export function stableStringify(value: unknown): string {
  if (typeof value === 'object' && value !== null && inSortedOrder(value, 0)) return JSON.stringify(value);
  return sortedStringify(value);
}

/** Deeper than any record: past it (or on a cycle) the sorted writer decides, as it always did. */
const MAX_DEPTH = 64;

/**
 * Whether JSON.stringify writes exactly sortedStringify's text for this value: only arrays and plain objects (a
 * boxed primitive or a class instance is written differently, a toJSON may return anything), keys in the order
 * sort() puts them (integer-like keys enumerate first, so `{"9":…,"10":…}` fails here and takes the slow path),
 * no bigint (JSON.stringify throws where the sorted writer writes null).
 */
function inSortedOrder(value: unknown, depth: number): boolean {
  if (typeof value !== 'object' || value === null) return typeof value !== 'bigint';
  if (depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!inSortedOrder(value[i], depth + 1)) return false;
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  const obj = value as Record<string, unknown>;
  if ('toJSON' in obj) return false;
  let previous: string | null = null;
  // for…in rather than Object.keys: no array per object. It lists inherited enumerable keys too (none on a plain
  // object unless Object.prototype was tampered with), which can only make this check fail, never pass wrongly.
  for (const key in obj) {
    if (previous !== null && !(previous < key)) return false;
    previous = key;
    if (!inSortedOrder(obj[key], depth + 1)) return false;
  }
  return true;
}

function sortedStringify(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      // undefined, functions and symbols: JSON writes null for them inside arrays; object members skip them below.
      return 'null';
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += sortedStringify(value[i]);
    }
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  if (typeof obj.toJSON === 'function') return stableStringify((obj.toJSON as () => unknown)());
  let out = '{';
  let first = true;
  for (const key of Object.keys(obj).sort()) {
    const v = obj[key];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    if (!first) out += ',';
    first = false;
    out += `${quoteKey(key)}:${sortedStringify(v)}`;
  }
  return `${out}}`;
}

/** SHA-256 of a text, in the encoding the caller stores. */
export function sha256(text: string, encoding: 'hex' | 'base64url'): string {
  // One-shot: no Hash object per record, which a pull hashing every record it writes notices.
  return hash('sha256', text, encoding);
}
