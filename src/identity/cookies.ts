import { parseCookie } from 'cookie';
import type { Request } from 'express';

/** A cookie the request carries, decoded; the first of a name wins (the most specific path, as browsers order them). */
export function cookieOf(req: Pick<Request, 'headers'>, name: string): string | undefined {
  return parseCookie(req.headers.cookie ?? '')[name];
}

/** Only same-site absolute paths are followed after sign-in (no `//host`, no scheme, no backslash tricks). */
export function localPath(value: unknown, fallback = '/staff'): string {
  if (typeof value !== 'string' || value.length > 2000) return fallback;
  if (!value.startsWith('/') || value.startsWith('//') || /[\\\s]/.test(value)) return fallback;
  try {
    const u = new URL(value, 'http://x.invalid');
    if (u.host !== 'x.invalid') return fallback;
  } catch {
    return fallback;
  }
  return value;
}
