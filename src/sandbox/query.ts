// Query-string parsing with the service's conventions: arrays as stringified JSON, booleans as true/false,
// timestamps as ISO 8601. Anything malformed is a 400 naming the parameter.
import { parseInstant } from './time.ts';

export class HttpError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

export const badRequest = (message: string) => new HttpError(400, message);

export class Query {
  private readonly params: URLSearchParams;
  constructor(params: URLSearchParams) {
    this.params = params;
  }

  has(name: string): boolean {
    const v = this.params.get(name);
    return v !== null && v !== '';
  }

  str(name: string): string | undefined {
    const v = this.params.get(name);
    return v === null || v === '' ? undefined : v;
  }

  bool(name: string): boolean | undefined {
    const v = this.str(name);
    if (v === undefined) return undefined;
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    throw badRequest(`${name} must be true or false, got ${JSON.stringify(v)}`);
  }

  int(name: string, min = Number.MIN_SAFE_INTEGER): number | undefined {
    const v = this.str(name);
    if (v === undefined) return undefined;
    if (!/^-?\d+$/.test(v.trim())) throw badRequest(`${name} must be an integer, got ${JSON.stringify(v)}`);
    const n = Number(v);
    if (n < min) throw badRequest(`${name} must be at least ${min}, got ${n}`);
    return n;
  }

  instant(name: string): number | undefined {
    const v = this.str(name);
    if (v === undefined) return undefined;
    const ms = parseInstant(v);
    if (ms === null) throw badRequest(`${name} must be an ISO 8601 timestamp, got ${JSON.stringify(v)}`);
    return ms;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const v = this.str(name);
    if (v === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(v)) {
      throw badRequest(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
    }
    return v as T;
  }

  private jsonArray(name: string): unknown[] | undefined {
    const v = this.str(name);
    if (v === undefined) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {
      throw badRequest(`${name} must be a stringified JSON array (e.g. [1,2]), got ${JSON.stringify(v)}`);
    }
    if (!Array.isArray(parsed)) {
      throw badRequest(`${name} must be a stringified JSON array (e.g. [1,2]), got ${JSON.stringify(v)}`);
    }
    return parsed;
  }

  numArray(name: string): number[] | undefined {
    const arr = this.jsonArray(name);
    if (arr === undefined) return undefined;
    return arr.map((x) => {
      if (typeof x === 'number' && Number.isInteger(x)) return x;
      if (typeof x === 'string' && /^\d+$/.test(x)) return Number(x);
      throw badRequest(`${name} must be an array of numbers, found ${JSON.stringify(x)}`);
    });
  }

  strArray(name: string): string[] | undefined {
    const arr = this.jsonArray(name);
    if (arr === undefined) return undefined;
    return arr.map((x) => {
      if (typeof x === 'string') return x;
      if (typeof x === 'number') return String(x);
      throw badRequest(`${name} must be an array of strings, found ${JSON.stringify(x)}`);
    });
  }

  enumArray<T extends string>(name: string, allowed: readonly T[]): T[] | undefined {
    const arr = this.strArray(name);
    if (arr === undefined) return undefined;
    for (const x of arr) {
      if (!(allowed as readonly string[]).includes(x)) {
        throw badRequest(`${name} items must be among ${allowed.join(', ')}, found ${JSON.stringify(x)}`);
      }
    }
    return arr as T[];
  }

  /** A range given by two parameters that must come together. */
  range(from: string, to: string): { start: number; end: number } | undefined {
    const start = this.instant(from);
    const end = this.instant(to);
    if (start === undefined && end === undefined) return undefined;
    if (start === undefined) throw badRequest(`${to} requires ${from}`);
    if (end === undefined) throw badRequest(`${from} requires ${to}`);
    if (end < start) throw badRequest(`${to} must not be before ${from}`);
    return { start, end };
  }

  updated(): { before?: number; after?: number } {
    return { before: this.instant('updatedBefore'), after: this.instant('updatedAfter') };
  }
}

export function keepUpdated(updatedAt: number, u: { before?: number; after?: number }): boolean {
  if (u.after !== undefined && !(updatedAt > u.after)) return false;
  if (u.before !== undefined && !(updatedAt < u.before)) return false;
  return true;
}

export interface PageSpec {
  page: number;
  /** What the caller asked for (echoed in the envelope). */
  requested: number;
  /** What is served per page: the request capped at the endpoint's maximum. */
  effective: number;
}

export function paging(q: Query, defaultLength: number, maxLength: number): PageSpec {
  const page = q.int('page', 1) ?? 1;
  const requested = q.int('pageLength', 1) ?? defaultLength;
  return { page, requested, effective: Math.min(requested, maxLength) };
}
