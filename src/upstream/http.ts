// The one place that talks HTTP to the upstream service: bearer auth, timeout, client-side rate limit, the
// 1-2-4-8 backoff, per-endpoint stats and typed errors. Reads are retried after 429, 5xx, network failures,
// timeouts and a 200 whose JSON is cut short (a proxy that ended the body early is as passing as one that dropped
// the connection); writes only after 429 (the service did nothing), because a 5xx or a timeout on a write may
// have been applied and repeating it could create a record twice. Reads that meet nothing but failures stop early
// (outage.ts), and each answer's `Date` is handed on as the upstream's clock (clock.ts).

import { scrubSecrets } from '../log-text.ts';
import { plainLine } from '../terminal.ts';
import { yieldToEventLoop } from '../util/event-loop.ts';
import type { RateLimiter } from '../util/rate-limiter.ts';
import { parseRetryAfter, type RetryPolicy, retryDelay, retrying } from '../util/retry.ts';
import type { RetryInfo } from './api.ts';
import { type ClockSample, clockSample } from './clock.ts';
import {
  errorForStatus,
  InvalidResponseError,
  NetworkError,
  RateLimitedError,
  StalledError,
  TimeoutError,
  UnreachableError,
  UpstreamDownError,
  UpstreamError,
} from './errors.ts';
import { isTrouble, type OutageLimits, OutageWatch } from './outage.ts';
import type { StatsRecorder } from './stats.ts';

// The spec's recommended schedule: wait 1 s after the first 429 and double after each further one (2, 4, 8 s),
// capped. The same schedule serves 5xx, network failures and timeouts on reads.
export interface BackoffPolicy extends RetryPolicy {
  /** A Retry-After longer than this is not waited out: the request fails with the 429 instead. */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = {
  baseMs: 1000,
  capMs: 32_000,
  maxRetries: 6,
  maxRetryAfterMs: 120_000,
};

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface HttpRequest {
  method: Method;
  /** Stats key: `GET /sessions/{id}`. */
  endpoint: string;
  /** Concrete path, `/sessions/42`; shown in errors. */
  path: string;
  /** Already encoded, with its leading `?`, or ''. */
  query: string;
  body?: unknown;
  /** Reads are retried after 5xx, network failures and timeouts; writes are not. */
  read: boolean;
  accept: 'json' | 'text';
  /** Abandons the request (a prefetch nobody wants any more): no further attempt, no retry. */
  signal?: AbortSignal;
}

export interface TransportOptions {
  baseUrl: string;
  token: string;
  timeoutMs: number;
  backoff: BackoffPolicy;
  limiter: RateLimiter;
  stats: StatsRecorder;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
  onRetry?: ((info: RetryInfo) => void) | undefined;
  userAgent: string;
  /** When a read's failures mean the service is down (default OUTAGE_LIMITS). */
  outage?: OutageLimits;
}

export interface Transport {
  /** The response body, parsed once as JSON (an empty body reads as `{}`). */
  json(req: Omit<HttpRequest, 'accept'>): Promise<unknown>;
  /** The same, with the upstream's clock as the answer's `Date` header told it (null when it sent none). */
  jsonWithClock(req: Omit<HttpRequest, 'accept'>): Promise<{ json: unknown; clock: ClockSample | null }>;
  text(req: Omit<HttpRequest, 'accept'>): Promise<string>;
  /** A run (a pull) begins: failures met before it are forgotten (see outage.ts). */
  beginRun(): void;
}

type Attempt =
  | { ok: true; body: string; json?: unknown; clock?: ClockSample | null }
  | { ok: false; error: UpstreamError; counts: 'throttled' | 'errors' };

const REASON_MAX = 200;
/** Retries (1 s, 2 s with the default backoff) before an unreachable service ends the request. */
const UNREACHABLE_RETRIES = 2;

const UNREACHABLE_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host (DNS)',
  EAI_AGAIN: 'the host name could not be resolved (DNS)',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'the network is unreachable',
};

/** Why nobody can be reached (refused, DNS, TLS), or null for other network failures (resets, timeouts). */
function unreachableCause(err: unknown): string | null {
  const cause =
    err instanceof Error ? (err.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  const code = typeof cause?.code === 'string' ? cause.code : null;
  // fetch refuses ports browsers block (9, 25, 6000…) before any connection, with no code: asking again never helps.
  if (!code && cause?.message === 'bad port')
    return 'the port is one fetch refuses to connect to (bad port): serve the API on another port';
  if (!code) return null;
  const known = UNREACHABLE_CODES[code];
  if (known) return `${known} (${code})`;
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) {
    return `TLS: ${typeof cause?.message === 'string' ? cause.message : code} (${code})`;
  }
  return null;
}

function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/+$/, '');
  } catch {
    return url;
  }
}

/**
 * The reason an error answer gives, in one line of at most REASON_MAX characters: the JSON body's message, else
 * the body (a page's words without its markup: terminal.ts plainLine, as the CLI prints), else the status text;
 * `redact` takes the token out before it is cut to length.
 */
function reasonFrom(
  status: number,
  statusText: string,
  body: string,
  redact: (text: string) => string,
): string {
  let reason = '';
  const trimmed = body.trim();
  if (trimmed.startsWith('{')) {
    try {
      reason = messageOf(JSON.parse(trimmed));
    } catch {
      reason = trimmed;
    }
  } else reason = trimmed;
  // The token out first, on the whole text: a cut could leave a part of it that no longer matches. Then any
  // credential the service echoes back by shape (its own `Bearer …`, another header), marked where it stood.
  reason = plainLine(scrubSecrets(redact(reason)), REASON_MAX);
  return reason === '' ? statusText || `HTTP ${status}` : reason;
}

/** Whether and how a failed attempt is tried again: 429 always, other retryable failures on reads only. */
function retryOf(error: unknown, read: boolean, maxRetries: number) {
  if (!(error instanceof UpstreamError)) return false;
  if (!(error.status === 429 || (read && error.retryable))) return false;
  return {
    // Nobody answering at all: a couple of quick tries (a restarting service), not the whole backoff.
    ...(error instanceof UnreachableError ? { maxRetries: Math.min(UNREACHABLE_RETRIES, maxRetries) } : {}),
    // Retry-After is a floor: never sooner than the server asks, never faster than the 1-2-4-8 schedule
    // (a server that keeps answering "retry in 1 s" is still backed off from).
    retryAfterMs: error instanceof RateLimitedError ? error.retryAfterMs : null,
    retryAfterUse: 'floor' as const,
  };
}

/** How late a timeout's timer may fire before the wait is put down to this process not running (a loaded loop holds ~0.1 s). */
const STALL_MS = 2_000;

export function createTransport(opts: TransportOptions): Transport {
  const prefix = opts.baseUrl.replace(/\/+$/, '');
  // For messages: the service's address without any credentials in it.
  const publicUrl = withoutCredentials(prefix);
  const token = opts.token;
  // The header object is built once and never handed to anything that could print it.
  const baseHeaders: Record<string, string> = {
    authorization: `Bearer ${token}`,
    'user-agent': opts.userAgent,
  };

  const redact = (text: string): string => (token === '' ? text : text.split(token).join('[redacted]'));

  const attempt = async (req: HttpRequest, label: string, timeoutMs: number): Promise<Attempt> => {
    const headers: Record<string, string> = {
      ...baseHeaders,
      accept: req.accept === 'json' ? 'application/json' : 'text/calendar, text/plain;q=0.5',
    };
    let body: string | undefined;
    if (req.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(req.body);
    }
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = req.signal ? AbortSignal.any([timeout, req.signal]) : timeout;
    await opts.limiter.acquire();
    const began = performance.now();
    try {
      const sentAt = opts.now();
      const res = await fetch(prefix + req.path + req.query, { method: req.method, headers, body, signal });
      const clock = clockSample(res.headers.get('date'), sentAt, opts.now());
      const text = await bodyText(res);
      if (res.ok) return req.accept === 'json' ? parsed(req, label, text, clock) : { ok: true, body: text };
      const reason = reasonFrom(res.status, res.statusText, text, redact);
      if (res.status === 429) {
        const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), opts.now());
        return { ok: false, error: new RateLimitedError(label, reason, retryAfterMs), counts: 'throttled' };
      }
      return { ok: false, error: errorForStatus(label, res.status, reason), counts: 'errors' };
    } catch (err) {
      if (req.signal?.aborted) throw new AbandonedError(label);
      if (timeout.aborted) {
        // A timer that fired far past its time means this process was not running, not that nobody answered.
        const lateMs = performance.now() - began - timeoutMs;
        const error =
          lateMs > STALL_MS ? new StalledError(label, timeoutMs, lateMs) : new TimeoutError(label, timeoutMs);
        return { ok: false, error, counts: 'errors' };
      }
      const unreachable = unreachableCause(err);
      return {
        ok: false,
        error: unreachable
          ? new UnreachableError(label, publicUrl, unreachable)
          : new NetworkError(label, redact(networkReason(err))),
        counts: 'errors',
      };
    } finally {
      opts.limiter.release();
    }
  };

  const watch = new OutageWatch(opts.now, opts.outage);

  const send = async (req: HttpRequest): Promise<Extract<Attempt, { ok: true }>> => {
    const label = `${req.method} ${req.path}`;
    const stats = opts.stats.for(req.endpoint);
    // A read made after another gave up in this trouble: one attempt, within what is left of the limit.
    const probe = req.read && watch.down;
    return retrying(
      async (retry) => {
        if (req.signal?.aborted) throw new AbandonedError(label);
        const timeoutMs = probe ? watch.probeTimeout(opts.timeoutMs) : opts.timeoutMs;
        if (timeoutMs === 0 && watch.last) throw new UpstreamDownError(label, watch.last, watch.age());
        stats.requests++;
        if (retry > 0) stats.retries++;
        const sentAt = opts.now();
        const result = await attempt(req, label, timeoutMs);
        if (result.ok || !isTrouble(result.error)) watch.answered();
        else if (req.read) watch.failed(sentAt, result.error);
        if (result.ok) return result;
        stats[result.counts]++;
        throw result.error;
      },
      {
        policy: opts.backoff,
        sleep: opts.sleep,
        retryable: (error, retry) => {
          const verdict = retryOf(error, req.read, opts.backoff.maxRetries);
          if (verdict === false || !req.read || !isTrouble(error as UpstreamError)) return verdict;
          if (probe || watch.down) throw new UpstreamDownError(label, error as UpstreamError, watch.age());
          const waitMs = retryDelay(opts.backoff, retry, { ms: verdict.retryAfterMs, use: 'floor' });
          const spent = retry >= (verdict.maxRetries ?? opts.backoff.maxRetries);
          return watch.mayRetry(waitMs, spent) ? verdict : false;
        },
        onRetry: ({ retry, waitMs, error, retryAfterMs }) => {
          const e = error as UpstreamError;
          if (retryAfterMs !== null && retryAfterMs > opts.backoff.maxRetryAfterMs)
            throw tooLongToWait(label, e, retryAfterMs, opts.backoff.maxRetryAfterMs);
          opts.onRetry?.({ endpoint: req.endpoint, retry, waitMs, status: e.status, reason: e.reason });
        },
      },
    );
  };

  return {
    async json(req) {
      return (await send({ ...req, accept: 'json' })).json;
    },
    async jsonWithClock(req) {
      const answer = await send({ ...req, accept: 'json' });
      return { json: answer.json, clock: answer.clock ?? null };
    },
    async text(req) {
      return (await send({ ...req, accept: 'text' })).body;
    },
    beginRun: () => watch.reset(),
  };
}

/** Characters of a body from which its reading, decoding and parsing are each a turn of the loop of their own. */
const LARGE_BODY = 64 * 1024;
const utf8 = new TextDecoder();

/**
 * The body as text. A listing page (~200 KB of a district's sessions) read, decoded and parsed in one go held
 * the loop that also answers feed requests for one lump of CPU (bench:feeds' holds, in serve's CPU profile): the
 * loop turns between the three instead. Decoded as `res.text()` does (UTF-8, a BOM dropped).
 */
async function bodyText(res: Response): Promise<string> {
  const bytes = await res.arrayBuffer();
  if (bytes.byteLength < LARGE_BODY) return utf8.decode(bytes);
  await yieldToEventLoop();
  const text = utf8.decode(bytes);
  await yieldToEventLoop();
  return text;
}

/**
 * A 2xx body read as JSON (an empty body reads as `{}`). Invalid JSON is a failed attempt: retryable on a read
 * (most often a body cut short on the way), final on a write, which the service has applied.
 */
function parsed(req: HttpRequest, label: string, text: string, clock: ClockSample | null): Attempt {
  if (text.trim() === '') return { ok: true, body: text, json: {}, clock };
  try {
    return { ok: true, body: text, json: JSON.parse(text), clock };
  } catch {
    const reason = `response body is not JSON (${text.length} characters; cut short?)`;
    return {
      ok: false,
      error: new InvalidResponseError(label, 200, reason, req.read),
      counts: 'errors',
    };
  }
}

/** A 429 not waited out because its Retry-After exceeds the cap: the error says so, and which setting holds it. */
function tooLongToWait(
  label: string,
  error: UpstreamError,
  retryAfterMs: number,
  capMs: number,
): RateLimitedError {
  const s = (ms: number) => `${Math.ceil(ms / 1000)} s`;
  return new RateLimitedError(
    label,
    `${error.reason}; the service asked to retry after ${s(retryAfterMs)}, longer than the ${s(capMs)} rostercal waits (upstream.backoff.maxRetryAfterMs)`,
    retryAfterMs,
  );
}

/** A request its caller gave up on (an unwanted prefetch). Never reaches a caller that is still listening. */
export class AbandonedError extends Error {
  constructor(endpoint: string) {
    super(`${endpoint} abandoned`);
    this.name = 'AbandonedError';
  }
}

/** The human part of an error body, whatever shape the service used. */
function messageOf(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body === null || typeof body !== 'object') return '';
  const o = body as Record<string, unknown>;
  for (const key of ['message', 'error', 'detail', 'title', 'errors']) {
    const v = o[key];
    if (typeof v === 'string' && v !== '') return v;
    if (Array.isArray(v) && v.length > 0) return messageOf(v[0]);
    if (v !== null && typeof v === 'object') {
      const inner = messageOf(v);
      if (inner !== '') return inner;
    }
  }
  return '';
}

/** `ECONNREFUSED`, `ENOTFOUND`…: the code says enough, and carries neither headers nor the token. */
function networkReason(err: unknown): string {
  const cause =
    err instanceof Error ? (err.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (cause && typeof cause.code === 'string') return `network error (${cause.code})`;
  if (cause && typeof cause.message === 'string') return `network error (${cause.message})`;
  return err instanceof Error ? `network error (${err.message})` : 'network error';
}
