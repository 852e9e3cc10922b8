// Shared helpers for the sandbox tests: real HTTP with fetch against a started sandbox.
import type { Sandbox } from '../../src/sandbox/index.ts';

export type Json = Record<string, unknown>;

export interface Envelope<T = Json> {
  data: T[];
  pagination: { currentPage: number; lastPage: number; pageLength: number; numRecords: number };
  customFieldsMetadata?: Json;
}

export function qs(params: Record<string, unknown>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    u.set(k, Array.isArray(v) ? JSON.stringify(v) : String(v));
  }
  const s = u.toString();
  return s ? `?${s}` : '';
}

export async function call(
  sb: Sandbox,
  method: string,
  path: string,
  body?: unknown,
  token: string | null = sb.token,
): Promise<{ status: number; headers: Headers; json: Json; text: string }> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${sb.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: Json = {};
  if ((res.headers.get('content-type') ?? '').includes('json')) json = JSON.parse(text) as Json;
  return { status: res.status, headers: res.headers, json, text };
}

export async function get<T = Json>(
  sb: Sandbox,
  path: string,
  params: Record<string, unknown> = {},
): Promise<Envelope<T>> {
  const r = await call(sb, 'GET', `${path}${qs(params)}`);
  if (r.status !== 200) throw new Error(`GET ${path} → ${r.status}: ${r.text}`);
  return r.json as unknown as Envelope<T>;
}

/** Every record of a list, following lastPage. */
export async function all<T = Json>(
  sb: Sandbox,
  path: string,
  params: Record<string, unknown> = {},
): Promise<T[]> {
  const out: T[] = [];
  for (let page = 1; ; page++) {
    const env = await get<T>(sb, path, { ...params, page });
    out.push(...env.data);
    if (page >= env.pagination.lastPage) return out;
  }
}
