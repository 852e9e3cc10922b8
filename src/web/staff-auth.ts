// Staff access for the web: who is asking (a signed-in person, or the ADMIN_TOKEN bearer), the sign-in routes
// (OpenID Connect: /auth/login → the school's identity provider → /auth/callback; POST /auth/logout), the
// break-glass admin-token form (/admin/login), CSRF checks for state-changing forms, and audit records.
// Failures are throttled per client address, never per account.
import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { localPath, parseCookies } from '../identity/cookies.ts';
import type { StaffDirectory, StaffMembership } from '../identity/directory.ts';
import { type LoginTransaction, type OidcRelyingParty, SignInError } from '../identity/oidc.ts';
import type { StaffAccess } from '../identity/roles.ts';
import type { CurrentSession, StaffSessions } from '../identity/sessions.ts';
import { FailureThrottle } from '../identity/throttle.ts';
import type { AuditRecord, SchoolId, Store } from '../store/types.ts';
import { escapeHtml, sendPage, sendProblem } from './staff-html.ts';

export const ADMIN_TOKEN_ACTOR = 'admin token';
/** The issuer recorded for sessions opened with the admin token through the break-glass form. */
const ADMIN_TOKEN_ISSUER = 'rostercal:admin-token';
const LOGIN_COOKIE = 'rostercal_login';
const LOGIN_TTL_MS = 10 * 60_000;

export type Principal =
  | {
      kind: 'person';
      email: string;
      displayName: string | null;
      session: CurrentSession;
      memberships: StaffMembership[];
    }
  | { kind: 'admin-token'; session: CurrentSession | null };

export interface StaffAuthOptions {
  store: Store;
  sessions: StaffSessions;
  directory: StaffDirectory;
  /** null: no identity provider configured (only the admin token gets in). */
  oidc: OidcRelyingParty | null;
  adminToken: string | null;
  publicUrl: string;
  throttle?: FailureThrottle;
  /** Shown on refusal pages: whom to ask (e.g. "the IT office, it@school.org"). */
  helpContact?: string | null;
  /** Minutes between pulls, for "a change reaches rostercal within …". */
  pullEveryMinutes?: number;
  onError?: (err: unknown) => void;
}

export interface StaffAuth {
  /** Sets res.locals.principal; answers 401/429 itself for a wrong or throttled bearer token. */
  identify: RequestHandler;
  /** Signed-in staff or the admin token; otherwise sign-in (browsers) or 401. */
  requireStaff: RequestHandler;
  /** Admins of at least one school, or the admin token; signed-in others get 403. */
  requireAdmin: RequestHandler;
  /** /auth/login, /auth/callback, /auth/logout, /admin/login. */
  router: express.Router;
  /** For state-changing forms: the CSRF token matches the session and the Origin (if sent) is ours. */
  checkCsrf(req: Request, res: Response): boolean;
  audit(req: Request, res: Response, record: AuditInput): Promise<void>;
  throttle: FailureThrottle;
}

export type AuditInput = Partial<
  Omit<AuditRecord, 'id' | 'at' | 'actor' | 'clientAddress' | 'staffSession'>
> &
  Pick<AuditRecord, 'action'>;

export function principalOf(res: Response): Principal | null {
  return (res.locals.principal as Principal | undefined) ?? null;
}

export function actorOf(p: Principal): string {
  return p.kind === 'admin-token' ? ADMIN_TOKEN_ACTOR : p.email;
}

/** What the principal may do in one school: 'all' (admin, admin token), an access, or null (not staff there). */
export function accessIn(p: Principal, schoolId: SchoolId): StaffAccess | 'all' | null {
  if (p.kind === 'admin-token') return 'all';
  const m = p.memberships.find((x) => x.school.id === schoolId);
  if (!m) return null;
  return m.access.role === 'admin' ? 'all' : m.access;
}

export function isAdminSomewhere(p: Principal): boolean {
  return p.kind === 'admin-token' || p.memberships.some((m) => m.access.role === 'admin');
}

export function csrfOf(p: Principal): string | null {
  return p.session?.csrf ?? null;
}

/**
 * What a session opened with the admin token keeps of it (as its subject): a hash, so that the session ends on any
 * server whose ADMIN_TOKEN is not that token any more (changed, or gone), and the store holds nothing that opens.
 */
function adminTokenMark(token: string): string {
  return `admin-token:${createHash('sha256').update(`rostercal admin token session v1\0${token}`, 'utf8').digest('hex')}`;
}

/** Error codes of OAuth 2.0 (RFC 6749 4.1.2.1) and OpenID Connect (Core 3.1.2.6): the only provider text shown. */
const PROVIDER_ERRORS = new Set([
  'access_denied',
  'invalid_request',
  'unauthorized_client',
  'unsupported_response_type',
  'invalid_scope',
  'server_error',
  'temporarily_unavailable',
  'interaction_required',
  'login_required',
  'account_selection_required',
  'consent_required',
  'invalid_request_uri',
  'invalid_request_object',
  'request_not_supported',
  'request_uri_not_supported',
  'registration_not_supported',
]);

function sameSecret(given: string, expected: string): boolean {
  const d = (t: string) => createHash('sha256').update(t, 'utf8').digest();
  return timingSafeEqual(d(given), d(expected));
}

function clientOf(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

function encodeTx(tx: LoginTransaction): string {
  return Buffer.from(JSON.stringify(tx)).toString('base64url');
}
function decodeTx(value: string | undefined): LoginTransaction | null {
  if (!value || value.length > 2000) return null;
  try {
    const tx = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as LoginTransaction;
    if (typeof tx.state !== 'string' || typeof tx.verifier !== 'string' || typeof tx.nonce !== 'string')
      return null;
    return { ...tx, returnTo: localPath(tx.returnTo) };
  } catch {
    return null;
  }
}

export function createStaffAuth(opts: StaffAuthOptions): StaffAuth {
  const { store, sessions, directory, oidc } = opts;
  const adminToken = opts.adminToken || null;
  const throttle = opts.throttle ?? new FailureThrottle();
  const publicUrl = new URL(opts.publicUrl);
  const secure = publicUrl.protocol === 'https:';
  const askLine = opts.helpContact
    ? `Ask ${opts.helpContact}.`
    : 'Ask the school’s rostercal administrator (the school office knows who that is).';
  const pullNote = `A change made there reaches rostercal at the next pull (within about ${opts.pullEveryMinutes ?? 10} minutes).`;

  async function audit(req: Request, res: Response, rec: AuditInput): Promise<void> {
    const p = principalOf(res);
    await store.access.appendAudit({
      at: new Date().toISOString(),
      action: rec.action,
      actor: p ? actorOf(p) : (rec.detail ?? 'unknown'),
      schoolId: rec.schoolId ?? null,
      teamId: rec.teamId ?? null,
      sessionId: rec.sessionId ?? null,
      template: rec.template ?? null,
      clientAddress: clientOf(req),
      staffSession: p?.session ? p.session.hash.slice(0, 12) : null,
      detail: rec.detail ?? null,
    });
  }

  function tooMany(res: Response, retryAfter: number, html: boolean): void {
    res.set({ 'Retry-After': String(retryAfter), 'Cache-Control': 'no-store' });
    if (html)
      sendProblem(res, 429, 'Too many failed attempts', [
        `Too many failed sign-in attempts came from your network address. Try again in ${retryAfter} seconds.`,
        'This only affects this address: signing in from another network works as usual.',
      ]);
    else res.status(429).type('text').send('too many failed attempts from this address; try again later\n');
  }

  const identify: RequestHandler = async (req, res, next) => {
    try {
      const header = req.get('authorization');
      if (header !== undefined) {
        const client = clientOf(req);
        const wait = throttle.retryAfter(client);
        if (wait > 0) return tooMany(res, wait, false);
        const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
        if (adminToken && m && sameSecret(m[1]!, adminToken)) {
          res.locals.principal = { kind: 'admin-token', session: null } satisfies Principal;
          return next();
        }
        throttle.fail(client);
        res.set({ 'Cache-Control': 'no-store', 'WWW-Authenticate': 'Bearer realm="rostercal staff"' });
        res.status(401).type('text').send('wrong or unknown bearer token\n');
        return;
      }
      const current = await sessions.current(req);
      if (current) {
        if (current.session.issuer === ADMIN_TOKEN_ISSUER) {
          // Opened with a token this server no longer has (changed, or gone): it opens nothing.
          if (adminToken && current.session.subject === adminTokenMark(adminToken))
            res.locals.principal = { kind: 'admin-token', session: current } satisfies Principal;
        } else {
          const found = await directory.lookup(current.session.email);
          // Frozen or removed upstream since sign-in: the session no longer opens anything.
          if (found.memberships.length)
            res.locals.principal = {
              kind: 'person',
              email: current.session.email,
              displayName: current.session.displayName,
              session: current,
              memberships: found.memberships,
            } satisfies Principal;
        }
      }
      next();
    } catch (err) {
      next(err);
    }
  };

  function wantsHtml(req: Request): boolean {
    return req.method === 'GET' && req.accepts(['text', 'html', 'json']) === 'html';
  }

  const requireStaff: RequestHandler = (req, res, next) => {
    if (principalOf(res)) return next();
    res.set('Cache-Control', 'no-store');
    if (wantsHtml(req)) {
      res.redirect(303, `/auth/login?returnTo=${encodeURIComponent(localPath(req.originalUrl))}`);
      return;
    }
    res.set('WWW-Authenticate', 'Bearer realm="rostercal staff"');
    res.status(401).type('text').send('staff sign-in required\n');
  };

  const requireAdmin: RequestHandler = (req, res, next) => {
    const p = principalOf(res);
    if (!p) return requireStaff(req, res, next);
    if (isAdminSomewhere(p)) return next();
    sendProblem(
      res,
      403,
      'For administrators only',
      [
        'This page is for the school’s rostercal administrators. Your teams are on “My teams”.',
        `Administrators are the staff marked as admins in the school’s extracurricular system. ${askLine}`,
      ],
      { href: '/staff', label: 'My teams' },
    );
  };

  function checkCsrf(req: Request, res: Response): boolean {
    const p = principalOf(res);
    const origin = req.get('origin');
    const own = `${req.protocol}://${req.get('host')}`;
    // Browsers send `Origin: null` for forms on our own pages (Referrer-Policy: no-referrer): no evidence either
    // way, so the session's CSRF token below decides.
    if (origin && origin !== 'null' && origin !== publicUrl.origin && origin !== own) return false;
    const given = (req.body as Record<string, unknown> | undefined)?.csrf;
    if (!p) return false;
    // The admin-token bearer is not a browser: no cookie, no CSRF.
    if (p.kind === 'admin-token' && !p.session) return true;
    const expected = csrfOf(p);
    return typeof given === 'string' && expected !== null && sameSecret(given, expected);
  }

  /** The browser must use the address the identity provider sends it back to, or the cookies go missing. */
  function wrongOrigin(req: Request, res: Response, returnTo: string): boolean {
    const own = `${req.protocol}://${req.get('host')}`;
    if (own === publicUrl.origin) return false;
    const there = `${publicUrl.origin}/auth/login?returnTo=${encodeURIComponent(returnTo)}`;
    sendProblem(
      res,
      400,
      'Sign in at the school’s address for rostercal',
      [
        `You opened rostercal at ${own}, but it is set up to be used at ${publicUrl.origin} (PUBLIC_URL). The school’s sign-in service sends you back to ${publicUrl.origin}/auth/callback, so sign-in only works from there.`,
        `If ${publicUrl.origin} is wrong for your network, the administrator sets PUBLIC_URL (and registers ${publicUrl.origin}/auth/callback with the sign-in service).`,
      ],
      { href: there, label: `Continue at ${publicUrl.host}` },
    );
    return true;
  }

  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '4kb' });

  router.get('/auth/login', async (req, res, next) => {
    try {
      const returnTo = localPath(req.query.returnTo);
      if (principalOf(res) && req.query.prompt !== 'select_account') return res.redirect(303, returnTo);
      if (wrongOrigin(req, res, returnTo)) return;
      const wait = throttle.retryAfter(clientOf(req));
      if (wait > 0) return tooMany(res, wait, true);
      if (!oidc) {
        sendProblem(res, 503, 'Staff sign-in is not set up', [
          'No identity provider is configured for rostercal (auth.oidc in the configuration file, or OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET).',
          adminToken
            ? 'Until it is, administrators can use the admin token at /admin/login.'
            : 'Tell the school’s IT team.',
        ]);
        return;
      }
      const { url, tx } = await oidc.begin(returnTo);
      res.cookie(LOGIN_COOKIE, encodeTx(tx), {
        httpOnly: true,
        secure,
        sameSite: 'lax',
        path: '/auth',
        maxAge: LOGIN_TTL_MS,
      });
      res.set('Cache-Control', 'no-store');
      res.redirect(303, url.href);
    } catch (err) {
      if (err instanceof SignInError) return sendProblem(res, 503, 'Sign-in is not available', [err.message]);
      next(err);
    }
  });

  router.get('/auth/callback', async (req, res, next) => {
    const client = clientOf(req);
    try {
      const wait = throttle.retryAfter(client);
      if (wait > 0) return tooMany(res, wait, true);
      if (!oidc) return res.redirect(303, '/auth/login');
      const tx = decodeTx(parseCookies(req.get('cookie')).get(LOGIN_COOKIE));
      res.clearCookie(LOGIN_COOKIE, { httpOnly: true, secure, sameSite: 'lax', path: '/auth' });
      if (req.query.error !== undefined) {
        // Anyone can send a browser here with any text: only a known error code is shown, never a description.
        const code =
          typeof req.query.error === 'string' && PROVIDER_ERRORS.has(req.query.error)
            ? req.query.error
            : null;
        return sendProblem(
          res,
          401,
          'Sign-in was not completed',
          [
            `The school’s sign-in service did not sign you in${code ? ` (it answered ${code})` : ''}. Try again; if it keeps happening, ${askLine.charAt(0).toLowerCase()}${askLine.slice(1)}`,
          ],
          { href: '/auth/login', label: 'Try again' },
        );
      }
      if (!tx || Date.now() - tx.at > LOGIN_TTL_MS) {
        throttle.fail(client);
        return sendProblem(
          res,
          400,
          'Sign-in could not be completed',
          [
            'Your browser came back from the sign-in service without the short-lived cookie rostercal set when sign-in started. Usually one of these:',
            `• sign-in was started at another address than ${publicUrl.origin} (bookmarks or links to another host name or to http instead of https);`,
            `• the browser blocks cookies for ${publicUrl.host}${secure ? '' : ' (or this address is plain http and the browser refuses cookies there)'};`,
            '• more than 10 minutes passed since you started signing in.',
          ],
          { href: `${publicUrl.origin}/auth/login`, label: 'Start again' },
        );
      }
      const current = new URL(req.originalUrl, publicUrl.origin);
      const who = await oidc.finish(current, tx);
      const found = await directory.lookup(who.email);
      if (!found.memberships.length) {
        throttle.fail(client);
        await store.access.appendAudit({
          at: new Date().toISOString(),
          action: 'sign-in-refused',
          actor: who.email,
          schoolId: null,
          teamId: null,
          sessionId: null,
          template: null,
          clientAddress: client,
          staffSession: null,
          detail: found.refusal,
        });
        const schools = directory.schools.map((s) => s.name).join(', ');
        const paragraphs =
          found.refusal === 'frozen'
            ? [
                `Your staff account ${who.email} is deactivated (frozen) in the school’s extracurricular system (${schools}), so rostercal cannot let you in.`,
                `If that is a mistake, ask an administrator of that system to reactivate you. ${pullNote} ${askLine}`,
              ]
            : found.refusal === 'ambiguous'
              ? [
                  `More than one staff account in the school’s extracurricular system (${schools}) uses ${who.email}, so rostercal cannot tell which one is you.`,
                  `An administrator of that system needs to give each account its own address. ${askLine}`,
                ]
              : [
                  `You signed in as ${who.email}, but no member of staff with that e-mail address is in the school’s extracurricular system (${schools}).`,
                  `rostercal lets in exactly the staff listed there, matched by e-mail address. If you are staff, ask an administrator of that system to set this address on your staff record. ${pullNote} ${askLine}`,
                ];
        return sendProblem(res, 403, 'rostercal does not know you as staff', paragraphs, {
          href: '/auth/login?prompt=select_account',
          label: 'Use another account',
        });
      }
      const current2 = await sessions.start(req, res, who);
      res.locals.principal = {
        kind: 'person',
        email: who.email,
        displayName: who.displayName,
        session: current2,
        memberships: found.memberships,
      } satisfies Principal;
      for (const m of found.memberships)
        await audit(req, res, { action: 'sign-in', schoolId: m.school.id, detail: m.access.role });
      res.set('Cache-Control', 'no-store');
      res.redirect(303, tx.returnTo);
    } catch (err) {
      if (err instanceof SignInError) {
        throttle.fail(client);
        return sendProblem(res, err.reason === 'not-ready' ? 503 : 401, 'Sign-in failed', [err.message], {
          href: '/auth/login',
          label: 'Try again',
        });
      }
      opts.onError?.(err);
      next(err);
    }
  });

  router.post('/auth/logout', form, async (req, res, next) => {
    try {
      const p = principalOf(res);
      if (p?.session && !checkCsrf(req, res)) {
        return sendProblem(res, 403, 'Sign-out not confirmed', [
          'The sign-out form was out of date or came from another site. Use the Sign out button on a rostercal page.',
        ]);
      }
      if (p?.session) await audit(req, res, { action: 'sign-out' });
      await sessions.end(req, res);
      res.set('Cache-Control', 'no-store');
      res.redirect(303, '/auth/signed-out');
    } catch (err) {
      next(err);
    }
  });

  router.get('/auth/signed-out', (_req, res) => {
    sendPage(res, {
      title: 'Signed out',
      body: `<div class="card"><h1>You are signed out</h1><p>Your session has ended on every rostercal server.</p><p><a class="btn primary" href="/auth/login">Sign in again</a></p></div>`,
    });
  });

  // Break-glass: the admin token typed into a form opens an ordinary (store) session acting as "admin token".
  function tokenForm(res: Response, next: string, message: string | null, status = 200): void {
    const signIn = oidc
      ? `<p><a class="btn primary" href="/auth/login?returnTo=${encodeURIComponent(next)}">Sign in with your school account</a></p>`
      : '';
    sendPage(res, {
      title: 'Staff sign-in',
      status,
      body: `<div class="card"><h1>Staff sign-in</h1>${signIn}${message ? `<p class="warn" role="alert">${escapeHtml(message)}</p>` : ''}<form method="post" action="/admin/login"><p class="muted">Administrators only, when the school’s sign-in is unavailable:</p><label for="token">Admin token</label><input id="token" name="token" type="password" autocomplete="current-password" required><input type="hidden" name="next" value="${escapeHtml(next)}"><div class="actions"><button type="submit">Use the admin token</button></div></form></div>`,
    });
  }

  router.get('/admin/login', (req, res) => {
    tokenForm(res, localPath(req.query.next ?? req.query.returnTo, '/admin'), null);
  });

  router.post('/admin/login', form, async (req, res, next) => {
    try {
      const client = clientOf(req);
      const wait = throttle.retryAfter(client);
      if (wait > 0) return tooMany(res, wait, true);
      const body = (req.body ?? {}) as Record<string, unknown>;
      const given = typeof body.token === 'string' ? body.token.trim() : '';
      if (!adminToken || !given || !sameSecret(given, adminToken)) {
        throttle.fail(client);
        return tokenForm(
          res,
          localPath(body.next, '/admin'),
          adminToken
            ? 'That token is not right. Staff sign in with their school account instead.'
            : 'No admin token is set (ADMIN_TOKEN), so this form lets nobody in.',
          401,
        );
      }
      const current = await sessions.start(req, res, {
        email: ADMIN_TOKEN_ACTOR,
        issuer: ADMIN_TOKEN_ISSUER,
        subject: adminTokenMark(adminToken),
        displayName: 'Admin token',
      });
      res.locals.principal = { kind: 'admin-token', session: current } satisfies Principal;
      await audit(req, res, { action: 'sign-in', detail: 'admin token form' });
      res.set('Cache-Control', 'no-store');
      res.redirect(303, localPath(body.next, '/admin'));
    } catch (err) {
      next(err);
    }
  });

  return { identify, requireStaff, requireAdmin, router, checkCsrf, audit, throttle };
}

/** Express error-path helper: answers a refused request for a resource without revealing anything about it. */
export function forbidden(res: Response, what: string): void {
  res.set('Cache-Control', 'no-store');
  res.status(403).type('text').send(`${what}\n`);
}
