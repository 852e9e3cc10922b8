// Microsoft Graph access for one target: one client whose middleware counts, times and retries every round trip,
// every request through GraphBatcher ($batch, per-mailbox concurrency, throttled items retried), and Graph's
// answers read as the push run acts on them (an unusable mailbox, a gone calendar, anything else).
import {
  AuthenticationHandler,
  Client,
  type Context,
  HTTPMessageHandler,
  type Middleware,
  RetryHandler,
  RetryHandlerOptions,
} from '@microsoft/microsoft-graph-client';
import type { OutlookSettings } from '../../config/push-targets.ts';
import { scrubSecrets } from '../../log.ts';
import type { ProviderStats, PushFailure } from '../provider.ts';
import { graphAuthProvider } from './auth.ts';
import { GraphBatcher, PREFER_IMMUTABLE_ID, type SubRequest, type SubResponse } from './batch.ts';

/** Graph's answers for a mailbox that cannot be used. */
const MAILBOX_PROBLEMS = new Set([
  'ErrorInvalidUser',
  'MailboxNotEnabledForRESTAPI',
  'ResourceNotFound',
  'ErrorMailboxNotFound',
]);

export function odataString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

export function errorOf(r: SubResponse): { code: string; message: string } {
  const e = r.body?.error;
  // Graph's error text may quote credentials back: redact before it is stored, logged or shown.
  return {
    code: String(e?.code ?? r.status),
    message: scrubSecrets(String(e?.message ?? `HTTP ${r.status}`)),
  };
}

export function describe(r: SubResponse): string {
  const e = errorOf(r);
  return `${r.status} ${e.code}: ${e.message}`;
}

export function isMailboxProblem(r: SubResponse): boolean {
  return (r.status === 404 || r.status === 403) && MAILBOX_PROBLEMS.has(errorOf(r).code);
}

/** 404 ErrorItemNotFound: the calendar (or event) the request named is not there. */
export function isItemGone(r: SubResponse): boolean {
  return r.status === 404 && errorOf(r).code === 'ErrorItemNotFound';
}

/** The middleware that counts every round trip and throttling answer, and gives each its own time limit. */
function counting(stats: ProviderStats, timeoutMs: number): Middleware {
  let next: Middleware | null = null;
  return {
    async execute(context: Context) {
      stats.requests++;
      context.options = { ...context.options, signal: AbortSignal.timeout(timeoutMs) };
      try {
        await next!.execute(context);
      } catch (err) {
        if ((err as Error | null)?.name === 'TimeoutError')
          throw Object.assign(new Error(`no answer from Graph within ${timeoutMs} ms`), {
            name: 'TimeoutError',
            code: 'RequestTimeout',
          });
        throw err;
      }
      const status = context.response?.status;
      if (status === 429 || status === 503 || status === 504) stats.throttled++;
    },
    setNext(m: Middleware) {
      next = m;
    },
  };
}

function graphClient(s: OutlookSettings, base: string, stats: ProviderStats): Client {
  const b = s.backoff;
  const retry = new RetryHandler(
    new RetryHandlerOptions(Math.min(180, b.baseMs / 1000), Math.min(10, b.maxRetries), () => {
      stats.retries++;
      return true;
    }),
  );
  // Counts every HTTP round trip (the RetryHandler's repeats included) and the throttling answers, and gives
  // each one its own time limit (answer body included): a request Graph accepts and never answers fails as a
  // TimeoutError, which the batcher retries like a dropped connection (creates carry a transactionId).
  const counter = counting(stats, s.requestTimeoutMs);
  const auth = new AuthenticationHandler(graphAuthProvider(s));
  auth.setNext(retry);
  retry.setNext(counter);
  counter.setNext!(new HTTPMessageHandler());
  return Client.initWithMiddleware({
    middleware: auth,
    baseUrl: base,
    defaultVersion: 'v1.0',
    // The SDK hands the token only to Graph's own hosts and these.
    customHosts: new Set([new URL(base).hostname]),
  });
}

export class OutlookClients {
  readonly settings: OutlookSettings;
  readonly #batcher: GraphBatcher;
  /** The version root every nextLink starts with. */
  readonly #root: string;
  readonly #stats: ProviderStats = { requests: 0, retries: 0, throttled: 0 };
  /** Mailboxes found unusable during this run: nothing more is sent to them. */
  readonly badMailboxes = new Map<string, string>();

  constructor(settings: OutlookSettings) {
    this.settings = settings;
    const base = settings.baseUrl.replace(/\/+$/, '');
    this.#root = `${base}/v1.0`;
    const client = graphClient(settings, base, this.#stats);
    this.#batcher = new GraphBatcher(
      async (requests) => client.api('/$batch').header('Prefer', PREFER_IMMUTABLE_ID).post({ requests }),
      {
        batchSize: settings.batchSize,
        maxConcurrentPerMailbox: settings.maxConcurrentPerMailbox,
        parallelBatches: settings.parallelBatches,
        backoff: settings.backoff,
      },
    );
  }

  stats(): ProviderStats {
    const b = this.#batcher.stats;
    return {
      requests: this.#stats.requests,
      retries: this.#stats.retries + b.retriedItems,
      throttled: this.#stats.throttled + b.throttledItems,
    };
  }

  call(mailbox: string, req: SubRequest): Promise<SubResponse> {
    return this.#batcher.submit(mailbox, req);
  }

  user(mailbox: string): string {
    return `/users/${encodeURIComponent(mailbox)}`;
  }

  /** A nextLink is absolute; batch items take paths relative to the version root. */
  relative(link: string): string {
    return link.startsWith(this.#root)
      ? link.slice(this.#root.length)
      : new URL(link).pathname.replace(/^\/v1\.0/, '') + new URL(link).search;
  }

  /** A failed answer as the run acts on it; an unusable mailbox is remembered, and nothing more is sent to it. */
  failure(r: SubResponse, mailbox: string, reason = describe(r)): PushFailure<'account' | 'error'> {
    const unusable = isMailboxProblem(r);
    if (unusable) this.badMailboxes.set(mailbox, describe(r));
    return { ok: false, kind: unusable ? 'account' : 'error', reason };
  }
}
