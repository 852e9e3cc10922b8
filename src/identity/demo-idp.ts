// The demo's identity provider: a real OpenID provider (oidc-provider, certified) running in-process, so
// `npm start` shows staff sign-in exactly as it works with Google or Microsoft — except that instead of a
// password page it lets a newcomer pick a demo member of staff (demo-people.ts). Only ever started in demo mode, and
// only ever loaded then (running-service.ts imports it when it starts the demo), so a production process never
// loads oidc-provider, a whole OpenID provider.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import express from 'express';
import Provider, { type Configuration, errors, type KoaContextWithOIDC } from 'oidc-provider';
import { html, type SafeHtml } from '../util/html.ts';
import type { DemoPerson } from './demo-people.ts';

/** In-memory storage for the provider's artifacts: the demo keeps nothing across restarts, by design. */
class MemoryAdapter {
  static readonly all = new Map<string, { payload: Record<string, unknown>; until: number }>();
  readonly #name: string;
  constructor(name: string) {
    this.#name = name;
  }
  #key(id: string): string {
    return `${this.#name}:${id}`;
  }
  async upsert(id: string, payload: Record<string, unknown>, expiresIn: number): Promise<void> {
    MemoryAdapter.all.set(this.#key(id), { payload, until: Date.now() + (expiresIn || 3600) * 1000 });
  }
  async find(id: string): Promise<Record<string, unknown> | undefined> {
    const hit = MemoryAdapter.all.get(this.#key(id));
    if (!hit) return undefined;
    if (hit.until < Date.now()) {
      MemoryAdapter.all.delete(this.#key(id));
      return undefined;
    }
    return hit.payload;
  }
  async findByUid(uid: string): Promise<Record<string, unknown> | undefined> {
    for (const [k, v] of MemoryAdapter.all)
      if (k.startsWith(`${this.#name}:`) && v.payload.uid === uid)
        return this.find(k.slice(this.#name.length + 1));
    return undefined;
  }
  async findByUserCode(): Promise<undefined> {
    return undefined;
  }
  async consume(id: string): Promise<void> {
    const hit = MemoryAdapter.all.get(this.#key(id));
    if (hit) hit.payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string): Promise<void> {
    MemoryAdapter.all.delete(this.#key(id));
  }
  async revokeByGrantId(grantId: string): Promise<void> {
    for (const [k, v] of MemoryAdapter.all) if (v.payload.grantId === grantId) MemoryAdapter.all.delete(k);
  }
}

export interface DemoIdpOptions {
  /** `<publicUrl>/demo-idp`. */
  issuer: string;
  redirectUri: string;
  /** The people offered (read when the picker is shown, so it follows the store). */
  people: () => Promise<DemoPerson[]>;
  /**
   * The staff pages' layout (web/layouts.ts's staffPageText, handed in: identity/ is below web/): the page as
   * text and the CSP that allows exactly its stylesheet, by hash.
   */
  renderPage: (page: DemoPage) => { text: string; csp: string };
}

/** A page of the demo's provider, on the staff layout. */
export interface DemoPage {
  title: string;
  body: SafeHtml;
  /** Origins besides the provider's that a form on the page may lead to. */
  formTargets: readonly string[];
}

export interface DemoIdp {
  /** Mount at `/demo-idp`. */
  router: express.Router;
  issuer: string;
  clientId: string;
  clientSecret: string;
}

const ROLE_LABELS = { admin: 'Admin', manager: 'Manager', staff: 'Coach', frozen: 'Deactivated' } as const;

/** The picker: one button per person, each a form that signs in as them. */
function pickerBody(people: DemoPerson[], action: string): SafeHtml {
  const rows = people.map(
    (p) =>
      html`<li><form method="post" action="${action}"><input type="hidden" name="account" value="${p.id}"><button type="submit"><strong>${p.name}</strong><span>${ROLE_LABELS[p.role]} · ${p.note}</span><small>${p.email}</small></button></form></li>`,
  );
  return html`<div class="card"><h1>Demo school sign-in</h1><p>This stands in for the school’s Google or Microsoft sign-in. Pick who you are; each sees what their role allows.</p><ul class="people">${rows}</ul></div>`;
}

export function createDemoIdp(opts: DemoIdpOptions): DemoIdp {
  const clientId = 'rostercal-demo';
  const clientSecret = randomBytes(24).toString('base64url');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'RS256' };
  const mount = new URL(opts.issuer).pathname.replace(/\/+$/, '');

  /** The provider's error page, on the staff layout, whether oidc-provider or one of the routes below fails. */
  const errorPage = (message: string) =>
    opts.renderPage({
      title: 'Demo sign-in',
      body: html`<div class="card" role="alert"><h1>Demo sign-in</h1><p>${message}</p><p><a class="btn primary" href="/auth/login">Start again</a></p></div>`,
      formTargets: [],
    });

  const configuration = providerConfiguration(opts, { clientId, clientSecret, jwk, mount, errorPage });
  const provider = new Provider(opts.issuer, configuration);
  // Behind a reverse proxy the app decides what is trusted; the provider follows the forwarded protocol.
  provider.proxy = true;

  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '2kb' });

  // The picker's routes answer their refusals on the error page too: a picker opened again after its sign-in
  // finished (Back), in another browser or after its ten minutes has no interaction left, and oidc-provider
  // throws. Anything else is a fault, for the app's handler to log.
  const refuse = (res: express.Response, status: number, message: string) => {
    const page = errorPage(message);
    res.status(status).set({ 'Cache-Control': 'no-store', 'Content-Security-Policy': page.csp });
    res.type('html').send(page.text);
  };
  const failed = (err: unknown, res: express.Response, next: express.NextFunction) => {
    if (err instanceof errors.SessionNotFound)
      return refuse(res, 400, 'This sign-in has already finished or has expired.');
    if (err instanceof errors.OIDCProviderError && err.statusCode < 500)
      return refuse(res, err.statusCode, err.error_description ?? err.message);
    next(err);
  };

  router.get('/interaction/:uid', async (req, res, next) => {
    try {
      const details = await provider.interactionDetails(req, res);
      // Chromium applies form-action to the redirect after the post: rostercal's callback must be allowed too
      // (the demo serves both on one origin; a provider of its own, as in the tests, does not).
      const page = opts.renderPage({
        title: 'Demo sign-in',
        body: pickerBody(await opts.people(), `${mount}/interaction/${details.uid}/login`),
        formTargets: [new URL(opts.redirectUri).origin],
      });
      res.set({ 'Cache-Control': 'no-store', 'Content-Security-Policy': page.csp });
      res.type('html').send(page.text);
    } catch (err) {
      failed(err, res, next);
    }
  });

  router.post('/interaction/:uid/login', form, async (req, res, next) => {
    try {
      await provider.interactionDetails(req, res);
      const account = String((req.body as Record<string, unknown>)?.account ?? '');
      if (!(await opts.people()).some((p) => p.id === account))
        return refuse(res, 400, 'That person is not on the demo sign-in page.');
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: account } },
        { mergeWithLastSubmission: false },
      );
    } catch (err) {
      failed(err, res, next);
    }
  });

  router.use(provider.callback());
  return { router, issuer: opts.issuer, clientId, clientSecret };
}

/** oidc-provider's settings for the demo: one first-party client, in-memory state, consent implied. */
function providerConfiguration(
  opts: DemoIdpOptions,
  p: {
    clientId: string;
    clientSecret: string;
    jwk: object;
    mount: string;
    errorPage: (message: string) => { text: string; csp: string };
  },
): Configuration {
  const { clientId, clientSecret, jwk, mount, errorPage } = p;
  return {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [opts.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    // biome-ignore lint/suspicious/noExplicitAny: the typings want a JWK type the node export satisfies.
    jwks: { keys: [jwk as any] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // rostercal signs out on its own (/auth/logout) and never sends anyone to the provider's logout page, whose
    // default (and its auto-posting form for a visitor without a session) runs an inline script our CSP refuses.
    features: { devInteractions: { enabled: false }, rpInitiatedLogout: { enabled: false } },
    adapter: MemoryAdapter,
    ttl: {
      Interaction: 600,
      Session: 8 * 3600,
      Grant: 8 * 3600,
      AccessToken: 600,
      IdToken: 600,
      AuthorizationCode: 60,
    },
    pkce: { required: () => true },
    interactions: { url: (_ctx, interaction) => `${mount}/interaction/${interaction.uid}` },
    async findAccount(_ctx, id) {
      const person = (await opts.people()).find((p) => p.id === id);
      if (!person) return undefined;
      return {
        accountId: id,
        claims: () => ({
          sub: id,
          email: person.email,
          email_verified: person.emailVerified ?? true,
          name: person.name,
        }),
      };
    },
    // First-party demo client: consent is implied.
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const { client, session } = ctx.oidc;
      if (!client || !session?.accountId) return undefined;
      const grantId = session.grantIdFor(client.clientId);
      if (grantId) {
        const existing = await ctx.oidc.provider.Grant.find(grantId);
        if (existing) return existing;
      }
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
    renderError(ctx, out) {
      const page = errorPage(String(out.error_description ?? out.error));
      ctx.type = 'html';
      ctx.set({ 'Cache-Control': 'no-store', 'Content-Security-Policy': page.csp });
      ctx.body = page.text;
    },
  };
}
