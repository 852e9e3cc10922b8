// Reading the Cookie header (Express has no parser built in; this is all the app needs).
export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    const name = part.slice(0, i).trim();
    const value = part.slice(i + 1).trim();
    if (out.has(name)) continue; // the first (most specific path) wins, as browsers order them
    try {
      out.set(name, decodeURIComponent(value));
    } catch {
      out.set(name, value);
    }
  }
  return out;
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
