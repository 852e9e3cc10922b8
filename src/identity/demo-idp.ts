// The demo's identity provider: a real OpenID provider (oidc-provider, certified) running in-process, so
// `npm start` shows staff sign-in exactly as it works with Google or Microsoft — except that instead of a
// password page it lets a newcomer pick a demo member of staff (demo-people.ts). Only ever started in demo mode, and
// only ever loaded then (running-service.ts imports it when it starts the demo), so a production process never
// loads oidc-provider, a whole OpenID provider.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import express from 'express';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { escapeHtml } from '../util/html.ts';
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
}

export interface DemoIdp {
  /** Mount at `/demo-idp`. */
  router: express.Router;
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/**
 * The picker's policy. Chromium applies form-action to every redirect that follows a form post, and picking a
 * person ends with a redirect to rostercal's callback: its origin must be allowed too, or the browser stops
 * there (the demo serves both on one origin; a provider of its own, as in the tests, does not).
 */
function pageCsp(redirectUri: string): string {
  return `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${new URL(redirectUri).origin}; frame-ancestors 'none'; base-uri 'none'`;
}

export function createDemoIdp(opts: DemoIdpOptions): DemoIdp {
  const clientId = 'rostercal-demo';
  const clientSecret = randomBytes(24).toString('base64url');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'RS256' };
  const mount = new URL(opts.issuer).pathname.replace(/\/+$/, '');

  const configuration: Configuration = {
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
    features: { devInteractions: { enabled: false } },
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
      ctx.type = 'html';
      ctx.body = `<!doctype html><meta charset="utf-8"><title>Demo sign-in</title><p>${escapeHtml(String(out.error_description ?? out.error))}</p><p><a href="/auth/login">Start again</a></p>`;
    },
  };
  const provider = new Provider(opts.issuer, configuration);
  // Behind a reverse proxy the app decides what is trusted; the provider follows the forwarded protocol.
  provider.proxy = true;

  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '2kb' });

  router.get('/interaction/:uid', async (req, res, next) => {
    try {
      const details = await provider.interactionDetails(req, res);
      const people = await opts.people();
      const label = { admin: 'Admin', manager: 'Manager', staff: 'Coach', frozen: 'Deactivated' } as const;
      const rows = people
        .map(
          (p) =>
            `<li><form method="post" action="${mount}/interaction/${escapeHtml(details.uid)}/login"><input type="hidden" name="account" value="${escapeHtml(p.id)}"><button type="submit"><strong>${escapeHtml(p.name)}</strong><span>${label[p.role]} · ${escapeHtml(p.note)}</span><small>${escapeHtml(p.email)}</small></button></form></li>`,
        )
        .join('');
      res.set({ 'Cache-Control': 'no-store', 'Content-Security-Policy': pageCsp(opts.redirectUri) });
      res
        .type('html')
        .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Demo sign-in</title>
<style>*{box-sizing:border-box}body{font:16px/1.4 system-ui,sans-serif;margin:0;background:#eef1f5;color:#1c1e21}main{max-width:30rem;margin:0 auto;padding:1rem}
h1{font-size:1.3rem}ul{list-style:none;padding:0}li{margin:0 0 .6rem}button{width:100%;min-height:56px;text-align:left;display:grid;gap:.1rem;padding:.6rem .9rem;border:1px solid #b8bec6;border-radius:10px;background:#fff;font:inherit;cursor:pointer}
button span{color:#1f3a5f}small{color:#5f6670;overflow-wrap:anywhere}</style></head>
<body><main><h1>Demo school sign-in</h1><p>This stands in for the school’s Google or Microsoft sign-in. Pick who you are; each sees what their role allows.</p><ul>${rows}</ul></main></body></html>`);
    } catch (err) {
      next(err);
    }
  });

  router.post('/interaction/:uid/login', form, async (req, res, next) => {
    try {
      await provider.interactionDetails(req, res);
      const account = String((req.body as Record<string, unknown>)?.account ?? '');
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: account } },
        { mergeWithLastSubmission: false },
      );
    } catch (err) {
      next(err);
    }
  });

  router.use(provider.callback());
  return { router, issuer: opts.issuer, clientId, clientSecret };
}
