// Break-glass: the admin token typed into a form (/admin/login) opens an ordinary (store) session acting as
// "admin token", for when the school's sign-in is unavailable.
import type express from 'express';
import type { Response } from 'express';
import { localPath } from '../identity/cookies.ts';
import { html } from '../util/html.ts';
import { sendPage } from './layouts.ts';
import { ADMIN_TOKEN_ACTOR, type Principal } from './staff-principal.ts';
import {
  ADMIN_TOKEN_ISSUER,
  type AuthContext,
  adminTokenMark,
  auditRequest,
  clientOf,
  sameSecret,
  tooMany,
} from './staff-request-auth.ts';

export function addAdminTokenRoutes(
  ctx: AuthContext,
  router: express.Router,
  form: express.RequestHandler,
): void {
  router.get('/admin/login', (req, res) => {
    tokenForm(ctx, res, localPath(req.query.next ?? req.query.returnTo, '/admin'), null);
  });

  router.post('/admin/login', form, async (req, res, next) => {
    const { adminToken } = ctx;
    try {
      const client = clientOf(req);
      const wait = ctx.throttle.retryAfter(client);
      if (wait > 0) return tooMany(res, wait, true);
      const body = (req.body ?? {}) as Record<string, unknown>;
      const given = typeof body.token === 'string' ? body.token.trim() : '';
      if (!adminToken || !given || !sameSecret(given, adminToken)) {
        ctx.throttle.fail(client);
        return tokenForm(
          ctx,
          res,
          localPath(body.next, '/admin'),
          adminToken
            ? 'That token is not right. Staff sign in with their school account instead.'
            : 'No admin token is set (ADMIN_TOKEN), so this form lets nobody in.',
          401,
        );
      }
      const current = await ctx.sessions.start(req, res, {
        email: ADMIN_TOKEN_ACTOR,
        issuer: ADMIN_TOKEN_ISSUER,
        subject: adminTokenMark(adminToken),
        displayName: 'Admin token',
      });
      res.locals.principal = { kind: 'admin-token', session: current } satisfies Principal;
      await auditRequest(ctx, req, res, { action: 'sign-in', detail: 'admin token form' });
      res.set('Cache-Control', 'no-store');
      res.redirect(303, localPath(body.next, '/admin'));
    } catch (err) {
      next(err);
    }
  });
}

function tokenForm(
  ctx: AuthContext,
  res: Response,
  next: string,
  message: string | null,
  status = 200,
): void {
  const signIn =
    ctx.oidc &&
    html`<p><a class="btn primary" href="/auth/login?returnTo=${encodeURIComponent(next)}">Sign in with your school account</a></p>`;
  sendPage(res, {
    title: 'Staff sign-in',
    status,
    body: html`<div class="card"><h1>Staff sign-in</h1>${signIn}${message && html`<p class="warn" role="alert">${message}</p>`}<form method="post" action="/admin/login"><p class="muted">Administrators only, when the school’s sign-in is unavailable:</p><label for="token">Admin token</label><input id="token" name="token" type="password" autocomplete="current-password" required><input type="hidden" name="next" value="${next}"><div class="actions"><button type="submit">Use the admin token</button></div></form></div>`,
  });
}
