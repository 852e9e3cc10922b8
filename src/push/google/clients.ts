// Google Calendar API access for one target: an authorised client and a write pacer per Google account (the
// target's own, or each delegated user), and every call through one place that paces, counts and backs off.
// gaxios never retries POST/PATCH or a 403 by itself (and we switch its retries off to count them): 429 and
// 403 rateLimitExceeded/userRateLimitExceeded back off exponentially here; quotaExceeded pauses the calendar.
import { calendar, type calendar_v3 } from '@googleapis/calendar';
import type { OAuth2Client } from 'google-auth-library';
import type { GoogleSettings } from '../../config/push-targets.ts';
import { scrubSecrets } from '../../log.ts';
import { RateLimiter } from '../../util/rate-limiter.ts';
import { type RetryPolicy, retrying } from '../../util/retry.ts';
import type { ProviderStats } from '../provider.ts';
import { GoogleAuthError, googleAuthClient } from './auth.ts';

/** Google said quotaExceeded: rest the calendar. */
export class PausedError extends Error {}

export interface Failure {
  status: number | null;
  reason: string | null;
  message: string;
}

export function failureOf(err: unknown): Failure {
  if (err instanceof GoogleAuthError) return { status: null, reason: 'auth', message: err.message };
  const e = err as {
    response?: { status?: number; data?: { error?: { message?: string; errors?: { reason?: string }[] } } };
    code?: string;
    message?: string;
  };
  const status = e.response?.status ?? null;
  const reason = e.response?.data?.error?.errors?.[0]?.reason ?? null;
  // Google's front end may quote the request's Authorization header back: redact before anyone sees it.
  const message = scrubSecrets(e.response?.data?.error?.message ?? e.message ?? String(err));
  return {
    status,
    reason,
    message: status ? `${status} ${reason ?? ''} ${message}`.replace(/\s+/g, ' ').trim() : message,
  };
}

export function isThrottle(f: Failure): boolean {
  return (
    f.status === 429 ||
    (f.status === 403 && (f.reason === 'rateLimitExceeded' || f.reason === 'userRateLimitExceeded'))
  );
}

/** A 4xx that no retry can change (not throttling, not a timeout). */
export function isRefusal(f: Failure): boolean {
  return f.status !== null && f.status >= 400 && f.status < 500 && f.status !== 408 && !isThrottle(f);
}

export function isQuota(f: Failure): boolean {
  return f.status === 403 && (f.reason === 'quotaExceeded' || f.reason === 'dailyLimitExceeded');
}

export function isTransient(f: Failure): boolean {
  return f.reason !== 'auth' && (f.status === null || f.status >= 500 || f.status === 408);
}

/** The account is unusable (suspended, not delegated…): skip its calendars, go on with the rest. */
export function isAccountProblem(err: unknown): boolean {
  return err instanceof GoogleAuthError && err.accountProblem;
}

export class GoogleClients {
  readonly settings: GoogleSettings;
  readonly stats: ProviderStats = { requests: 0, retries: 0, throttled: 0 };
  /** Staff scope with mode primary/secondary: each calendar's owner is the delegated account. */
  readonly delegated: boolean;
  readonly #apis = new Map<string, calendar_v3.Calendar>();
  readonly #auths = new Map<string, OAuth2Client>();
  readonly #pacers = new Map<string, RateLimiter>();

  /** The settings' backoff, jittered: parallel calendars must not retry in lockstep. */
  readonly retryPolicy: RetryPolicy;

  constructor(settings: GoogleSettings, delegated: boolean) {
    this.settings = settings;
    this.delegated = delegated;
    this.retryPolicy = { ...settings.backoff, jitter: true };
  }

  /** Account key: '' is the target's own account; otherwise the delegated user. */
  account(owner: string | null): string {
    return this.delegated && owner ? owner : '';
  }

  auth(account: string): OAuth2Client {
    let auth = this.#auths.get(account);
    if (!auth) {
      auth = googleAuthClient(
        this.settings.auth,
        account === '' ? undefined : account,
        this.settings.requestTimeoutMs,
      );
      this.#auths.set(account, auth);
    }
    return auth;
  }

  #api(account: string): calendar_v3.Calendar {
    let api = this.#apis.get(account);
    if (!api) {
      api = calendar({
        version: 'v3',
        auth: this.auth(account),
        rootUrl: this.settings.rootUrl,
        retry: false,
        // Each request's time limit (answer included): one Google accepts and never answers fails without a
        // status, which `call` retries as transient (inserts carry stable ids: a repeat is a 409, then adopted).
        timeout: this.settings.requestTimeoutMs,
      });
      this.#apis.set(account, api);
    }
    return api;
  }

  pacer(account: string): RateLimiter {
    let p = this.#pacers.get(account);
    if (!p) {
      // Writes spaced evenly, each account at most writesPerSecond (a write waits for its start).
      p = new RateLimiter({ requestsPerSecond: this.settings.writesPerSecond });
      this.#pacers.set(account, p);
    }
    return p;
  }

  /** One API call with pacing (writes), counting, backoff on throttling and transient failures. */
  call<T>(account: string, write: boolean, fn: (api: calendar_v3.Calendar) => Promise<T>): Promise<T> {
    return retrying(
      async () => {
        if (write) await this.pacer(account).take();
        this.stats.requests++;
        return await fn(this.#api(account));
      },
      {
        policy: this.retryPolicy,
        retryable: (err) => {
          const f = failureOf(err);
          if (isQuota(f)) throw new PausedError(f.message);
          const throttle = isThrottle(f);
          if (throttle) this.stats.throttled++;
          return throttle || isTransient(f);
        },
        onRetry: () => {
          this.stats.retries++;
        },
      },
    );
  }
}
