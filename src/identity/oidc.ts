// The OpenID Connect relying party: authorization code + PKCE through openid-client (certified; nothing
// hand-written). Discovery runs in the background and is retried: an issuer that cannot be reached at start-up
// is reported in one clear line, never a crash, and sign-in answers "not available yet" until it succeeds.
import * as client from 'openid-client';
import type { Logger } from '../log.ts';
import { retryDelay } from '../util/retry.ts';
import type { OidcSettings } from './settings.ts';

export type { OidcSettings };

/** What the browser carries between /auth/login and /auth/callback (in a short-lived HttpOnly cookie). */
export interface LoginTransaction {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
  /** When sign-in started (ms). */
  at: number;
}

export interface VerifiedIdentity {
  email: string;
  issuer: string;
  subject: string;
  displayName: string | null;
}

/** A sign-in the identity provider or its answer refused; `message` is meant for the person. */
export class SignInError extends Error {
  override name = 'SignInError';
  readonly reason: 'not-ready' | 'provider' | 'no-email' | 'unverified' | 'domain';
  constructor(reason: SignInError['reason'], message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface RelyingPartyOptions {
  redirectUri: string;
  log: Logger;
  /** Where an operator reads about the provider (serve: the terminal); else the log, at warn. */
  notify?: (line: string) => void;
  /** First retry delay after a failed discovery; doubles up to maxRetryMs. Defaults 2 s and 60 s. */
  retryMs?: number;
  maxRetryMs?: number;
}

export class OidcRelyingParty {
  readonly settings: OidcSettings;
  readonly #opts: RelyingPartyOptions;
  #config: client.Configuration | null = null;
  #lastError: string | null = null;
  #discovering: Promise<client.Configuration | null> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;
  #failures = 0;

  constructor(settings: OidcSettings, opts: RelyingPartyOptions) {
    this.settings = settings;
    this.#opts = opts;
  }

  get ready(): boolean {
    return this.#config !== null;
  }
  /** Why discovery has not succeeded yet (for the sign-in page and /admin). */
  get lastError(): string | null {
    return this.#lastError;
  }

  /** Starts discovery in the background, retrying until it succeeds or stop() is called. */
  start(): void {
    void this.#discover();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
  }

  #warn(line: string): void {
    if (this.#opts.notify) this.#opts.notify(line);
    else this.#opts.log.warn(line);
  }

  #discover(): Promise<client.Configuration | null> {
    if (this.#config) return Promise.resolve(this.#config);
    this.#discovering ??= (async () => {
      const { issuer, clientId, clientSecret } = this.settings;
      const insecure = issuer.startsWith('http:');
      try {
        const config = await client.discovery(
          new URL(issuer),
          clientId,
          clientSecret ?? undefined,
          clientSecret ? client.ClientSecretPost(clientSecret) : client.None(),
          {
            ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
            timeout: 10,
          },
        );
        this.#config = config;
        this.#lastError = null;
        if (this.#failures > 0) this.#warn(`sign-in: the identity provider ${issuer} answers again`);
        return config;
      } catch (err) {
        this.#failures++;
        this.#lastError = describe(err);
        const delay = retryDelay(
          { baseMs: this.#opts.retryMs ?? 2000, capMs: this.#opts.maxRetryMs ?? 60_000 },
          Math.min(this.#failures - 1, 10),
        );
        // One line at the first failure (and a reminder every tenth), not one per retry.
        if (this.#failures === 1 || this.#failures % 10 === 0)
          this.#warn(
            `sign-in: cannot reach the identity provider ${issuer} (${this.#lastError}); retrying every ${Math.round(delay / 1000)} s at most — staff sign-in is unavailable until it answers`,
          );
        if (!this.#stopped) {
          this.#timer = setTimeout(() => void this.#discover(), delay);
          this.#timer.unref();
        }
        return null;
      } finally {
        this.#discovering = null;
      }
    })();
    return this.#discovering;
  }

  async #configuration(): Promise<client.Configuration> {
    const config = this.#config ?? (await this.#discover());
    if (!config)
      throw new SignInError(
        'not-ready',
        `The school's sign-in service (${this.settings.issuer}) cannot be reached right now${this.#lastError ? ` (${this.#lastError})` : ''}. Try again in a minute; if it persists, tell the school's IT team.`,
      );
    return config;
  }

  /** The URL to send the browser to, and what to remember until it comes back. */
  async begin(returnTo: string): Promise<{ url: URL; tx: LoginTransaction }> {
    const config = await this.#configuration();
    const verifier = client.randomPKCECodeVerifier();
    const tx: LoginTransaction = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier,
      returnTo,
      at: Date.now(),
    };
    const scopes = new Set(['openid', 'email', 'profile', ...this.settings.scopes]);
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.#opts.redirectUri,
      scope: [...scopes].join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: tx.state,
      nonce: tx.nonce,
    });
    return { url, tx };
  }

  /** Completes the code + PKCE exchange and returns who signed in (a verified e-mail address). */
  async finish(currentUrl: URL, tx: LoginTransaction): Promise<VerifiedIdentity> {
    const config = await this.#configuration();
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: tx.verifier,
        expectedState: tx.state,
        expectedNonce: tx.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      throw new SignInError(
        'provider',
        `The sign-in service did not confirm who you are (${describe(err)}).`,
      );
    }
    const claims = tokens.claims();
    if (!claims) throw new SignInError('provider', 'The sign-in service sent no ID token.');
    let email = typeof claims.email === 'string' ? claims.email : null;
    let verified: unknown = claims.email_verified;
    let name = typeof claims.name === 'string' ? claims.name : null;
    if (!email) {
      // Some providers (Entra without the optional `email` claim) put it only in userinfo.
      try {
        const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
        email = typeof info.email === 'string' ? info.email : null;
        verified = info.email_verified;
        name ??= typeof info.name === 'string' ? info.name : null;
      } catch {}
    }
    if (!email)
      throw new SignInError(
        'no-email',
        'The sign-in service did not tell rostercal your e-mail address, which is how rostercal knows who you are. Ask the school’s IT team to release the "email" claim to rostercal.',
      );
    // Honour email_verified where it is sent (some send the string "false").
    if (verified === false || verified === 'false')
      throw new SignInError(
        'unverified',
        `The sign-in service says the address ${email} is not verified. Verify it with your account provider, or ask the school’s IT team.`,
      );
    const domain = email.split('@').pop()?.toLowerCase() ?? '';
    if (this.settings.allowedDomains.length && !this.settings.allowedDomains.includes(domain))
      throw new SignInError(
        'domain',
        `Accounts of ${domain} cannot sign in here: use your school account (${this.settings.allowedDomains.map((d) => `@${d}`).join(', ')}).`,
      );
    return {
      email: email.trim().toLowerCase(),
      issuer: String(claims.iss),
      subject: String(claims.sub),
      displayName: name,
    };
  }
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as Error & { cause?: unknown }).cause;
  const code =
    cause && typeof cause === 'object' && 'code' in cause ? String((cause as { code: unknown }).code) : '';
  const msg = err.message.replace(/\s+/g, ' ').slice(0, 200);
  return code && !msg.includes(code) ? `${msg}: ${code}` : msg;
}
