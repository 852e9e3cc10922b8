// A fake Microsoft Graph v1.0 (calendars and events of user mailboxes, `$batch`) over TLS with a self-signed
// certificate, plus the Entra token endpoints MSAL uses for the client-credentials grant. The real
// @microsoft/microsoft-graph-client (`baseUrl: fake.url`, `customHosts: [fake.host]`) and @azure/identity
// (`authorityHost: fake.authorityHost`, `disableInstanceDiscovery: true`) talk to it unchanged once the process
// trusts `fake.cert` (trustCertificate() here, NODE_EXTRA_CA_CERTS=fake.caFile in a child process).
//
// What it reproduces, because the engine must cope with it:
// - `$batch` of at most 20 sub-requests; sub-requests run concurrently unless chained with dependsOn (a failed
//   dependency gives 424); each sub-response carries its own status, and throttled ones a Retry-After;
// - at most 4 concurrent requests per mailbox (batch items count): more get 429 MailboxConcurrency;
// - 429/503 with Retry-After (knob), 409 ErrorFolderExists,
//   404 ErrorInvalidUser / MailboxNotEnabledForRESTAPI, extended properties returned only when $expand-ed,
//   `$filter` on singleValueExtendedProperties and on calendar names (anything else: 400), default page size 10
//   with `@odata.nextLink`, unknown event properties rejected with 400;
// - `transactionId` only as Graph documents it (event resource: "a custom identifier specified by a client app for
//   the server to avoid redundant POST operations in case of client retries to create the same event", useful
//   "when low network connectivity causes the client to time out before receiving a response"): a create that
//   repeats one still present in the same calendar answers 201 with that event. Graph promises nothing about other
//   calendars, about events deleted since, or about how long it remembers; the fake therefore de-duplicates only
//   within the calendar, only while the event exists and only for `transactionIdWindowMs`, so the product cannot
//   lean on more than Graph gives (its ownership-tag scan has to do the rest);
// - answers lost after the write was applied (FaultRule `when: 'after-apply'`: a 500/503/504 or a dropped
//   connection after the event exists), the case transactionId exists for.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  type ChaosKnobs,
  defaultKnobs,
  FaultInjector,
  type FaultRule,
  newId,
  readBody,
  requestIdentity,
  seededRandom,
  sendJson,
  sleep,
  stall,
} from './common.ts';
import { createSelfSignedCert } from './tls.ts';

export interface GraphDateTime {
  dateTime: string;
  timeZone: string;
}

export interface FakeGraphEvent {
  id: string;
  createdDateTime: string;
  lastModifiedDateTime: string;
  changeKey: string;
  iCalUId: string;
  subject?: string;
  body?: { contentType: string; content: string };
  start: GraphDateTime;
  end: GraphDateTime;
  location?: Record<string, unknown>;
  showAs?: string;
  categories?: string[];
  isReminderOn?: boolean;
  importance?: string;
  sensitivity?: string;
  transactionId?: string;
  type: 'singleInstance';
  singleValueExtendedProperties: { id: string; value: string }[];
}

export interface FakeGraphCalendar {
  id: string;
  name: string;
  color: string;
  isDefaultCalendar: boolean;
  canEdit: boolean;
  events: Map<string, FakeGraphEvent>;
}

export interface FakeMailbox {
  upn: string;
  id: string;
  calendars: Map<string, FakeGraphCalendar>;
}

export interface FakeGraphKnobs extends ChaosKnobs {
  /** Statuses a throttled request gets (each with Retry-After). */
  throttleStatuses: (429 | 503)[];
  /** Retry-After value in seconds (fractions allowed: the SDK and rostercal honour them; keeps tests fast). */
  retryAfterSeconds: number;
  /** How long each $batch item takes inside the server, in milliseconds. */
  batchItemLatencyMs: number;
  /** Per-mailbox concurrency limit; requests beyond it get 429 MailboxConcurrency. */
  mailboxConcurrency: number;
  /** How long a create's transactionId is remembered (Graph documents no figure); 0: not at all. */
  transactionIdWindowMs: number;
}

export interface FakeGraphStats {
  /** HTTP round trips (a $batch counts once). */
  requests: number;
  batches: number;
  batchItems: number;
  byOperation: Record<string, number>;
  /** Successful event writes (create, patch, delete). */
  writes: number;
  /** Creates answered from the transactionId index instead of creating a second event. */
  deduplicatedCreates: number;
  /** Requests served (writes applied) whose answer was then replaced by an error or a dropped connection. */
  answersLost: number;
  /** Requests left unanswered by a `stall` fault (a $batch counts once per stalled item). */
  stalled: number;
  throttled: number;
  failed: number;
  /** Highest number of requests in flight at once per mailbox (including ones rejected for concurrency). */
  maxConcurrencyPerMailbox: Record<string, number>;
  concurrencyRejections: number;
  /** Mailbox requests sent without `Prefer: IdType="ImmutableId"`. */
  withoutImmutableIdPrefer: number;
}

export interface FakeGraphOptions {
  port?: number;
  seed?: number;
  /** Bearer tokens accepted as-is. */
  tokens?: string[];
  /** App registrations for the client-credentials grant. */
  apps?: { tenant: string; clientId: string; clientSecret: string }[];
  /** When set, only these mailboxes (UPNs) exist; others give 404 ErrorInvalidUser. Default: any exists. */
  mailboxes?: string[];
  /** Mailboxes that exist but have no Exchange licence: 404 MailboxNotEnabledForRESTAPI. */
  unlicensedMailboxes?: string[];
  knobs?: Partial<FakeGraphKnobs>;
}

export interface FakeGraph {
  /** Graph base URL for the SDK (`https://127.0.0.1:PORT`, no version). */
  url: string;
  host: string;
  /** Entra authority host for @azure/identity. */
  authorityHost: string;
  token: string;
  cert: string;
  caFile: string;
  knobs: FakeGraphKnobs;
  stats: FakeGraphStats;
  resetStats(): void;
  mailbox(upn: string): FakeMailbox | undefined;
  mailboxes(): FakeMailbox[];
  /** Events of the named calendar of a mailbox ([] if either is missing). */
  events(upn: string, calendarName: string): FakeGraphEvent[];
  close(): Promise<void>;
}

/** An after-apply fault with `drop`: the connection carrying the answer is closed without one. */
class DroppedConnection extends Error {}

/** A fault with `stall`: the request is accepted and never answered (its connection stays open). */
class Stalled extends Error {}

class GraphHttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

interface SubResult {
  status: number;
  headers: Record<string, string>;
  body?: unknown;
}

interface Ctx {
  method: string;
  /** Path after /v1.0, with query. */
  url: string;
  headers: Record<string, string>;
  body: unknown;
  batchItem: boolean;
  /** Gets the operation's FaultInjector identity when its answer is a real one (not an injected fault). */
  served: string[];
}

const EVENT_PROPS = new Set([
  'subject',
  'body',
  'start',
  'end',
  'location',
  'showAs',
  'categories',
  'isReminderOn',
  'importance',
  'sensitivity',
  'transactionId',
  'singleValueExtendedProperties',
  'reminderMinutesBeforeStart',
]);
const EXT_PROP_ID = /^String \{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\} Name \S+$/i;
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** An injected fault as Graph words it. */
function faultError(rule: FaultRule): GraphHttpError {
  const retry: Record<string, string> =
    rule.retryAfterSeconds !== undefined ? { 'Retry-After': String(rule.retryAfterSeconds) } : {};
  switch (rule.status) {
    case 401:
      return new GraphHttpError(
        401,
        'InvalidAuthenticationToken',
        'Access token has expired or is not yet valid.',
      );
    case 403:
      return new GraphHttpError(
        403,
        'ErrorAccessDenied',
        'Access is denied. Check credentials and try again.',
      );
    case 429:
      return new GraphHttpError(
        429,
        'TooManyRequests',
        'Too many requests. Please retry after some time.',
        retry,
      );
    case 503:
      return new GraphHttpError(503, 'ServiceUnavailable', 'Service unavailable.', retry);
    case 504:
      return new GraphHttpError(504, 'UnknownError', 'Gateway timeout.', retry);
    default:
      return new GraphHttpError(500, 'InternalServerError', 'An internal server error occurred.');
  }
}

function graphTime(iso: string): string {
  return iso.replace(/\.\d{3}Z$|Z$/, '').concat('.0000000');
}

function instantOf(t: GraphDateTime | undefined): number {
  if (!t) return Number.NaN;
  const s = t.dateTime.replace(/(\.\d{3})\d*$/, '$1');
  return t.timeZone === 'UTC' || t.timeZone === 'Etc/UTC' ? Date.parse(`${s}Z`) : Date.parse(s);
}

function unquote(s: string): string {
  return s.replace(/''/g, "'");
}

/** FaultInjector's identity of a Graph operation (top level or a $batch item): method, path and query, body. */
function operationIdentity(method: string, url: string, body: unknown): string {
  return requestIdentity(
    method.toUpperCase(),
    url.startsWith('/') ? url : `/${url}`,
    JSON.stringify(body ?? null),
  );
}

/** The identities of a $batch's items (none when its body is not a batch). */
function batchIdentities(raw: Buffer): string[] {
  let requests: unknown;
  try {
    requests = (JSON.parse(raw.toString()) as { requests?: unknown } | null)?.requests;
  } catch {
    return [];
  }
  if (!Array.isArray(requests)) return [];
  return requests.map((r: unknown) => {
    const item = (r ?? {}) as { method?: unknown; url?: unknown; body?: unknown };
    return operationIdentity(String(item.method ?? ''), String(item.url ?? ''), item.body);
  });
}

export async function startFakeGraph(opts: FakeGraphOptions = {}): Promise<FakeGraph> {
  const random = seededRandom(opts.seed ?? 1);
  const staticTokens = new Set(opts.tokens ?? ['fake-graph-token']);
  const token = [...staticTokens][0] ?? 'fake-graph-token';
  const issued = new Set<string>();
  const apps = opts.apps ?? [];
  const known = opts.mailboxes ? new Set(opts.mailboxes.map((m) => m.toLowerCase())) : null;
  const unlicensed = new Set((opts.unlicensedMailboxes ?? []).map((m) => m.toLowerCase()));
  const knobs: FakeGraphKnobs = {
    ...defaultKnobs(),
    throttleStatuses: [429, 503],
    retryAfterSeconds: 0.05,
    batchItemLatencyMs: 1,
    mailboxConcurrency: 4,
    transactionIdWindowMs: 10 * 60_000,
    ...opts.knobs,
  };
  const faults = new FaultInjector(knobs, random);
  const emptyStats = (): FakeGraphStats => ({
    requests: 0,
    batches: 0,
    batchItems: 0,
    byOperation: {},
    writes: 0,
    deduplicatedCreates: 0,
    answersLost: 0,
    stalled: 0,
    throttled: 0,
    failed: 0,
    maxConcurrencyPerMailbox: {},
    concurrencyRejections: 0,
    withoutImmutableIdPrefer: 0,
  });
  let stats = emptyStats();
  const mailboxes = new Map<string, FakeMailbox>();
  // `${upn}\n${calendarId}\n${tx}` → the event it created, and when.
  const txIndex = new Map<string, { eventId: string; at: number }>();
  const inFlight = new Map<string, number>();
  let changeCounter = 0;
  const graphId = () => `AAkALg${newId(random, 40, ID_ALPHABET)}`;

  const tlsCert = createSelfSignedCert();
  let base = '';

  function count(op: string) {
    stats.byOperation[op] = (stats.byOperation[op] ?? 0) + 1;
  }

  function mailboxFor(ref: string): FakeMailbox {
    const key = ref.toLowerCase();
    const byId = [...mailboxes.values()].find((m) => m.id === ref);
    if (byId) return byId;
    if ((known && !known.has(key) && !unlicensed.has(key)) || !key.includes('@'))
      throw new GraphHttpError(404, 'ErrorInvalidUser', `The requested user '${ref}' is invalid.`);
    if (unlicensed.has(key))
      throw new GraphHttpError(
        404,
        'MailboxNotEnabledForRESTAPI',
        'The mailbox is either inactive, soft-deleted, or is hosted on-premise.',
      );
    let mb = mailboxes.get(key);
    if (!mb) {
      const cal: FakeGraphCalendar = {
        id: graphId(),
        name: 'Calendar',
        color: 'auto',
        isDefaultCalendar: true,
        canEdit: true,
        events: new Map(),
      };
      mb = { upn: key, id: randomUUID(), calendars: new Map([[cal.id, cal]]) };
      mailboxes.set(key, mb);
    }
    return mb;
  }

  function publicCalendar(c: FakeGraphCalendar) {
    const { events: _e, ...rest } = c;
    return rest;
  }

  function publicEvent(e: FakeGraphEvent, expandIds: Set<string> | null, select: string[] | null) {
    const { singleValueExtendedProperties, ...rest } = e;
    let out: Record<string, unknown> = { '@odata.etag': `W/"${e.changeKey}"`, ...rest };
    if (select) {
      const picked: Record<string, unknown> = { '@odata.etag': out['@odata.etag'], id: e.id };
      for (const k of select) if (k in out) picked[k] = out[k];
      out = picked;
    }
    if (expandIds) {
      const props = singleValueExtendedProperties.filter(
        (p) => expandIds.size === 0 || expandIds.has(p.id.toLowerCase()),
      );
      // Graph omits the collection when nothing matched the expand filter.
      if (props.length > 0) out.singleValueExtendedProperties = props;
    }
    return out;
  }

  function parseExpand(q: URLSearchParams): Set<string> | null {
    const expand = q.get('$expand');
    if (!expand) return null;
    const m = /^singleValueExtendedProperties(?:\(\$filter=(.*)\))?$/i.exec(expand.trim());
    if (!m) throw new GraphHttpError(400, 'BadRequest', `Parsing OData Select and Expand failed: ${expand}`);
    const ids = new Set<string>();
    if (m[1]) {
      const parts = m[1].split(/\s+or\s+/i);
      for (const part of parts) {
        const p = /^id eq '((?:[^']|'')*)'$/i.exec(part.trim());
        if (!p) throw new GraphHttpError(400, 'BadRequest', 'Invalid $expand filter.');
        ids.add(unquote(p[1]!).toLowerCase());
      }
    }
    return ids;
  }

  function validateEventBody(body: unknown, creating: boolean): Record<string, unknown> {
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw new GraphHttpError(400, 'RequestBodyRead', 'Empty Payload. JSON content expected.');
    const b = body as Record<string, unknown>;
    for (const k of Object.keys(b)) {
      if (!EVENT_PROPS.has(k))
        throw new GraphHttpError(
          400,
          'RequestBodyRead',
          `The property '${k}' does not exist on type 'microsoft.graph.event'. Make sure to only use property names that are defined by the type or mark the type as open type.`,
        );
    }
    for (const k of ['start', 'end'] as const) {
      const t = b[k] as GraphDateTime | undefined;
      if (t === undefined) {
        if (creating)
          throw new GraphHttpError(
            400,
            'ErrorInvalidRequest',
            `Your request can't be completed. ${k} is required.`,
          );
        continue;
      }
      if (typeof t.dateTime !== 'string' || typeof t.timeZone !== 'string' || Number.isNaN(instantOf(t)))
        throw new GraphHttpError(400, 'ErrorInvalidRequest', `Invalid ${k} dateTime/timeZone.`);
    }
    const props = b.singleValueExtendedProperties;
    if (props !== undefined) {
      if (!Array.isArray(props))
        throw new GraphHttpError(400, 'RequestBodyRead', 'Invalid extended properties.');
      for (const p of props as { id?: unknown; value?: unknown }[]) {
        if (typeof p.id !== 'string' || !EXT_PROP_ID.test(p.id) || typeof p.value !== 'string')
          throw new GraphHttpError(400, 'ErrorInvalidProperty', 'The extended property id is not valid.');
      }
    }
    if (
      b.showAs !== undefined &&
      !['free', 'tentative', 'busy', 'oof', 'workingElsewhere', 'unknown'].includes(String(b.showAs))
    )
      throw new GraphHttpError(
        400,
        'RequestBodyRead',
        `Cannot convert the literal '${String(b.showAs)}' to the expected type 'microsoft.graph.freeBusyStatus'.`,
      );
    return b;
  }

  function normaliseTime(t: GraphDateTime): GraphDateTime {
    const ms = instantOf(t);
    return t.timeZone === 'UTC' ? { dateTime: graphTime(new Date(ms).toISOString()), timeZone: 'UTC' } : t;
  }

  function applyEventFields(event: FakeGraphEvent, b: Record<string, unknown>) {
    for (const [k, v] of Object.entries(b)) {
      if (k === 'singleValueExtendedProperties') {
        for (const p of v as { id: string; value: string }[]) {
          const existing = event.singleValueExtendedProperties.find(
            (x) => x.id.toLowerCase() === p.id.toLowerCase(),
          );
          if (existing) existing.value = p.value;
          else event.singleValueExtendedProperties.push({ id: p.id, value: p.value });
        }
      } else if (k === 'start' || k === 'end') {
        event[k] = normaliseTime(v as GraphDateTime);
      } else if (k !== 'transactionId') {
        (event as unknown as Record<string, unknown>)[k] = structuredClone(v);
      }
    }
    event.changeKey = `ck${++changeCounter}`;
    event.lastModifiedDateTime = new Date().toISOString();
  }

  function listEventsFilter(filter: string | null): ((e: FakeGraphEvent) => boolean) | null {
    if (!filter) return null;
    const m =
      /^singleValueExtendedProperties\/any\((\w+):\s*\1\/id eq '((?:[^']|'')*)' and \1\/value eq '((?:[^']|'')*)'\)$/i.exec(
        filter.trim(),
      );
    if (!m)
      throw new GraphHttpError(
        400,
        'ErrorInvalidUrlQueryFilter',
        'The query filter contains one or more invalid nodes.',
      );
    const id = unquote(m[2]!).toLowerCase();
    const value = unquote(m[3]!);
    return (e) => e.singleValueExtendedProperties.some((p) => p.id.toLowerCase() === id && p.value === value);
  }

  function page<T>(items: T[], q: URLSearchParams, path: string, defaultTop: number) {
    const top = Math.min(Number(q.get('$top') ?? defaultTop) || defaultTop, 1000);
    const skip = Number(q.get('$skip') ?? 0) || 0;
    const slice = items.slice(skip, skip + top);
    const result: Record<string, unknown> = {
      '@odata.context': `${base}/v1.0/$metadata#${path}`,
      value: slice,
    };
    if (skip + top < items.length) {
      const next = new URLSearchParams(q);
      next.set('$skip', String(skip + top));
      result['@odata.nextLink'] = `${base}/v1.0${path}?${next.toString().replace(/\+/g, '%20')}`;
    }
    return result;
  }

  async function mailboxOperation(
    ctx: Ctx,
    mb: FakeMailbox,
    rest: string[],
    q: URLSearchParams,
    path: string,
  ): Promise<SubResult> {
    const { method } = ctx;
    if (rest[0] === 'calendars' && rest.length === 1) {
      if (method === 'GET') {
        count('GET calendars.list');
        let cals = [...mb.calendars.values()];
        const filter = q.get('$filter');
        if (filter) {
          const m = /^name eq '((?:[^']|'')*)'$/i.exec(filter.trim());
          if (!m)
            throw new GraphHttpError(
              400,
              'ErrorInvalidUrlQueryFilter',
              'The query filter contains one or more invalid nodes.',
            );
          const name = unquote(m[1]!);
          cals = cals.filter((c) => c.name === name);
        }
        return { status: 200, headers: {}, body: page(cals.map(publicCalendar), q, path, 10) };
      }
      if (method === 'POST') {
        count('POST calendars.create');
        const b = ctx.body as { name?: unknown } | null;
        if (!b || typeof b.name !== 'string' || b.name.trim() === '')
          throw new GraphHttpError(400, 'ErrorInvalidRequest', 'The calendar name is required.');
        if ([...mb.calendars.values()].some((c) => c.name.toLowerCase() === (b.name as string).toLowerCase()))
          throw new GraphHttpError(
            409,
            'ErrorFolderExists',
            'A folder with the specified name already exists.',
          );
        const cal: FakeGraphCalendar = {
          id: graphId(),
          name: b.name,
          color: 'auto',
          isDefaultCalendar: false,
          canEdit: true,
          events: new Map(),
        };
        mb.calendars.set(cal.id, cal);
        return { status: 201, headers: {}, body: publicCalendar(cal) };
      }
      throw new GraphHttpError(405, 'ErrorInvalidRequest', 'Method not allowed.');
    }

    // Resolve the calendar (explicit, or the default one for /users/{u}/events/...).
    let cal: FakeGraphCalendar | undefined;
    let eventSeg: string[];
    if (rest[0] === 'calendars') {
      cal = mb.calendars.get(rest[1]!);
      if (!cal)
        throw new GraphHttpError(
          404,
          'ErrorItemNotFound',
          'The specified object was not found in the store.',
        );
      if (rest.length === 2) {
        if (method === 'GET') {
          count('GET calendars.get');
          return { status: 200, headers: {}, body: publicCalendar(cal) };
        }
        if (method === 'DELETE') {
          count('DELETE calendars.delete');
          mb.calendars.delete(cal.id);
          return { status: 204, headers: {} };
        }
        throw new GraphHttpError(405, 'ErrorInvalidRequest', 'Method not allowed.');
      }
      eventSeg = rest.slice(2);
    } else if (rest[0] === 'events') {
      eventSeg = rest;
    } else {
      throw new GraphHttpError(400, 'BadRequest', `Resource not found for the segment '${rest[0]}'.`);
    }
    if (eventSeg[0] !== 'events')
      throw new GraphHttpError(400, 'BadRequest', `Resource not found for the segment '${eventSeg[0]}'.`);

    if (eventSeg.length === 1) {
      const target = cal ?? [...mb.calendars.values()].find((c) => c.isDefaultCalendar)!;
      if (method === 'GET') {
        count('GET events.list');
        const filter = listEventsFilter(q.get('$filter'));
        const expand = parseExpand(q);
        const select =
          q
            .get('$select')
            ?.split(',')
            .map((s) => s.trim()) ?? null;
        let items = knobs.emptyListings ? [] : [...target.events.values()];
        if (filter) items = items.filter(filter);
        items.sort((a, b) => instantOf(a.start) - instantOf(b.start) || a.id.localeCompare(b.id));
        return {
          status: 200,
          headers: {},
          body: page(
            items.map((e) => publicEvent(e, expand, select)),
            q,
            path,
            10,
          ),
        };
      }
      if (method === 'POST') {
        count('POST events.create');
        const b = validateEventBody(ctx.body, true);
        const tx = typeof b.transactionId === 'string' ? b.transactionId : undefined;
        const txKey = tx ? `${mb.upn}\n${target.id}\n${tx}` : null;
        if (txKey) {
          const hit = txIndex.get(txKey);
          const fresh = hit !== undefined && Date.now() - hit.at < knobs.transactionIdWindowMs;
          const existing = fresh ? target.events.get(hit.eventId) : undefined;
          if (existing) {
            stats.deduplicatedCreates++;
            return { status: 201, headers: {}, body: publicEvent(existing, null, null) };
          }
        }
        const now = new Date().toISOString();
        const event: FakeGraphEvent = {
          id: graphId(),
          createdDateTime: now,
          lastModifiedDateTime: now,
          changeKey: '',
          iCalUId: `040000008200E00074C5B7101A82E008${newId(random, 32, '0123456789ABCDEF')}`,
          start: b.start as GraphDateTime,
          end: b.end as GraphDateTime,
          type: 'singleInstance',
          singleValueExtendedProperties: [],
          ...(tx ? { transactionId: tx } : {}),
        };
        applyEventFields(event, b);
        target.events.set(event.id, event);
        if (txKey) txIndex.set(txKey, { eventId: event.id, at: Date.now() });
        stats.writes++;
        return { status: 201, headers: {}, body: publicEvent(event, null, null) };
      }
      throw new GraphHttpError(405, 'ErrorInvalidRequest', 'Method not allowed.');
    }

    if (eventSeg.length !== 2) throw new GraphHttpError(400, 'BadRequest', 'Unsupported segment.');
    const eventId = eventSeg[1]!;
    const owner = cal ?? [...mb.calendars.values()].find((c) => c.events.has(eventId));
    const event = owner?.events.get(eventId);
    if (!owner || !event)
      throw new GraphHttpError(404, 'ErrorItemNotFound', 'The specified object was not found in the store.');
    if (method === 'GET') {
      count('GET events.get');
      return { status: 200, headers: {}, body: publicEvent(event, parseExpand(q), null) };
    }
    if (method === 'PATCH') {
      count('PATCH events.update');
      const b = validateEventBody(ctx.body, false);
      if (b.transactionId !== undefined)
        throw new GraphHttpError(400, 'ErrorInvalidRequest', 'transactionId is read-only.');
      applyEventFields(event, b);
      stats.writes++;
      return { status: 200, headers: {}, body: publicEvent(event, null, null) };
    }
    if (method === 'DELETE') {
      count('DELETE events.delete');
      owner.events.delete(eventId);
      stats.writes++;
      return { status: 204, headers: {} };
    }
    throw new GraphHttpError(405, 'ErrorInvalidRequest', 'Method not allowed.');
  }

  /** One Graph operation (a top-level request or a $batch item). */
  async function execute(ctx: Ctx): Promise<SubResult> {
    const u = new URL(ctx.url, 'https://fake');
    const path = decodeURIComponent(u.pathname);
    const seg = path.split('/').slice(1);
    const identity = operationIdentity(ctx.method, ctx.url, ctx.body);
    const fault = faults.fault(`${ctx.method} ${path}`, [identity]);
    if (fault) {
      stats.failed++;
      if (fault.stall) {
        stats.stalled++;
        throw new Stalled(`${ctx.method} ${path}`);
      }
      throw faultError(fault);
    }
    if (faults.throttles([identity])) {
      stats.throttled++;
      const status = knobs.throttleStatuses[Math.floor(random() * knobs.throttleStatuses.length)] ?? 429;
      throw new GraphHttpError(
        status,
        status === 429 ? 'TooManyRequests' : 'ServiceUnavailable',
        status === 429 ? 'Too many requests. Please retry after some time.' : 'Service unavailable.',
        { 'Retry-After': String(knobs.retryAfterSeconds) },
      );
    }
    if (seg[0] !== 'users' || !seg[1])
      throw new GraphHttpError(400, 'BadRequest', `Resource not found for the segment '${seg[0] ?? ''}'.`);
    const mb = mailboxFor(seg[1]);
    if (!/IdType="ImmutableId"/i.test(ctx.headers.prefer ?? '')) stats.withoutImmutableIdPrefer++;
    const running = (inFlight.get(mb.upn) ?? 0) + 1;
    inFlight.set(mb.upn, running);
    stats.maxConcurrencyPerMailbox[mb.upn] = Math.max(stats.maxConcurrencyPerMailbox[mb.upn] ?? 0, running);
    try {
      if (running > knobs.mailboxConcurrency) {
        stats.concurrencyRejections++;
        stats.throttled++;
        throw new GraphHttpError(
          429,
          'ApplicationThrottled',
          'Application is over its MailboxConcurrency limit.',
          {
            'Retry-After': String(knobs.retryAfterSeconds),
          },
        );
      }
      await sleep(ctx.batchItem ? knobs.batchItemLatencyMs : knobs.latencyMs);
      const result = await mailboxOperation(ctx, mb, seg.slice(2), u.searchParams, path);
      loseAnswer(`${ctx.method} ${path}`, result, [identity]);
      ctx.served.push(identity);
      return result;
    } finally {
      inFlight.set(mb.upn, (inFlight.get(mb.upn) ?? 1) - 1);
    }
  }

  /** After a request was served: an after-apply fault replaces its (successful) answer. */
  function loseAnswer(request: string, result: SubResult, identities: readonly string[]): void {
    if (result.status >= 400) return;
    const lost = faults.fault(request, identities, 'after-apply');
    if (!lost) return;
    stats.failed++;
    stats.answersLost++;
    if (lost.stall) stats.stalled++;
    throw lost.stall ? new Stalled(request) : lost.drop ? new DroppedConnection(request) : faultError(lost);
  }

  function errorResult(err: unknown): SubResult {
    const e =
      err instanceof GraphHttpError ? err : new GraphHttpError(500, 'InternalServerError', String(err));
    return {
      status: e.status,
      headers: { 'Content-Type': 'application/json', ...e.headers },
      body: {
        error: {
          code: e.code,
          message: e.message,
          innerError: {
            date: new Date().toISOString(),
            'request-id': randomUUID(),
            'client-request-id': randomUUID(),
          },
        },
      },
    };
  }

  /** A $batch; `dropped` when one of its items' answers is to be lost with the whole connection. */
  async function runBatch(
    body: unknown,
    outerHeaders: Record<string, string>,
    served: string[],
  ): Promise<SubResult & { dropped?: boolean; stalled?: boolean }> {
    const requests = (body as { requests?: unknown } | null)?.requests;
    if (!Array.isArray(requests) || requests.length === 0)
      throw new GraphHttpError(400, 'BadRequest', 'Invalid batch payload format.');
    if (requests.length > 20)
      throw new GraphHttpError(
        400,
        'BadRequest',
        'Batch request limit exceeded. The maximum number of requests is 20.',
      );
    const ids = new Set<string>();
    for (const r of requests as Record<string, unknown>[]) {
      if (typeof r.id !== 'string' || ids.has(r.id))
        throw new GraphHttpError(400, 'BadRequest', 'Batch request ids must be unique strings.');
      if (typeof r.url !== 'string' || typeof r.method !== 'string')
        throw new GraphHttpError(400, 'BadRequest', 'Invalid batch payload format.');
      const headers = Object.fromEntries(
        Object.entries((r.headers as Record<string, string> | undefined) ?? {}).map(([k, v]) => [
          k.toLowerCase(),
          v,
        ]),
      );
      if (r.body !== undefined && !headers['content-type'])
        throw new GraphHttpError(
          400,
          'BadRequest',
          'Content-Type header must be specified for request with body.',
        );
      for (const d of (r.dependsOn as string[] | undefined) ?? [])
        if (!ids.has(d))
          throw new GraphHttpError(
            400,
            'BadRequest',
            `dependsOn refers to an unknown or later request '${d}'.`,
          );
      ids.add(r.id);
    }
    stats.batches++;
    stats.batchItems += requests.length;
    const done = new Map<string, Promise<SubResult>>();
    const responses: (SubResult & { id: string })[] = [];
    let dropped = false;
    let stalled = false;
    for (const r of requests as {
      id: string;
      method: string;
      url: string;
      headers?: Record<string, string>;
      body?: unknown;
      dependsOn?: string[];
    }[]) {
      const deps = (r.dependsOn ?? []).map((d) => done.get(d)!);
      const p = (async (): Promise<SubResult> => {
        const results = await Promise.all(deps);
        if (results.some((x) => x.status >= 400))
          return errorResult(
            new GraphHttpError(424, 'FailedDependency', 'A request this request depends on failed.'),
          );
        const headers = Object.fromEntries(
          Object.entries(r.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]),
        );
        if (outerHeaders.authorization && !headers.authorization)
          headers.authorization = outerHeaders.authorization;
        const url = r.url.startsWith('/') ? r.url : `/${r.url}`;
        try {
          return await execute({
            method: r.method.toUpperCase(),
            url,
            headers,
            body: r.body,
            batchItem: true,
            served,
          });
        } catch (err) {
          if (err instanceof DroppedConnection) dropped = true;
          if (err instanceof Stalled) stalled = true;
          return errorResult(err);
        }
      })();
      done.set(r.id, p);
      void p.then((res) => responses.push({ id: r.id, ...res }));
    }
    await Promise.all(done.values());
    await new Promise((resolve) => setImmediate(resolve));
    return {
      status: 200,
      headers: {},
      dropped,
      stalled,
      body: {
        responses: responses.map((r) => ({
          id: r.id,
          status: r.status,
          headers: { 'Content-Type': 'application/json', ...r.headers },
          ...(r.body !== undefined ? { body: r.body } : {}),
        })),
      },
    };
  }

  async function tokenEndpoints(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    const seg = url.pathname.split('/').slice(1);
    if (seg[0] === 'common' && seg[1] === 'discovery' && seg[2] === 'instance') {
      sendJson(res, 200, {
        tenant_discovery_endpoint: `${base}/common/v2.0/.well-known/openid-configuration`,
        'api-version': '1.1',
        metadata: [{ preferred_network: url.host, preferred_cache: url.host, aliases: [url.host] }],
      });
      return true;
    }
    const tenant = seg[0];
    if (!tenant) return false;
    if (seg[1] === 'v2.0' && seg[2] === '.well-known' && seg[3] === 'openid-configuration') {
      sendJson(res, 200, {
        token_endpoint: `${base}/${tenant}/oauth2/v2.0/token`,
        authorization_endpoint: `${base}/${tenant}/oauth2/v2.0/authorize`,
        end_session_endpoint: `${base}/${tenant}/oauth2/v2.0/logout`,
        issuer: `${base}/${tenant}/v2.0`,
        jwks_uri: `${base}/${tenant}/discovery/v2.0/keys`,
        response_modes_supported: ['query', 'fragment', 'form_post'],
        token_endpoint_auth_methods_supported: [
          'client_secret_post',
          'private_key_jwt',
          'client_secret_basic',
        ],
        scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      });
      return true;
    }
    if (seg[1] === 'oauth2' && seg[2] === 'v2.0' && seg[3] === 'token' && req.method === 'POST') {
      const form = new URLSearchParams((await readBody(req)).toString());
      const app = apps.find(
        (a) =>
          a.tenant === tenant &&
          a.clientId === form.get('client_id') &&
          a.clientSecret === form.get('client_secret'),
      );
      if (form.get('grant_type') !== 'client_credentials' || !app) {
        sendJson(res, 401, {
          error: 'invalid_client',
          error_description: 'AADSTS7000215: Invalid client secret provided.',
          error_codes: [7000215],
        });
        return true;
      }
      const access = `eyJ0eXAiOiJKV1QifQ.fake-${randomUUID()}`;
      issued.add(access);
      sendJson(res, 200, {
        token_type: 'Bearer',
        expires_in: 3599,
        ext_expires_in: 3599,
        access_token: access,
      });
      return true;
    }
    return false;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', base);
    stats.requests++;
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
    );
    let result: SubResult;
    try {
      if (knobs.failAfter !== null && stats.requests > knobs.failAfter) {
        stats.failed++;
        if (knobs.failMode === 'reset') {
          req.socket.destroy();
          return;
        }
        throw new GraphHttpError(500, 'InternalServerError', 'Simulated failure.');
      }
      // Faults of the token grant and of `$batch` itself here (a $batch's count against each of its items, its
      // body read first to know them); every operation's (top level or batch item) in execute().
      const api = url.pathname.startsWith('/v1.0/');
      const isBatch = url.pathname === '/v1.0/$batch';
      const raw = api ? await readBody(req) : Buffer.alloc(0);
      const batchItems = isBatch ? batchIdentities(raw) : [];
      if (!api || isBatch) {
        const fault = faults.fault(`${req.method} ${url.pathname}`, isBatch ? batchItems : [url.pathname]);
        if (fault) {
          stats.failed++;
          if (fault.stall) {
            stats.stalled++;
            throw new Stalled(`${req.method} ${url.pathname}`);
          }
          if (url.pathname.startsWith('/v1.0/')) throw faultError(fault);
          if (!req.readableEnded) await readBody(req).catch(() => undefined);
          sendJson(res, fault.status, {
            error: fault.status === 401 ? 'invalid_client' : 'temporarily_unavailable',
            error_description: `AADSTS90000: injected ${fault.status}.`,
          });
          return;
        }
      }
      if (await tokenEndpoints(req, res, url)) return;
      if (!url.pathname.startsWith('/v1.0/')) throw new GraphHttpError(400, 'BadRequest', 'Invalid version.');
      const auth = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
      if (!auth || !(staticTokens.has(auth) || issued.has(auth)))
        throw new GraphHttpError(
          401,
          'InvalidAuthenticationToken',
          auth ? 'Access token validation failure.' : 'Access token is empty.',
        );
      let body: unknown;
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw.toString());
        } catch {
          throw new GraphHttpError(400, 'RequestBodyRead', 'Invalid JSON payload.');
        }
      }
      const rel = url.pathname.slice('/v1.0'.length) + url.search;
      if (url.pathname === '/v1.0/$batch') {
        if (req.method !== 'POST') throw new GraphHttpError(405, 'BadRequest', 'Method not allowed.');
        await sleep(knobs.latencyMs);
        if (faults.throttles(batchItems)) {
          stats.throttled++;
          throw new GraphHttpError(429, 'TooManyRequests', 'Too many requests.', {
            'Retry-After': String(knobs.retryAfterSeconds),
          });
        }
        const served: string[] = [];
        const batch = await runBatch(body, headers, served);
        if (batch.stalled) throw new Stalled('POST /v1.0/$batch');
        if (batch.dropped) throw new DroppedConnection('POST /v1.0/$batch');
        loseAnswer('POST /v1.0/$batch', batch, batchItems);
        // The items' answers go out now, inside the batch's.
        faults.answered(served);
        result = batch;
      } else {
        const served: string[] = [];
        result = await execute({
          method: req.method ?? 'GET',
          url: rel,
          headers,
          body,
          batchItem: false,
          served,
        });
        faults.answered(served);
      }
    } catch (err) {
      if (err instanceof DroppedConnection) {
        req.socket.destroy();
        return;
      }
      if (err instanceof Stalled) {
        await stall(res);
        return;
      }
      if (!req.readableEnded) await readBody(req).catch(() => undefined);
      result = errorResult(err);
    }
    const { 'Content-Type': _ct, ...extra } = result.headers;
    sendJson(res, result.status, result.body, extra);
  }

  const server: Server = createServer({ key: tlsCert.key, cert: tlsCert.cert }, (req, res) => {
    void handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  base = `https://127.0.0.1:${port}`;

  return {
    url: base,
    host: '127.0.0.1',
    authorityHost: base,
    token,
    cert: tlsCert.cert,
    caFile: tlsCert.caFile,
    knobs,
    get stats() {
      return stats;
    },
    resetStats() {
      stats = emptyStats();
    },
    mailbox: (upn) => mailboxes.get(upn.toLowerCase()),
    mailboxes: () => [...mailboxes.values()],
    events(upn, calendarName) {
      const mb = mailboxes.get(upn.toLowerCase());
      const cal = mb ? [...mb.calendars.values()].find((c) => c.name === calendarName) : undefined;
      return cal ? [...cal.events.values()] : [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          tlsCert.dispose();
          resolve();
        });
      }),
  };
}
