// Staff access until real staff sign-in exists: the admin token (ADMIN_TOKEN), sent as a bearer token or typed
// into a small login form that sets a signed, secure, HTTP-only session cookie.
// The cookie carries no secret: it is `v1.<expiry>.<HMAC-SHA256(key, expiry)>` with a key derived from the admin
// token, so sessions survive restarts, work across replicas, and all end when the token is changed.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';

export interface AdminAuthOptions {
  /** The admin token. Empty or missing: every staff route answers 401 (there is no way in). */
  adminToken: string | null | undefined;
  /** Session length; default 12 hours. */
  sessionTtlMs?: number;
  /** Cookie name; default `rostercal_admin`. */
  cookieName?: string;
  /** Failed logins allowed per client address per 15 minutes; default 10. */
  maxFailedLogins?: number;
  now?: () => number;
}

export interface AdminAuth {
  /** True when the request carries a valid bearer token or session cookie. */
  isStaff(req: Request): boolean;
  /** Middleware: 401 (with nothing else) unless the request is staff. */
  requireStaff: RequestHandler;
  /** GET/POST /admin/login and POST /admin/logout. */
  router: express.Router;
}

const LOGIN_PATH = '/admin/login';

const LOGIN_STYLE = `body{font:16px/1.4 system-ui,sans-serif;display:grid;place-items:center;min-height:100vh;margin:0;background:#f4f5f7}
form{background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002;width:min(22rem,90vw)}
h1{font-size:1.25rem;margin:0 0 1rem}label{display:block;margin-bottom:.25rem}
input{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;margin-bottom:1rem}
button{padding:.5rem 1rem;font:inherit}.error{color:#a00;margin:0 0 1rem}`;
// The app's default CSP forbids forms and styles; the login page allows exactly its own style and posting to itself.
const LOGIN_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(LOGIN_STYLE).digest('base64')}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Constant-time comparison: both sides are hashed to equal-length digests first. */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    const name = part.slice(0, i).trim();
    const value = part.slice(i + 1).trim();
    try {
      out.set(name, decodeURIComponent(value));
    } catch {
      out.set(name, value);
    }
  }
  return out;
}

/** Only same-site absolute paths are followed after login (no `//host` or scheme). */
function safeNext(next: unknown): string {
  if (typeof next !== 'string' || !next.startsWith('/') || next.startsWith('//') || next.includes('\\'))
    return '/';
  return next;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function loginPage(next: string, message: string | null): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Staff sign-in · rostercal</title>
<style>${LOGIN_STYLE}</style></head><body>
<form method="post" action="${LOGIN_PATH}">
<h1>Staff sign-in</h1>
${message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : ''}
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<input type="hidden" name="next" value="${escapeHtml(next)}">
<button type="submit">Sign in</button>
</form></body></html>`;
}

export function createAdminAuth(opts: AdminAuthOptions): AdminAuth {
  const token = opts.adminToken?.trim() || null;
  const ttl = opts.sessionTtlMs ?? 12 * 60 * 60 * 1000;
  const cookieName = opts.cookieName ?? 'rostercal_admin';
  const maxFailed = opts.maxFailedLogins ?? 10;
  const now = opts.now ?? Date.now;
  const key = token ? createHmac('sha256', 'rostercal admin session v1').update(token).digest() : null;
  const failures = new Map<string, { count: number; since: number }>();

  const sign = (expiry: number) => createHmac('sha256', key!).update(String(expiry)).digest('base64url');

  function validCookie(value: string | undefined): boolean {
    if (!key || !value) return false;
    const m = /^v1\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(value);
    if (!m) return false;
    const expiry = Number(m[1]);
    if (expiry <= now()) return false;
    return timingSafeEqual(Buffer.from(m[2]!), Buffer.from(sign(expiry)));
  }

  function isStaff(req: Request): boolean {
    if (!token) return false;
    const auth = req.get('authorization');
    if (auth) {
      const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
      if (m && sameSecret(m[1]!.trim(), token)) return true;
    }
    return validCookie(parseCookies(req.get('cookie')).get(cookieName));
  }

  const requireStaff: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    if (isStaff(req)) {
      next();
      return;
    }
    // Nothing about the resource goes out: not whether it exists, not a byte of it.
    res.set('Cache-Control', 'no-store');
    res.set('WWW-Authenticate', 'Bearer realm="rostercal staff"');
    if (req.accepts(['text', 'html']) === 'html') {
      res
        .status(401)
        .type('html')
        .send(
          `<!doctype html><meta charset="utf-8"><title>Sign-in required</title><p>Staff only. <a href="${LOGIN_PATH}?next=${encodeURIComponent(req.originalUrl)}">Sign in</a>.</p>`,
        );
    } else {
      res.status(401).type('text').send('staff sign-in required\n');
    }
  };

  const router = express.Router();
  router.get(LOGIN_PATH, (req, res) => {
    res.set({ 'Cache-Control': 'no-store', 'Content-Security-Policy': LOGIN_CSP });
    res
      .type('html')
      .send(
        loginPage(
          safeNext(req.query.next),
          token ? null : 'Staff sign-in is disabled: ADMIN_TOKEN is not set.',
        ),
      );
  });
  router.post(LOGIN_PATH, express.urlencoded({ extended: false, limit: '4kb' }), (req, res) => {
    res.set({ 'Cache-Control': 'no-store', 'Content-Security-Policy': LOGIN_CSP });
    const body = (req.body ?? {}) as Record<string, unknown>;
    const next = safeNext(body.next);
    const client = req.ip ?? 'unknown';
    const f = failures.get(client);
    const windowMs = 15 * 60 * 1000;
    if (f && now() - f.since > windowMs) failures.delete(client);
    if ((failures.get(client)?.count ?? 0) >= maxFailed) {
      res.status(429).type('html').send(loginPage(next, 'Too many failed attempts. Try again later.'));
      return;
    }
    const given = typeof body.token === 'string' ? body.token.trim() : '';
    if (!token || !given || !sameSecret(given, token)) {
      const cur = failures.get(client) ?? { count: 0, since: now() };
      cur.count++;
      failures.set(client, cur);
      res
        .status(401)
        .type('html')
        .send(
          loginPage(
            next,
            token ? 'That token is not right.' : 'Staff sign-in is disabled: ADMIN_TOKEN is not set.',
          ),
        );
      return;
    }
    failures.delete(client);
    const expiry = now() + ttl;
    res.cookie(cookieName, `v1.${expiry}.${sign(expiry)}`, {
      httpOnly: true,
      secure: true,
      sameSite: 'lax',
      path: '/',
      maxAge: ttl,
    });
    res.redirect(303, next);
  });
  router.post('/admin/logout', (_req, res) => {
    res.clearCookie(cookieName, { httpOnly: true, secure: true, sameSite: 'lax', path: '/' });
    res.set('Cache-Control', 'no-store');
    res.redirect(303, LOGIN_PATH);
  });

  return { isStaff, requireStaff, router };
}
