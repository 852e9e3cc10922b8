// A fake Google Calendar API v3: an HTTP server speaking the real paths, query parameters, status codes and
// error bodies of the operations rostercal uses, keeping calendars in memory. The real `@googleapis/calendar`
// client talks to it unchanged (`rootUrl: fake.url`, an OAuth2 client with
// `setCredentials({ access_token: fake.token })`), and it also serves the service-account JWT-bearer token
// grant at `fake.tokenUrl`.
//
// What it reproduces, because the engine must cope with it:
// - client-chosen event ids must be base32hex (`[a-v0-9]`, 5–1024 chars), else 400 invalid;
// - deleted events linger with `status: cancelled`; inserting their id again gives 409 duplicate; deleting them
//   again gives 410 deleted; `showDeleted=true` lists them;
// - `privateExtendedProperty=key=value` filters (repeatable, all must match), timeMin/timeMax, paging;
// - throttling as 403 rateLimitExceeded / userRateLimitExceeded and 429, quotaExceeded per calendar;
// - stalled connections (FaultRule `stall`): a request (a batch part stalls its whole batch) accepted and never
//   answered, before it is served or (`when: 'after-apply'`) after the write happened.
import { createVerify, randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
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

/** A fault with `stall`: the request is accepted and never answered (its connection stays open). */
class Stalled extends Error {}

/** A response that keeps what is written to it (a batch part's answer, or one held back). */
function capturingResponse(): {
  captured: { status: number; headers: Record<string, string>; text: string; headersSent: boolean };
  res: ServerResponse;
} {
  const captured = { status: 0, headers: {} as Record<string, string>, text: '', headersSent: false };
  const res = {
    get headersSent() {
      return captured.headersSent;
    },
    destroyed: false,
    writeHead(status: number, headers?: Record<string, string>) {
      captured.status = status;
      captured.headers = headers ?? {};
      captured.headersSent = true;
      return res;
    },
    end(t?: string) {
      captured.text = t ?? '';
    },
  } as unknown as ServerResponse;
  return { captured, res };
}

export interface GoogleEventTime {
  dateTime?: string;
  date?: string;
  timeZone?: string;
}

export interface FakeGoogleEvent {
  kind: 'calendar#event';
  id: string;
  etag: string;
  status: 'confirmed' | 'tentative' | 'cancelled';
  htmlLink: string;
  created: string;
  updated: string;
  summary?: string;
  description?: string;
  location?: string;
  colorId?: string;
  transparency?: 'opaque' | 'transparent';
  visibility?: string;
  start: GoogleEventTime;
  end: GoogleEventTime;
  iCalUID: string;
  sequence: number;
  extendedProperties?: { private?: Record<string, string>; shared?: Record<string, string> };
  source?: { url: string; title?: string };
  reminders?: { useDefault: boolean };
}

export interface FakeGoogleCalendar {
  kind: 'calendar#calendar';
  id: string;
  etag: string;
  summary: string;
  description?: string;
  timeZone: string;
  /** Principal that created it (its calendarList holds it). */
  owner: string;
  acl: { id: string; role: string; scope: { type: string; value?: string } }[];
  events: Map<string, FakeGoogleEvent>;
}

export type GoogleThrottleKind = 'rateLimitExceeded' | 'userRateLimitExceeded' | '429';

export interface FakeGoogleKnobs extends ChaosKnobs {
  /** Which throttling answers to mix when throttleRate fires. */
  throttleKinds: GoogleThrottleKind[];
  /** Calendars (ids) answering every request with 403 quotaExceeded; '*' for all. */
  quotaExceeded: Set<string>;
  /**
   * Barriers: a request (or batch part) whose `METHOD /path` matches waits for `release` before it is served, and
   * calls `reached` when it arrives. Orders a test by the product's own requests instead of by sleeps.
   */
  holds: { match: RegExp; reached?: (request: string) => void; release: Promise<void> }[];
}

export interface FakeGoogleStats {
  requests: number;
  /** Requests per "METHOD operation", e.g. `POST events.insert`. */
  byOperation: Record<string, number>;
  /** Successful event writes (insert, patch, update, delete). */
  writes: number;
  throttled: number;
  failed: number;
  /** Requests left unanswered by a `stall` fault. */
  stalled: number;
  /** Batch round trips and the requests they carried. */
  batches: number;
  batchItems: number;
  /** Concurrent requests in flight, highest seen. */
  maxInFlight: number;
}

export interface FakeGoogleOptions {
  port?: number;
  seed?: number;
  /** Bearer tokens accepted as-is (a static access token stands in for credentials); principal 'static'. */
  tokens?: string[];
  /** Service accounts allowed to use the JWT-bearer grant at /token (signature verified with the key). */
  serviceAccounts?: { clientEmail: string; publicKeyPem: string }[];
  /** Delegation subjects Google does not know (the grant answers invalid_grant). */
  unknownUsers?: string[];
  knobs?: Partial<FakeGoogleKnobs>;
}

export interface FakeGoogle {
  /** rootUrl for the Calendar client (ends with '/'). */
  url: string;
  /** OAuth token endpoint for the JWT-bearer grant. */
  tokenUrl: string;
  /** The default static token. */
  token: string;
  knobs: FakeGoogleKnobs;
  stats: FakeGoogleStats;
  resetStats(): void;
  calendars(): FakeGoogleCalendar[];
  calendar(id: string): FakeGoogleCalendar | undefined;
  /** Deletes a calendar as a person would in Google Calendar (it disappears with its events). */
  deleteCalendar(id: string): boolean;
  /** Live (not cancelled) events of a calendar. */
  liveEvents(calendarId: string): FakeGoogleEvent[];
  /** Principals that obtained tokens through the JWT grant (sub or iss). */
  grantedPrincipals(): string[];
  close(): Promise<void>;
}

const BASE32HEX = /^[a-v0-9]{5,1024}$/;
const ID_ALPHABET = 'abcdefghijklmnopqrstuv0123456789';

class HttpError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly domain: string;
  constructor(status: number, reason: string, message: string, domain = 'global') {
    super(message);
    this.status = status;
    this.reason = reason;
    this.domain = domain;
  }
}

function errorBody(status: number, reason: string, message: string, domain: string) {
  return { error: { code: status, message, errors: [{ domain, reason, message }] } };
}

/** An injected fault as Google words it: [status, body, headers]. */
function faultReply(rule: FaultRule): [number, unknown, Record<string, string>] {
  const retry: Record<string, string> =
    rule.retryAfterSeconds !== undefined ? { 'Retry-After': String(rule.retryAfterSeconds) } : {};
  switch (rule.status) {
    case 401:
      return [401, errorBody(401, 'authError', 'Invalid Credentials', 'global'), {}];
    case 403:
      return [
        403,
        rule.reason
          ? errorBody(403, rule.reason, 'Rate Limit Exceeded', 'usageLimits')
          : errorBody(
              403,
              'insufficientPermissions',
              'Request had insufficient authentication scopes.',
              'global',
            ),
        {},
      ];
    case 429:
      return [429, errorBody(429, 'rateLimitExceeded', 'Too Many Requests', 'usageLimits'), retry];
    case 503:
      return [503, errorBody(503, 'backendError', 'Backend Error', 'global'), retry];
    default:
      return [500, errorBody(500, 'backendError', 'Backend Error', 'global'), {}];
  }
}

function instantOf(t: GoogleEventTime | undefined): number {
  if (!t) return Number.NaN;
  if (t.dateTime) return Date.parse(t.dateTime);
  if (t.date) return Date.parse(`${t.date}T00:00:00Z`);
  return Number.NaN;
}

function deepMerge(target: Record<string, unknown>, patch: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(patch)) {
    const current = target[key];
    if (
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      current !== null &&
      typeof current === 'object' &&
      !Array.isArray(current)
    ) {
      deepMerge(current as Record<string, unknown>, value as Record<string, unknown>);
    } else if (value === null) {
      delete target[key];
    } else {
      target[key] = structuredClone(value);
    }
  }
}

/** One request of a batch, as its part of the multipart body spells it. */
interface BatchPart {
  contentId: string;
  method: string;
  target: string;
  headers: Record<string, string>;
  body: string;
  /** FaultInjector's identity: the part's request, whatever its Content-ID in this batch. */
  identity: string;
}

function batchParts(text: string, boundary: string): BatchPart[] {
  const parts = text
    .split(`--${boundary}`)
    .slice(1)
    .filter((p) => !p.startsWith('--'));
  return parts.map((part) => {
    const [partHead = '', ...restBlocks] = part.replace(/^\r?\n/, '').split(/\r?\n\r?\n/);
    const contentId = /Content-ID:\s*<([^>]*)>/i.exec(partHead)?.[1] ?? '';
    const httpHead = restBlocks.shift() ?? '';
    const body = restBlocks.join('\r\n\r\n').replace(/\r?\n$/, '');
    const [requestLine = '', ...headerLines] = httpHead.split(/\r?\n/);
    const [method = 'GET', target = '/'] = requestLine.split(' ');
    const headers: Record<string, string> = {};
    for (const h of headerLines) {
      const i = h.indexOf(':');
      if (i > 0) headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
    }
    return { contentId, method, target, headers, body, identity: requestIdentity(method, target, body) };
  });
}

export async function startFakeGoogle(opts: FakeGoogleOptions = {}): Promise<FakeGoogle> {
  const random = seededRandom(opts.seed ?? 1);
  const staticTokens = new Set(opts.tokens ?? ['fake-google-token']);
  const token = [...staticTokens][0] ?? 'fake-google-token';
  const serviceAccounts = new Map((opts.serviceAccounts ?? []).map((s) => [s.clientEmail, s.publicKeyPem]));
  const issued = new Map<string, string>(); // access token -> principal
  const knobs: FakeGoogleKnobs = {
    ...defaultKnobs(),
    throttleKinds: ['rateLimitExceeded', 'userRateLimitExceeded', '429'],
    quotaExceeded: new Set(),
    holds: [],
    ...opts.knobs,
  };
  const faults = new FaultInjector(knobs, random);
  const emptyStats = (): FakeGoogleStats => ({
    requests: 0,
    byOperation: {},
    writes: 0,
    throttled: 0,
    failed: 0,
    stalled: 0,
    batches: 0,
    batchItems: 0,
    maxInFlight: 0,
  });
  let stats = emptyStats();
  let inFlight = 0;
  let etagCounter = 0;
  const calendars = new Map<string, FakeGoogleCalendar>();
  const nextEtag = () => `"${++etagCounter}"`;

  function primaryOf(principal: string): FakeGoogleCalendar {
    let cal = calendars.get(principal);
    if (!cal) {
      cal = {
        kind: 'calendar#calendar',
        id: principal,
        etag: nextEtag(),
        summary: principal,
        timeZone: 'UTC',
        owner: principal,
        acl: [],
        events: new Map(),
      };
      calendars.set(principal, cal);
    }
    return cal;
  }

  function calendarFor(principal: string, rawId: string): FakeGoogleCalendar {
    const id = rawId === 'primary' ? primaryOf(principal).id : rawId;
    const cal = calendars.get(id);
    if (!cal) throw new HttpError(404, 'notFound', 'Not Found');
    if (knobs.quotaExceeded.has(id) || knobs.quotaExceeded.has('*'))
      throw new HttpError(403, 'quotaExceeded', 'Calendar usage limits exceeded.', 'usageLimits');
    return cal;
  }

  function count(op: string) {
    stats.byOperation[op] = (stats.byOperation[op] ?? 0) + 1;
  }

  function publicCalendar(cal: FakeGoogleCalendar) {
    const { events: _events, owner: _owner, acl: _acl, ...rest } = cal;
    return rest;
  }

  function validateEventBody(body: Record<string, unknown>, partial: boolean) {
    for (const key of ['start', 'end'] as const) {
      const t = body[key] as GoogleEventTime | undefined;
      if (t === undefined) {
        if (partial) continue;
        throw new HttpError(400, 'required', 'Missing end time.');
      }
      if (Number.isNaN(instantOf(t))) throw new HttpError(400, 'invalid', 'Bad Request');
    }
    const status = body.status;
    if (status !== undefined && !['confirmed', 'tentative', 'cancelled'].includes(String(status)))
      throw new HttpError(400, 'invalid', 'Invalid value for: status');
  }

  function makeEvent(id: string, body: Record<string, unknown>): FakeGoogleEvent {
    const now = new Date().toISOString();
    return {
      ...(structuredClone(body) as Partial<FakeGoogleEvent>),
      kind: 'calendar#event',
      id,
      etag: nextEtag(),
      status: (body.status as FakeGoogleEvent['status'] | undefined) ?? 'confirmed',
      htmlLink: `https://www.google.com/calendar/event?eid=${id}`,
      created: now,
      updated: now,
      iCalUID: `${id}@google.com`,
      sequence: 0,
      start: body.start as GoogleEventTime,
      end: body.end as GoogleEventTime,
      reminders: (body.reminders as FakeGoogleEvent['reminders']) ?? { useDefault: true },
    };
  }

  function listEvents(cal: FakeGoogleCalendar, q: URLSearchParams) {
    const showDeleted = q.get('showDeleted') === 'true';
    const timeMin = q.get('timeMin') ? Date.parse(q.get('timeMin')!) : null;
    const timeMax = q.get('timeMax') ? Date.parse(q.get('timeMax')!) : null;
    if ((timeMin !== null && Number.isNaN(timeMin)) || (timeMax !== null && Number.isNaN(timeMax)))
      throw new HttpError(400, 'badRequest', 'Bad Request');
    const filters = q.getAll('privateExtendedProperty').map((f) => {
      const eq = f.indexOf('=');
      if (eq <= 0) throw new HttpError(400, 'invalid', 'Invalid privateExtendedProperty filter');
      return [f.slice(0, eq), f.slice(eq + 1)] as const;
    });
    const maxResults = Math.min(Number(q.get('maxResults') ?? 250) || 250, 2500);
    const offset = q.get('pageToken') ? Number(Buffer.from(q.get('pageToken')!, 'base64url').toString()) : 0;
    if (Number.isNaN(offset)) throw new HttpError(400, 'invalid', 'Invalid page token value.');
    let items = knobs.emptyListings ? [] : [...cal.events.values()];
    items = items.filter((e) => {
      if (!showDeleted && e.status === 'cancelled') return false;
      // Google: an event is in the window when it ends after timeMin and starts before timeMax.
      if (timeMin !== null && instantOf(e.end) <= timeMin) return false;
      if (timeMax !== null && instantOf(e.start) >= timeMax) return false;
      for (const [k, v] of filters) if (e.extendedProperties?.private?.[k] !== v) return false;
      return true;
    });
    items.sort((a, b) => instantOf(a.start) - instantOf(b.start) || a.id.localeCompare(b.id));
    const page = items.slice(offset, offset + maxResults);
    const more = offset + maxResults < items.length;
    return {
      kind: 'calendar#events',
      etag: nextEtag(),
      summary: cal.summary,
      updated: new Date().toISOString(),
      timeZone: cal.timeZone,
      accessRole: 'owner',
      items: page,
      ...(more ? { nextPageToken: Buffer.from(String(offset + maxResults)).toString('base64url') } : {}),
    };
  }

  function principalOf(req: IncomingMessage): string {
    const auth = req.headers.authorization ?? '';
    const m = /^Bearer (.+)$/.exec(auth);
    const t = m?.[1];
    if (t && staticTokens.has(t)) return 'static';
    const p = t ? issued.get(t) : undefined;
    if (!p) {
      throw new HttpError(
        401,
        'authError',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      );
    }
    return p;
  }

  async function tokenGrant(req: IncomingMessage, res: ServerResponse) {
    const form = new URLSearchParams((await readBody(req)).toString());
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      sendJson(res, 400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type' });
      return;
    }
    const [h, p, s] = (form.get('assertion') ?? '').split('.');
    let claims: { iss?: string; sub?: string; aud?: string; exp?: number; scope?: string } = {};
    try {
      claims = JSON.parse(Buffer.from(p ?? '', 'base64url').toString());
    } catch {
      // fall through: rejected below
    }
    const key = claims.iss ? serviceAccounts.get(claims.iss) : undefined;
    const ok =
      key !== undefined &&
      h !== undefined &&
      s !== undefined &&
      createVerify('RSA-SHA256').update(`${h}.${p}`).verify(key, Buffer.from(s, 'base64url'));
    if (!ok || !claims.scope || (claims.exp ?? 0) * 1000 < Date.now()) {
      sendJson(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
      return;
    }
    if (claims.sub && (opts.unknownUsers ?? []).includes(claims.sub)) {
      sendJson(res, 400, { error: 'invalid_grant', error_description: 'Invalid email or User ID' });
      return;
    }
    const access = `ya29.fake-${randomUUID()}`;
    issued.set(access, claims.sub ?? claims.iss!);
    sendJson(res, 200, { access_token: access, expires_in: 3599, token_type: 'Bearer' });
  }

  async function route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const path = url.pathname;
    const principal = principalOf(req);
    const raw = method === 'GET' || method === 'DELETE' ? Buffer.alloc(0) : await readBody(req);
    let body: Record<string, unknown> = {};
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString());
      } catch {
        throw new HttpError(400, 'parseError', 'Parse Error');
      }
    }
    const seg = path.split('/').slice(1).map(decodeURIComponent); // calendar, v3, ...
    if (seg[0] !== 'calendar' || seg[1] !== 'v3') throw new HttpError(404, 'notFound', 'Not Found');
    const rest = seg.slice(2);

    // calendarList
    if (rest[0] === 'users' && rest[1] === 'me' && rest[2] === 'calendarList' && rest.length === 3) {
      if (method !== 'GET') throw new HttpError(405, 'methodNotAllowed', 'Method Not Allowed');
      count('GET calendarList.list');
      primaryOf(principal);
      const mine = [...calendars.values()].filter((c) => c.owner === principal);
      const maxResults = Math.min(Number(url.searchParams.get('maxResults') ?? 100) || 100, 250);
      const offset = Number(url.searchParams.get('pageToken') ?? 0) || 0;
      const page = mine.slice(offset, offset + maxResults);
      sendJson(res, 200, {
        kind: 'calendar#calendarList',
        etag: nextEtag(),
        items: page.map((c) => ({
          ...publicCalendar(c),
          kind: 'calendar#calendarListEntry',
          accessRole: 'owner',
          primary: c.id === principal ? true : undefined,
        })),
        ...(offset + maxResults < mine.length ? { nextPageToken: String(offset + maxResults) } : {}),
      });
      return;
    }
    if (rest[0] !== 'calendars') throw new HttpError(404, 'notFound', 'Not Found');

    // calendars.insert
    if (rest.length === 1) {
      if (method !== 'POST') throw new HttpError(405, 'methodNotAllowed', 'Method Not Allowed');
      count('POST calendars.insert');
      if (typeof body.summary !== 'string' || body.summary === '')
        throw new HttpError(400, 'required', 'Missing title.');
      const id = `${newId(random, 26, ID_ALPHABET)}@group.calendar.google.com`;
      const cal: FakeGoogleCalendar = {
        kind: 'calendar#calendar',
        id,
        etag: nextEtag(),
        summary: body.summary,
        ...(typeof body.description === 'string' ? { description: body.description } : {}),
        timeZone: typeof body.timeZone === 'string' ? body.timeZone : 'UTC',
        owner: principal,
        acl: [{ id: `user:${principal}`, role: 'owner', scope: { type: 'user', value: principal } }],
        events: new Map(),
      };
      calendars.set(id, cal);
      sendJson(res, 200, publicCalendar(cal));
      return;
    }
    const cal = calendarFor(principal, rest[1]!);

    if (rest.length === 2) {
      if (method === 'GET') {
        count('GET calendars.get');
        sendJson(res, 200, publicCalendar(cal));
      } else if (method === 'DELETE') {
        count('DELETE calendars.delete');
        calendars.delete(cal.id);
        sendJson(res, 204, undefined);
      } else if (method === 'PATCH') {
        count('PATCH calendars.patch');
        for (const k of ['summary', 'description', 'timeZone'] as const)
          if (typeof body[k] === 'string') cal[k] = body[k] as string;
        cal.etag = nextEtag();
        sendJson(res, 200, publicCalendar(cal));
      } else throw new HttpError(405, 'methodNotAllowed', 'Method Not Allowed');
      return;
    }

    if (rest[2] === 'acl' && rest.length === 3) {
      if (method === 'GET') {
        count('GET acl.list');
        sendJson(res, 200, {
          kind: 'calendar#acl',
          items: cal.acl.map((a) => ({ kind: 'calendar#aclRule', ...a })),
        });
        return;
      }
      if (method !== 'POST') throw new HttpError(405, 'methodNotAllowed', 'Method Not Allowed');
      count('POST acl.insert');
      const scope = body.scope as { type?: string; value?: string } | undefined;
      const role = body.role;
      if (!scope?.type || !['default', 'user', 'group', 'domain'].includes(scope.type))
        throw new HttpError(400, 'invalid', 'Invalid scope type.');
      if (scope.type !== 'default' && !scope.value)
        throw new HttpError(400, 'required', 'Missing scope value.');
      if (typeof role !== 'string' || !['none', 'freeBusyReader', 'reader', 'writer', 'owner'].includes(role))
        throw new HttpError(400, 'invalid', 'Invalid role.');
      const id = scope.type === 'default' ? 'default' : `${scope.type}:${scope.value}`;
      const rule = { id, role, scope: { type: scope.type, ...(scope.value ? { value: scope.value } : {}) } };
      cal.acl = cal.acl.filter((a) => a.id !== id).concat(rule);
      sendJson(res, 200, { kind: 'calendar#aclRule', etag: nextEtag(), ...rule });
      return;
    }

    if (rest[2] === 'acl' && rest.length === 4) {
      if (method !== 'DELETE') throw new HttpError(405, 'methodNotAllowed', 'Method Not Allowed');
      count('DELETE acl.delete');
      const before = cal.acl.length;
      cal.acl = cal.acl.filter((a) => a.id !== rest[3]);
      if (cal.acl.length === before) throw new HttpError(404, 'notFound', 'Not Found');
      sendJson(res, 204, undefined);
      return;
    }

    if (rest[2] !== 'events') throw new HttpError(404, 'notFound', 'Not Found');
    if (rest.length === 3) {
      if (method === 'GET') {
        count('GET events.list');
        sendJson(res, 200, listEvents(cal, url.searchParams));
        return;
      }
      if (method !== 'POST') throw new HttpError(405, 'methodNotAllowed', 'Method Not Allowed');
      count('POST events.insert');
      validateEventBody(body, false);
      let id = typeof body.id === 'string' ? body.id : undefined;
      if (id !== undefined && !BASE32HEX.test(id))
        throw new HttpError(400, 'invalid', 'Invalid resource id value.');
      if (id !== undefined && cal.events.has(id))
        throw new HttpError(409, 'duplicate', 'The requested identifier already exists.');
      id ??= newId(random, 26, ID_ALPHABET);
      const event = makeEvent(id, body);
      cal.events.set(id, event);
      stats.writes++;
      sendJson(res, 200, event);
      return;
    }

    const eventId = rest[3]!;
    if (rest.length !== 4) throw new HttpError(404, 'notFound', 'Not Found');
    const event = cal.events.get(eventId);
    if (method === 'GET') {
      count('GET events.get');
      if (!event) throw new HttpError(404, 'notFound', 'Not Found');
      sendJson(res, 200, event);
      return;
    }
    if (method === 'DELETE') {
      count('DELETE events.delete');
      if (!event) throw new HttpError(404, 'notFound', 'Not Found');
      if (event.status === 'cancelled') throw new HttpError(410, 'deleted', 'Resource has been deleted');
      event.status = 'cancelled';
      event.updated = new Date().toISOString();
      event.etag = nextEtag();
      stats.writes++;
      sendJson(res, 204, undefined);
      return;
    }
    if (method === 'PATCH' || method === 'PUT') {
      count(method === 'PATCH' ? 'PATCH events.patch' : 'PUT events.update');
      if (!event) throw new HttpError(404, 'notFound', 'Not Found');
      validateEventBody(body, method === 'PATCH');
      if (body.id !== undefined && body.id !== event.id) throw new HttpError(400, 'invalid', 'Invalid id.');
      const keep = {
        kind: event.kind,
        id: event.id,
        created: event.created,
        htmlLink: event.htmlLink,
        iCalUID: event.iCalUID,
        sequence: event.sequence,
      };
      let next: FakeGoogleEvent;
      if (method === 'PATCH') {
        next = structuredClone(event);
        deepMerge(next as unknown as Record<string, unknown>, body);
      } else {
        next = { ...(structuredClone(body) as unknown as FakeGoogleEvent), status: 'confirmed' };
        if (typeof body.status === 'string') next.status = body.status as FakeGoogleEvent['status'];
      }
      Object.assign(next, keep, { etag: nextEtag(), updated: new Date().toISOString() });
      next.sequence = event.sequence + 1;
      cal.events.set(event.id, next);
      stats.writes++;
      sendJson(res, 200, next);
      return;
    }
    throw new HttpError(405, 'methodNotAllowed', 'Method Not Allowed');
  }

  /**
   * One API request (top level or a batch part), `identity` its FaultInjector identity: throttling knobs, then the
   * route, errors as Google words them. `served` gets the identity when the answer is a real one.
   */
  async function serve(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    identity: string,
    served: string[],
  ): Promise<void> {
    try {
      const request = `${req.method ?? 'GET'} ${url.pathname}`;
      for (const hold of knobs.holds)
        if (hold.match.test(request)) {
          hold.reached?.(request);
          await hold.release;
        }
      const fault = faultFor(req, url, [identity]);
      if (fault) {
        await readBody(req);
        sendJson(res, ...fault);
        return;
      }
      if (knobs.faults.some((r) => r.when === 'after-apply')) {
        await routeThenMaybeStall(req, res, url, request, identity);
        served.push(identity);
        return;
      }
      if (faults.throttles([identity])) {
        stats.throttled++;
        const kind = knobs.throttleKinds[Math.floor(random() * knobs.throttleKinds.length)] ?? '429';
        await readBody(req);
        if (kind === '429')
          sendJson(res, 429, errorBody(429, 'rateLimitExceeded', 'Too Many Requests', 'usageLimits'));
        else if (kind === 'rateLimitExceeded')
          sendJson(res, 403, errorBody(403, 'rateLimitExceeded', 'Rate Limit Exceeded', 'usageLimits'));
        else
          sendJson(
            res,
            403,
            errorBody(403, 'userRateLimitExceeded', 'User Rate Limit Exceeded', 'usageLimits'),
          );
        return;
      }
      served.push(identity);
      await route(req, res, url);
    } catch (err) {
      if (err instanceof Stalled) throw err;
      if (err instanceof HttpError) {
        if (!req.readableEnded) await readBody(req).catch(() => undefined);
        sendJson(res, err.status, errorBody(err.status, err.reason, err.message, err.domain));
      } else {
        sendJson(res, 500, errorBody(500, 'backendError', String(err), 'global'));
      }
    }
  }

  /**
   * Serves the request into a buffer; an after-apply `stall` rule then keeps the (successful) answer back, else
   * it is passed on. Throttling knobs do not apply here (a fault of its own is being tested).
   */
  async function routeThenMaybeStall(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    request: string,
    identity: string,
  ): Promise<void> {
    const { captured, res: buffer } = capturingResponse();
    try {
      await route(req, buffer, url);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      if (!req.readableEnded) await readBody(req).catch(() => undefined);
      sendJson(res, err.status, errorBody(err.status, err.reason, err.message, err.domain));
      return;
    }
    if (captured.status < 400) {
      const lost = faults.fault(request, [identity], 'after-apply');
      if (lost?.stall) {
        stats.failed++;
        stats.stalled++;
        throw new Stalled(request);
      }
    }
    res.writeHead(captured.status, captured.headers);
    res.end(captured.text || undefined);
  }

  /**
   * `POST /batch/calendar/v3`, multipart/mixed: each part an `application/http` request with a Content-ID; the
   * answer holds one `application/http` response per part, `Content-ID: <response-…>`. At most 50 parts. A fault
   * of the batch itself counts against each of its parts (FaultInjector).
   */
  async function batch(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const boundary = /boundary="?([^";]+)"?/i.exec(req.headers['content-type'] ?? '')?.[1];
    const text = (await readBody(req)).toString();
    const parts = boundary ? batchParts(text, boundary) : [];
    const fault = faultFor(
      req,
      url,
      parts.map((p) => p.identity),
    );
    if (fault) {
      sendJson(res, ...fault);
      return;
    }
    if (!boundary) {
      sendJson(res, 400, errorBody(400, 'badRequest', 'Missing multipart boundary.', 'global'));
      return;
    }
    try {
      principalOf(req);
    } catch (err) {
      const e = err as HttpError;
      sendJson(res, e.status, errorBody(e.status, e.reason, e.message, e.domain));
      return;
    }
    if (parts.length > 50) {
      sendJson(res, 400, errorBody(400, 'badRequest', 'Too many requests in a batch: at most 50.', 'global'));
      return;
    }
    stats.batches++;
    stats.batchItems += parts.length;
    const out: string[] = [];
    const served: string[] = [];
    const respBoundary = `batch_${newId(random, 16, ID_ALPHABET)}`;
    for (const { contentId, method, target, headers, body, identity } of parts) {
      const partReq = Readable.from(body ? [Buffer.from(body)] : []) as unknown as IncomingMessage;
      Object.assign(partReq, {
        method,
        url: target,
        headers: { authorization: req.headers.authorization ?? '', ...headers },
      });
      const { captured, res: partRes } = capturingResponse();
      await serve(partReq, partRes, new URL(target, 'http://fake'), identity, served);
      out.push(
        `--${respBoundary}\r\nContent-Type: application/http\r\nContent-ID: <response-${contentId}>\r\n\r\n` +
          `HTTP/1.1 ${captured.status} ${STATUS_CODES[captured.status] ?? ''}\r\n` +
          (captured.text
            ? `Content-Type: application/json; charset=UTF-8\r\n\r\n${captured.text}\r\n`
            : '\r\n'),
      );
    }
    const payload = `${out.join('')}--${respBoundary}--\r\n`;
    res.writeHead(200, { 'content-type': `multipart/mixed; boundary=${respBoundary}` });
    res.end(payload);
    faults.answered(served);
  }

  /** The injected fault's reply when one fires for this request, which carries `identities`. */
  function faultFor(
    req: IncomingMessage,
    url: URL,
    identities: readonly string[],
  ): [number, unknown, Record<string, string>] | null {
    const rule = faults.fault(`${req.method ?? 'GET'} ${url.pathname}`, identities);
    if (!rule) return null;
    stats.failed++;
    if (rule.stall) {
      stats.stalled++;
      throw new Stalled(`${req.method ?? 'GET'} ${url.pathname}`);
    }
    return faultReply(rule);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    stats.requests++;
    inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, inFlight);
    try {
      await sleep(knobs.latencyMs);
      if (knobs.failAfter !== null && stats.requests > knobs.failAfter) {
        stats.failed++;
        if (knobs.failMode === 'reset') {
          req.socket.destroy();
          return;
        }
        sendJson(res, 503, errorBody(503, 'backendError', 'Backend Error', 'global'));
        return;
      }
      // Faults of the token grant here (its identity the endpoint: each assertion is signed anew), of the batch
      // endpoint in batch(), every API request's (top level or batch part) in serve().
      if (url.pathname === '/token' && req.method === 'POST') {
        const fault = faultFor(req, url, ['POST /token']);
        if (fault) {
          await readBody(req);
          sendJson(res, ...fault);
          return;
        }
        await tokenGrant(req, res);
        return;
      }
      if (url.pathname === '/batch/calendar/v3' && req.method === 'POST') {
        await batch(req, res, url);
        return;
      }
      // The body is read here, to know the request by it, and handed on unchanged.
      const body = await readBody(req);
      const replay = Readable.from(body.length ? [body] : []) as unknown as IncomingMessage;
      Object.assign(replay, { method: req.method, url: req.url, headers: req.headers });
      const identity = requestIdentity(req.method ?? 'GET', url.pathname + url.search, body.toString());
      const served: string[] = [];
      await serve(replay, res, url, identity, served);
      faults.answered(served);
    } catch (err) {
      if (err instanceof Stalled) await stall(res);
      else sendJson(res, 500, errorBody(500, 'backendError', String(err), 'global'));
    } finally {
      inFlight--;
    }
  }

  const server: Server = createServer((req, res) => {
    void handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;

  return {
    url: `${base}/`,
    tokenUrl: `${base}/token`,
    token,
    knobs,
    get stats() {
      return stats;
    },
    resetStats() {
      stats = emptyStats();
    },
    calendars: () => [...calendars.values()],
    calendar: (id) => calendars.get(id),
    deleteCalendar: (id) => calendars.delete(id),
    liveEvents: (id) =>
      [...(calendars.get(id)?.events.values() ?? [])].filter((e) => e.status !== 'cancelled'),
    grantedPrincipals: () => [...new Set(issued.values())],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
