// The sign-in routes: OpenID Connect (/auth/login → the school's identity provider → /auth/callback), sign-out
// (POST /auth/logout, /auth/signed-out), and the pages that say why a sign-in did not happen.
import type express from 'express';
import type { Request, Response } from 'express';
import { cookieOf, localPath } from '../identity/cookies.ts';
import type { Lookup } from '../identity/directory.ts';
import { type LoginTransaction, SignInError, type VerifiedIdentity } from '../identity/oidc.ts';
import { html } from '../util/html.ts';
import { sendPage, sendProblem } from './layouts.ts';
import { type Principal, principalOf } from './staff-principal.ts';
import { type AuthContext, auditRequest, checkCsrf, clientOf, tooMany } from './staff-request-auth.ts';

const LOGIN_COOKIE = 'rostercal_login';
const LOGIN_TTL_MS = 10 * 60_000;

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

export function addSignInRoutes(
  ctx: AuthContext,
  router: express.Router,
  form: express.RequestHandler,
): void {
  router.get('/auth/login', (req, res, next) => beginSignIn(ctx, req, res).catch(next));
  router.get('/auth/callback', (req, res, next) => finishSignIn(ctx, req, res).catch(next));
  router.post('/auth/logout', form, async (req, res, next) => {
    try {
      const p = principalOf(res);
      if (p?.session && !checkCsrf(ctx, req, res)) {
        return sendProblem(res, 403, 'Sign-out not confirmed', [
          'The sign-out form was out of date or came from another site. Use the Sign out button on a rostercal page.',
        ]);
      }
      if (p?.session) await auditRequest(ctx, req, res, { action: 'sign-out' });
      await ctx.sessions.end(req, res);
      res.set('Cache-Control', 'no-store');
      res.redirect(303, '/auth/signed-out');
    } catch (err) {
      next(err);
    }
  });
  router.get('/auth/signed-out', (_req, res) => {
    sendPage(res, {
      title: 'Signed out',
      body: html`<div class="card"><h1>You are signed out</h1><p>Your session has ended on every rostercal server.</p><p><a class="btn primary" href="/auth/login">Sign in again</a></p></div>`,
    });
  });
}

/** /auth/login: off to the identity provider, with the login transaction in a short-lived cookie. */
async function beginSignIn(ctx: AuthContext, req: Request, res: Response): Promise<void> {
  const { oidc, adminToken } = ctx;
  try {
    const returnTo = localPath(req.query.returnTo);
    if (principalOf(res) && req.query.prompt !== 'select_account') return res.redirect(303, returnTo);
    if (wrongOrigin(ctx, req, res, returnTo)) return;
    const wait = ctx.throttle.retryAfter(clientOf(req));
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
      secure: ctx.secure,
      sameSite: 'lax',
      path: '/auth',
      maxAge: LOGIN_TTL_MS,
    });
    res.set('Cache-Control', 'no-store');
    res.redirect(303, url.href);
  } catch (err) {
    if (err instanceof SignInError) return sendProblem(res, 503, 'Sign-in is not available', [err.message]);
    throw err;
  }
}

/** The browser must use the address the identity provider sends it back to, or the cookies go missing. */
function wrongOrigin(ctx: AuthContext, req: Request, res: Response, returnTo: string): boolean {
  const { publicUrl } = ctx;
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

/** /auth/callback: the provider's answer becomes a session, if the directory knows the person as staff. */
async function finishSignIn(ctx: AuthContext, req: Request, res: Response): Promise<void> {
  const { oidc, throttle } = ctx;
  const client = clientOf(req);
  try {
    const wait = throttle.retryAfter(client);
    if (wait > 0) return tooMany(res, wait, true);
    if (!oidc) return res.redirect(303, '/auth/login');
    const tx = decodeTx(cookieOf(req, LOGIN_COOKIE));
    res.clearCookie(LOGIN_COOKIE, { httpOnly: true, secure: ctx.secure, sameSite: 'lax', path: '/auth' });
    if (req.query.error !== undefined) return providerRefused(ctx, req, res);
    if (!tx || Date.now() - tx.at > LOGIN_TTL_MS) {
      throttle.fail(client);
      return loginCookieMissing(ctx, res);
    }
    const current = new URL(req.originalUrl, ctx.publicUrl.origin);
    const who = await oidc.finish(current, tx);
    const found = await ctx.directory.lookup(who.email);
    if (!found.memberships.length) {
      throttle.fail(client);
      return refuseUnknownStaff(ctx, client, res, who, found);
    }
    const session = await ctx.sessions.start(req, res, who);
    res.locals.principal = {
      kind: 'person',
      email: who.email,
      displayName: who.displayName,
      session,
      memberships: found.memberships,
    } satisfies Principal;
    for (const m of found.memberships)
      await auditRequest(ctx, req, res, { action: 'sign-in', schoolId: m.school.id, detail: m.access.role });
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
    ctx.onError?.(err);
    throw err;
  }
}

function providerRefused(ctx: AuthContext, req: Request, res: Response): void {
  const { askLine } = ctx;
  // Anyone can send a browser here with any text: only a known error code is shown, never a description.
  const code =
    typeof req.query.error === 'string' && PROVIDER_ERRORS.has(req.query.error) ? req.query.error : null;
  sendProblem(
    res,
    401,
    'Sign-in was not completed',
    [
      `The school’s sign-in service did not sign you in${code ? ` (it answered ${code})` : ''}. Try again; if it keeps happening, ${askLine.charAt(0).toLowerCase()}${askLine.slice(1)}`,
    ],
    { href: '/auth/login', label: 'Try again' },
  );
}

function loginCookieMissing(ctx: AuthContext, res: Response): void {
  const { publicUrl, secure } = ctx;
  sendProblem(
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

/** Signed in at the provider, but not (or not clearly) staff upstream: audited, and told why. */
async function refuseUnknownStaff(
  ctx: AuthContext,
  client: string,
  res: Response,
  who: VerifiedIdentity,
  found: Lookup,
): Promise<void> {
  await ctx.access.appendAudit({
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
  const { askLine, pullNote } = ctx;
  const schools = ctx.directory.schools.map((s) => s.name).join(', ');
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
  sendProblem(res, 403, 'rostercal does not know you as staff', paragraphs, {
    href: '/auth/login?prompt=select_account',
    label: 'Use another account',
  });
}
