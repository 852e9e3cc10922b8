// Outlook (Microsoft 365) provider over Microsoft Graph v1.0, app-only.
// - Everything goes through GraphBatcher: $batch of up to 20, ≤ 4 concurrent requests per mailbox, throttled
//   sub-responses retried after their Retry-After. The SDK's RetryHandler covers the $batch round trip itself
//   (it never looks inside), which is why every create carries a deterministic transactionId.
// - `Prefer: IdType="ImmutableId"` on every request, so event ids survive moves between folders.
// - A dedicated calendar per mailbox (default "School activities"), created if missing
//   (created first: 409 ErrorFolderExists means it is there — then look it up).
// - A mailbox that does not exist or has no Exchange licence is reported and skipped; the others go on.
// - Ownership: extended properties that mark an event as ours (render.ts).

import { ClientSecretCredential } from '@azure/identity';
import {
  AuthenticationHandler,
  type AuthenticationProvider,
  Client,
  type Context,
  HTTPMessageHandler,
  type Middleware,
  RetryHandler,
  RetryHandlerOptions,
} from '@microsoft/microsoft-graph-client';
import { TokenCredentialAuthenticationProvider } from '@microsoft/microsoft-graph-client/authProviders/azureTokenCredentials/index.js';
import type { CalendarEvent } from '../../calendar/types.ts';
import type { OutlookSettings } from '../../config/push-targets.ts';
import type { Instant } from '../../domain/types.ts';
import { scrubSecrets } from '../../log.ts';
import type {
  CalendarRef,
  CalendarSpec,
  EnsureResult,
  ListResult,
  ProviderStats,
  PushProvider,
  RemoteEvent,
  Rendered,
  WriteOp,
  WriteResult,
} from '../provider.ts';
import { type EventIdentity, graphTransactionId, ownerTag, parseSessionTag } from '../stable-ids.ts';
import { GraphBatcher, PREFER_IMMUTABLE_ID, type SubRequest, type SubResponse } from './graph-batcher.ts';
import { HASH_PROP, OWNER_PROP, renderOutlookEvent, SESSION_PROP } from './render.ts';

const GRAPH_SCOPE = 'https://graph.microsoft.com/.default';
const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com';
/** Graph's answers for a mailbox that cannot be used. */
const MAILBOX_PROBLEMS = new Set([
  'ErrorInvalidUser',
  'MailboxNotEnabledForRESTAPI',
  'ResourceNotFound',
  'ErrorMailboxNotFound',
]);

function odataString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

function fromGraphTime(t: { dateTime?: string; timeZone?: string } | undefined): Instant | null {
  if (!t?.dateTime) return null;
  const trimmed = t.dateTime.replace(/(\.\d{3})\d*$/, '$1');
  const ms = Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(trimmed) ? trimmed : `${trimmed}Z`);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

function errorOf(r: SubResponse): { code: string; message: string } {
  const e = r.body?.error;
  // Graph's error text may quote credentials back: redact before it is stored, logged or shown.
  return {
    code: String(e?.code ?? r.status),
    message: scrubSecrets(String(e?.message ?? `HTTP ${r.status}`)),
  };
}

function describe(r: SubResponse): string {
  const e = errorOf(r);
  return `${r.status} ${e.code}: ${e.message}`;
}

function isMailboxProblem(r: SubResponse): boolean {
  return (r.status === 404 || r.status === 403) && MAILBOX_PROBLEMS.has(errorOf(r).code);
}

/** `promise`, or a TimeoutError once `ms` have passed without it settling. */
function withinTime<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(message), { name: 'TimeoutError', code: 'RequestTimeout' })),
      ms,
    );
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

export interface OutlookProviderOptions {
  schoolId: string;
  targetId: string;
  settings: OutlookSettings;
}

export class OutlookProvider implements PushProvider {
  readonly kind = 'outlook' as const;
  readonly #o: OutlookProviderOptions;
  readonly #client: Client;
  readonly #batcher: GraphBatcher;
  readonly #owner: string;
  readonly #root: string;
  readonly #stats: ProviderStats = { requests: 0, retries: 0, throttled: 0 };
  /** Mailboxes found unusable during this run. */
  readonly #badMailboxes = new Map<string, string>();

  constructor(o: OutlookProviderOptions) {
    this.#o = o;
    this.#owner = ownerTag(o.schoolId, o.targetId);
    const base = o.settings.baseUrl.replace(/\/+$/, '');
    this.#root = `${base}/v1.0`;
    this.#client = this.#graphClient(base);
    this.#batcher = new GraphBatcher(
      async (requests) =>
        this.#client.api('/$batch').header('Prefer', PREFER_IMMUTABLE_ID).post({ requests }),
      {
        batchSize: o.settings.batchSize,
        maxConcurrentPerMailbox: o.settings.maxConcurrentPerMailbox,
        parallelBatches: o.settings.parallelBatches,
        backoff: o.settings.backoff,
      },
    );
  }

  #graphClient(base: string): Client {
    const s = this.#o.settings;
    let authProvider: AuthenticationProvider;
    if (s.auth.kind === 'token') {
      const token = s.auth.accessToken;
      authProvider = { getAccessToken: async () => token };
    } else {
      const custom = s.authorityHost.replace(/\/+$/, '') !== DEFAULT_AUTHORITY;
      const credential = new ClientSecretCredential(s.auth.tenantId, s.auth.clientId, s.auth.clientSecret, {
        authorityHost: s.authorityHost,
        // A proxy or emulator is not in Microsoft's instance metadata.
        ...(custom ? { disableInstanceDiscovery: true } : {}),
      });
      // The token request is MSAL's, out of reach of the middleware below: it gets the same time limit here. The
      // abort signal is passed on, and the wait ends at the limit even if MSAL does not honour it.
      const timeoutMs = s.requestTimeoutMs;
      const limited = {
        getToken: (scopes: string | string[], options?: Parameters<typeof credential.getToken>[1]) =>
          withinTime(
            credential.getToken(scopes, { ...options, abortSignal: AbortSignal.timeout(timeoutMs) }),
            timeoutMs,
            `no answer from the token endpoint within ${timeoutMs} ms`,
          ),
      };
      authProvider = new TokenCredentialAuthenticationProvider(limited, { scopes: [GRAPH_SCOPE] });
    }
    const stats = this.#stats;
    const b = s.backoff;
    const retry = new RetryHandler(
      new RetryHandlerOptions(Math.min(180, b.baseMs / 1000), Math.min(10, b.maxRetries), () => {
        stats.retries++;
        return true;
      }),
    );
    let next: Middleware | null = null;
    const timeoutMs = s.requestTimeoutMs;
    // Counts every HTTP round trip (the RetryHandler's repeats included) and the throttling answers, and gives
    // each one its own time limit (answer body included): a request Graph accepts and never answers fails as a
    // TimeoutError, which the batcher retries like a dropped connection (creates carry a transactionId).
    const counter: Middleware = {
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
    const auth = new AuthenticationHandler(authProvider);
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

  stats(): ProviderStats {
    const b = this.#batcher.stats;
    return {
      requests: this.#stats.requests,
      retries: this.#stats.retries + b.retriedItems,
      throttled: this.#stats.throttled + b.throttledItems,
    };
  }

  #call(mailbox: string, req: SubRequest): Promise<SubResponse> {
    return this.#batcher.submit(mailbox, req);
  }

  #user(mailbox: string): string {
    return `/users/${encodeURIComponent(mailbox)}`;
  }

  eventIdFor(): null {
    return null;
  }

  render(ev: CalendarEvent, identity: EventIdentity): Rendered {
    return renderOutlookEvent(ev, identity, this.#owner);
  }

  async #findCalendar(
    mailbox: string,
    name: string,
  ): Promise<{ id: string | null; error: SubResponse | null }> {
    const r = await this.#call(mailbox, {
      method: 'GET',
      url: `${this.#user(mailbox)}/calendars?$filter=${encodeURIComponent(`name eq ${odataString(name)}`)}&$select=id,name`,
    });
    if (r.status !== 200) return { id: null, error: r };
    const found = (r.body?.value ?? []).find((c: { name?: string }) => c.name === name) ?? r.body?.value?.[0];
    return { id: found?.id ?? null, error: null };
  }

  async #ensureOne(spec: CalendarSpec, dryRun: boolean): Promise<EnsureResult> {
    const mailbox = spec.owner;
    if (!mailbox) return { ok: false, kind: 'account', reason: `${spec.key}: no mailbox` };
    if (spec.remoteCalendarId) return { ok: true, remoteCalendarId: spec.remoteCalendarId, created: false };
    const fail = (r: SubResponse): EnsureResult => {
      const unusable = isMailboxProblem(r);
      if (unusable) this.#badMailboxes.set(mailbox, describe(r));
      return {
        ok: false,
        kind: unusable ? 'account' : 'error',
        reason: `${spec.key} mailbox ${mailbox}: ${describe(r)}`,
      };
    };
    if (dryRun) {
      const found = await this.#findCalendar(mailbox, spec.name);
      if (found.error) return fail(found.error);
      return found.id
        ? { ok: true, remoteCalendarId: found.id, created: false }
        : { ok: true, remoteCalendarId: '', created: true };
    }
    // Create first: Graph refuses a second calendar of the same name (409 ErrorFolderExists), so this cannot
    // duplicate, and a new mailbox costs one request instead of a lookup and a create.
    const created = await this.#call(mailbox, {
      method: 'POST',
      url: `${this.#user(mailbox)}/calendars`,
      body: { name: spec.name },
    });
    if (created.status === 201 || created.status === 200) {
      return { ok: true, remoteCalendarId: String(created.body.id), created: true };
    }
    if (created.status === 409 && errorOf(created).code === 'ErrorFolderExists') {
      const found = await this.#findCalendar(mailbox, spec.name);
      if (found.id) return { ok: true, remoteCalendarId: found.id, created: false };
      if (found.error) return fail(found.error);
    }
    return fail(created);
  }

  async ensureCalendars(
    specs: CalendarSpec[],
    opts: { dryRun: boolean },
  ): Promise<Map<string, EnsureResult>> {
    const results = await Promise.all(specs.map((s) => this.#ensureOne(s, opts.dryRun)));
    return new Map(specs.map((s, i) => [s.key, results[i]!]));
  }

  /** A nextLink is absolute; batch items take paths relative to the version root. */
  #relative(link: string): string {
    return link.startsWith(this.#root)
      ? link.slice(this.#root.length)
      : new URL(link).pathname.replace(/^\/v1\.0/, '') + new URL(link).search;
  }

  async #listOne(cal: CalendarRef): Promise<ListResult> {
    const mailbox = cal.owner;
    if (!mailbox) return { ok: false, kind: 'account', reason: 'no mailbox' };
    const filter = `singleValueExtendedProperties/Any(ep: ep/id eq ${odataString(OWNER_PROP)} and ep/value eq ${odataString(this.#owner)})`;
    const expand = `singleValueExtendedProperties($filter=id eq ${odataString(SESSION_PROP)} or id eq ${odataString(HASH_PROP)})`;
    let url: string | null =
      `${this.#user(mailbox)}/calendars/${encodeURIComponent(cal.remoteCalendarId)}/events?` +
      `$filter=${encodeURIComponent(filter)}&$expand=${encodeURIComponent(expand)}&$select=id,start,end&$top=500`;
    const events: RemoteEvent[] = [];
    while (url) {
      const r = await this.#call(mailbox, { method: 'GET', url });
      if (r.status !== 200) {
        if (r.status === 404 && errorOf(r).code === 'ErrorItemNotFound')
          return { ok: false, kind: 'calendar-gone', reason: `calendar not found: ${describe(r)}` };
        return { ok: false, kind: isMailboxProblem(r) ? 'account' : 'error', reason: describe(r) };
      }
      for (const e of r.body?.value ?? []) {
        const props: { id: string; value: string }[] = e.singleValueExtendedProperties ?? [];
        const prop = (id: string) =>
          props.find((p) => p.id.toLowerCase() === id.toLowerCase())?.value ?? null;
        const tag = parseSessionTag(prop(SESSION_PROP));
        events.push({
          remoteEventId: String(e.id),
          calendarKey: tag?.calendarKey ?? null,
          sessionId: tag?.sessionId ?? null,
          hash: prop(HASH_PROP),
          start: fromGraphTime(e.start),
          end: fromGraphTime(e.end),
          live: true,
        });
      }
      const next = r.body?.['@odata.nextLink'];
      url = typeof next === 'string' ? this.#relative(next) : null;
    }
    return { ok: true, events };
  }

  async listOwned(calendars: CalendarRef[]): Promise<Map<string, ListResult>> {
    const results = await Promise.all(calendars.map((c) => this.#listOne(c)));
    return new Map(calendars.map((c, i) => [c.key, results[i]!]));
  }

  async #create(
    op: WriteOp & { kind: 'create' | 'update' },
    mailbox: string,
    generation: string,
  ): Promise<WriteResult> {
    const r = await this.#call(mailbox, {
      method: 'POST',
      url: `${this.#user(mailbox)}/calendars/${encodeURIComponent(op.calendar.remoteCalendarId)}/events`,
      body: { ...(op.rendered.body as object), transactionId: graphTransactionId(op.identity, generation) },
    });
    if (r.status === 201 || r.status === 200) return { ok: true, remoteEventId: String(r.body.id) };
    if (r.status === 404 && errorOf(r).code === 'ErrorItemNotFound')
      return { ok: false, kind: 'calendar-gone', reason: `calendar not found: ${describe(r)}` };
    return this.#failure(r, mailbox);
  }

  #failure(r: SubResponse, mailbox: string): WriteResult {
    const unusable = isMailboxProblem(r);
    if (unusable) this.#badMailboxes.set(mailbox, describe(r));
    return { ok: false, kind: unusable ? 'account' : 'error', reason: describe(r) };
  }

  async #applyOne(op: WriteOp): Promise<WriteResult> {
    const mailbox = op.calendar.owner;
    if (!mailbox) return { ok: false, kind: 'account', reason: 'no mailbox' };
    const bad = this.#badMailboxes.get(mailbox);
    if (bad) return { ok: false, kind: 'account', reason: bad };
    const eventUrl = (id: string) => `${this.#user(mailbox)}/events/${encodeURIComponent(id)}`;
    switch (op.kind) {
      case 'create':
        return this.#create(op, mailbox, op.generation ?? '');
      case 'update': {
        const r = await this.#call(mailbox, {
          method: 'PATCH',
          url: eventUrl(op.remoteEventId),
          body: op.rendered.body,
        });
        if (r.status === 200) return { ok: true, remoteEventId: op.remoteEventId };
        if (r.status === 404 && errorOf(r).code === 'ErrorItemNotFound') {
          // Deleted by hand: create it again, under a transactionId of its own.
          const c = await this.#create(op, mailbox, op.remoteEventId);
          return c.ok ? { ...c, recreated: true } : c;
        }
        return this.#failure(r, mailbox);
      }
      case 'delete': {
        const r = await this.#call(mailbox, { method: 'DELETE', url: eventUrl(op.remoteEventId) });
        if (
          r.status === 204 ||
          r.status === 200 ||
          (r.status === 404 && errorOf(r).code === 'ErrorItemNotFound')
        )
          return { ok: true, remoteEventId: null };
        return this.#failure(r, mailbox);
      }
    }
  }

  async apply(ops: WriteOp[]): Promise<WriteResult[]> {
    return Promise.all(ops.map((op) => this.#applyOne(op)));
  }
}
