// The HTTP face of the sandbox (node:http, no framework: it sits under every test and benchmark).
// Order per request: /_sandbox/ routes (no auth, no limits) | latency → rate limit (429) → auth (401/403)
// → injected 5xx → route. Errors are JSON: { "error": { "status": 400, "message": "…" } }.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { TokenBucket } from '../util/token-bucket.ts';
import { FaultInjector, isMalformed, malform } from './chaos.ts';
import { LIST_ENDPOINTS, type ListEndpoint, type Listing, querySessions } from './lists.ts';
import { HttpError, paging, Query } from './query.ts';
import { renderIcs } from './sessions-ics.ts';
import type { SandboxState } from './state.ts';
import { addMonths } from './time.ts';
import * as wire from './wire.ts';
import * as writes from './writes.ts';

type Json = Record<string, unknown>;

export interface ServerOptions {
  seed: number;
  token: string;
  readonlyToken: string;
  rateLimit?: number;
  burst?: number;
  rateClock?: () => number;
  errorRate?: number;
  latencyMs?: number;
  malformedRate?: number;
  /** Listing faults by resource path (`sessions`): what an upstream that loses track of its pages does. */
  listingFaults?: ListingFaults;
}

/**
 * `short`: the listing claims one page fewer than it has (`lastPage` one less, `numRecords` still right), so a
 * client following `lastPage` never reads the last page. `overlap`: pages after the first start one record early,
 * as if a record had been added ahead of them between two reads: the first page's last record comes twice.
 * `truncated`: the last page is lost and `numRecords` lowered to match (a one-page listing loses its last record),
 * so nothing in the listing gives it away; the records are still there (single reads find them).
 */
export type ListingFault = 'short' | 'overlap' | 'truncated';
export type ListingFaults = Record<string, ListingFault>;

export const LISTING_FAULTS: readonly ListingFault[] = ['short', 'overlap', 'truncated'];

export interface RouteStats {
  total: number;
  byStatus: Record<string, number>;
}

export interface SandboxStats {
  total: number;
  routes: Record<string, RouteStats>;
}

const MAX_BODY = 10 * 1024 * 1024;
const LIST_CACHE_MS = 1000;
const LIST_CACHE_ENTRIES = 32;
/** Characters of serialised records kept (about 2 bytes each): enough for a school, bounded for a district. */
const FRAGMENT_BUDGET = 48 * 1024 * 1024;

type WriteHandler = (st: SandboxState, body: unknown) => Json;
const WRITES: Record<string, WriteHandler> = {
  'POST /sessions': writes.createSessions,
  'PATCH /sessions': writes.updateSessions,
  'DELETE /sessions': writes.deleteSessions,
  'POST /users': writes.createUsers,
  'PATCH /users': writes.updateUsers,
  'POST /pre-explained-absences': writes.createAbsences,
  'PATCH /pre-explained-absences': writes.updateAbsences,
  'DELETE /pre-explained-absences': writes.deleteAbsences,
};

const LISTS = new Map<string, ListEndpoint>(LIST_ENDPOINTS.map((e) => [e.path, e]));

function resourceOf(path: string): string {
  return path.slice(1);
}

export class SandboxServer {
  readonly state: SandboxState;
  readonly options: ServerOptions;
  readonly server: Server;
  private readonly bucket: TokenBucket | undefined;
  private readonly faults: FaultInjector;
  private stats: SandboxStats = { total: 0, routes: {} };
  private readonly listCache = new Map<string, { version: number; at: number; listing: Listing }>();
  private readonly fragments = new Map<string, string>();
  private fragmentsBytes = 0;
  private fragmentsVersion = -1;
  /** Changed at run time through `POST /_sandbox/chaos`, so a test can break a listing between two pulls. */
  listingFaults: ListingFaults;
  /** While set, API requests wait here (control routes do not): a test orders a race by events, not sleeps. */
  gate: { released: Promise<void>; waiting: number; onArrive: () => void } | null = null;

  constructor(state: SandboxState, options: ServerOptions) {
    this.state = state;
    this.options = options;
    this.bucket =
      options.rateLimit && options.rateLimit > 0
        ? new TokenBucket({
            capacity: Math.max(1, options.burst ?? Math.ceil(options.rateLimit)),
            refillPerSecond: options.rateLimit,
            now: options.rateClock,
          })
        : options.burst && options.burst > 0
          ? new TokenBucket({
              capacity: Math.max(1, options.burst),
              refillPerSecond: options.burst,
              now: options.rateClock,
            })
          : undefined;
    this.faults = new FaultInjector(options.seed, options.errorRate ?? 0);
    this.listingFaults = { ...options.listingFaults };
    this.server = createServer((req, res) => {
      // Every time the sandbox gives is on its clock (`--now`), its `Date` included (Node would write the real
      // time): a sandbox set minutes off plays an upstream whose clock is off from its client's.
      res.setHeader('date', new Date(this.state.now()).toUTCString());
      this.handle(req, res).catch((err: unknown) => {
        this.fail(res, 'unknown', new HttpError(500, err instanceof Error ? err.message : 'internal error'));
      });
    });
    // Longer than clients keep idle sockets (undici: 4 s), as production load balancers are: with 5 s a loaded
    // machine let a client reuse a socket the server was closing, and a write died with ECONNRESET.
    this.server.keepAliveTimeout = 65_000;
  }

  getStats(): SandboxStats {
    return structuredClone(this.stats);
  }

  resetStats(): void {
    this.stats = { total: 0, routes: {} };
  }

  private count(route: string, status: number): void {
    this.stats.total++;
    let r = this.stats.routes[route];
    if (!r) {
      r = { total: 0, byStatus: {} };
      this.stats.routes[route] = r;
    }
    r.total++;
    r.byStatus[status] = (r.byStatus[status] ?? 0) + 1;
  }

  private send(
    res: ServerResponse,
    route: string,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) {
    this.sendText(res, route, status, JSON.stringify(body), headers);
  }

  private sendText(
    res: ServerResponse,
    route: string,
    status: number,
    text: string,
    headers: Record<string, string> = {},
  ) {
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
    if (route !== '') this.count(route, status);
  }

  private fail(res: ServerResponse, route: string, err: HttpError) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (err.status === 502) {
      // What a gateway in front of the real service sends: HTML, not the API's JSON.
      const html =
        '<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>';
      res.writeHead(502, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(html) });
      res.end(html);
      this.count(route, 502);
      return;
    }
    this.send(res, route, err.status, { error: { status: err.status, message: err.message } }, err.headers);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    const path = url.pathname.replace(/\/+$/, '') || '/';

    if (path.startsWith('/_sandbox/')) {
      await this.handleControl(method, path, req, res);
      return;
    }

    const route = routeName(method, path);
    try {
      const gate = this.gate;
      if (gate) {
        gate.waiting++;
        gate.onArrive();
        await gate.released;
      }
      if (this.options.latencyMs && this.options.latencyMs > 0) {
        await new Promise((r) => setTimeout(r, this.options.latencyMs));
      }
      if (this.bucket) {
        const wait = this.bucket.take();
        if (wait > 0) throw new HttpError(429, 'rate limit exceeded', { 'retry-after': String(wait) });
      }
      const auth = req.headers.authorization ?? '';
      const match = /^Bearer\s+(.+)$/i.exec(auth);
      const token = match?.[1]?.trim();
      if (!token || (token !== this.options.token && token !== this.options.readonlyToken)) {
        throw new HttpError(401, 'a valid API token is required (Authorization: Bearer <token>)', {
          'www-authenticate': 'Bearer',
        });
      }
      const body = method === 'GET' || method === 'HEAD' ? undefined : await readBody(req);
      const fault = this.faults.next();
      if (fault) {
        throw new HttpError(
          fault,
          'injected server fault (sandbox errorRate)',
          fault === 503 ? { 'retry-after': '1' } : {},
        );
      }
      const isWrite = method !== 'GET' && method !== 'HEAD';
      const write = WRITES[`${method} ${path}`];
      if (isWrite && write) {
        if (token !== this.options.token) throw new HttpError(403, 'this token may only read');
        this.send(res, route, 200, write(this.state, body));
        return;
      }
      if (method === 'GET') {
        if (this.serveRead(path, url, res, route)) return;
      }
      const known =
        LISTS.has(path) ||
        /^\/(sessions|teams)\/[^/]+$/.test(path) ||
        WRITES[`POST ${path}`] ||
        WRITES[`PATCH ${path}`];
      if (known) throw new HttpError(405, `${method} is not supported on ${path}`);
      throw new HttpError(404, `no such endpoint: ${method} ${path}`);
    } catch (err) {
      const e =
        err instanceof HttpError
          ? err
          : new HttpError(500, err instanceof Error ? err.message : 'internal error');
      this.fail(res, route, e);
    }
  }

  private serveRead(path: string, url: URL, res: ServerResponse, route: string): boolean {
    const q = new Query(url.searchParams);
    const st = this.state;
    const single = /^\/(sessions|teams)\/([^/]+)$/.exec(path);
    if (single) {
      const id = /^\d+$/.test(single[2]!) ? Number(single[2]) : Number.NaN;
      if (single[1] === 'sessions') {
        const s = Number.isNaN(id) ? undefined : st.sessions.get(id);
        if (!s) throw new HttpError(404, `no session ${single[2]}`);
        const out: Json = {
          data: wire.session(st, s, {
            single: true,
            includeTeams: q.bool('includeTeams') ?? false,
            includeStaff: q.bool('includeStaff') ?? false,
            includeRoundName: q.bool('includeRoundName') ?? false,
          }),
        };
        if (q.bool('includeCustomFieldsMetadata') === true)
          out.customFieldsMetadata = wire.customFieldsMetadata(st);
        this.send(res, route, 200, out);
        return true;
      }
      const t = Number.isNaN(id) ? undefined : st.teams.get(id);
      if (!t) throw new HttpError(404, `no team ${single[2]}`);
      const now = st.now();
      const asOf = q.instant('showAsOfDate') ?? now;
      this.send(res, route, 200, {
        data: wire.team(st, t, {
          single: true,
          includeStaff: true,
          includeStudents: true,
          includePositions: true,
          asOf,
          now,
        }),
      });
      return true;
    }
    const format = path === '/sessions' ? q.str('format') : undefined;
    if (format !== undefined) {
      if (format !== 'ics' && format !== 'iCalendar')
        throw new HttpError(400, 'format must be ics or iCalendar');
      const now = st.now();
      const { records, includeCustomFieldsMetadata } = querySessions(st, q, {
        start: addMonths(now, -1),
        end: addMonths(now, 3),
      });
      const page = q.int('page', 1) ?? 1;
      const slice = records.slice((page - 1) * 200, page * 200);
      const text = renderIcs(st, slice, includeCustomFieldsMetadata);
      res.writeHead(200, {
        'content-type': 'text/calendar; charset=utf-8',
        'content-disposition': 'attachment; filename="cal.ics"',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
      this.count(route, 200);
      return true;
    }
    const endpoint = LISTS.get(path);
    if (!endpoint) return false;
    const pg = paging(q, endpoint.defaultLength, endpoint.maxLength);
    const listing = this.cachedListing(endpoint, url, q);
    this.sendText(res, route, 200, this.envelope(path, listing, pg));
    return true;
  }

  /**
   * Paging through a big listing asks for the same filter many times: keep the filtered records for a moment.
   * Entries die on any write (state.version) and after a second, since default ranges follow the clock.
   */
  private cachedListing(endpoint: ListEndpoint, url: URL, q: Query): Listing {
    const params = [...url.searchParams].filter(([k]) => k !== 'page' && k !== 'pageLength').sort();
    const key = `${endpoint.path}?${new URLSearchParams(params).toString()}`;
    const hit = this.listCache.get(key);
    const t = performance.now();
    if (hit && hit.version === this.state.version && t - hit.at < LIST_CACHE_MS) return hit.listing;
    const listing = endpoint.list(this.state, q);
    if (this.listCache.size >= LIST_CACHE_ENTRIES) {
      const oldest = this.listCache.keys().next().value;
      if (oldest !== undefined) this.listCache.delete(oldest);
    }
    this.listCache.set(key, { version: this.state.version, at: t, listing });
    return listing;
  }

  /**
   * The page as JSON text. Records of listings with a shape key are serialised once per state version and
   * reused: paging through thousands of sessions with teams and staff is then mostly string joining.
   */
  private envelope(
    path: string,
    listing: Listing,
    pg: { page: number; requested: number; effective: number },
  ): string {
    const fault = this.listingFaults[resourceOf(path)];
    const whole = listing.records.length;
    const wholePages = Math.max(1, Math.ceil(whole / pg.effective));
    // Truncated: what the listing serves and counts ends before its last page (or its last record).
    const total =
      fault === 'truncated'
        ? wholePages > 1
          ? (wholePages - 1) * pg.effective
          : Math.max(0, whole - 1)
        : whole;
    const pages = Math.max(1, Math.ceil(total / pg.effective));
    const lastPage = fault === 'short' ? Math.max(1, pages - 1) : pages;
    const from = Math.max(0, (pg.page - 1) * pg.effective - (fault === 'overlap' && pg.page > 1 ? 1 : 0));
    const slice = listing.records.slice(from, Math.min(from + pg.effective, total));
    const rate = this.options.malformedRate ?? 0;
    const seed = this.options.seed;
    const resource = resourceOf(path);
    if (this.fragmentsVersion !== this.state.version) {
      this.fragments.clear();
      this.fragmentsBytes = 0;
      this.fragmentsVersion = this.state.version;
    }
    const parts = slice.map((r) => {
      const id = (r as { id?: unknown }).id;
      if (rate > 0 && typeof id === 'number' && isMalformed(seed, rate, resource, id)) {
        return JSON.stringify(malform(seed, resource, listing.toWire(r)));
      }
      if (listing.shapeKey === undefined || typeof id !== 'number') return JSON.stringify(listing.toWire(r));
      const key = `${resource}|${listing.shapeKey}|${id}`;
      let text = this.fragments.get(key);
      if (text === undefined) {
        text = JSON.stringify(listing.toWire(r));
        if (this.fragmentsBytes + text.length <= FRAGMENT_BUDGET) {
          this.fragments.set(key, text);
          this.fragmentsBytes += text.length;
        }
      }
      return text;
    });
    const pagination: Json = {
      currentPage: pg.page,
      lastPage,
      pageLength: pg.requested,
      numRecords: total,
    };
    if (listing.nextPrevious) {
      pagination.next = null;
      pagination.previous = null;
    }
    const top = listing.top ? JSON.stringify(listing.top).slice(1, -1) : '';
    return `{"data":[${parts.join(',')}],"pagination":${JSON.stringify(pagination)}${top ? `,${top}` : ''}}`;
  }

  private async handleControl(method: string, path: string, req: IncomingMessage, res: ServerResponse) {
    if (method === 'POST' && path === '/_sandbox/chaos') {
      try {
        const body = (await readBody(req)) as { listingFaults?: unknown } | undefined;
        this.listingFaults = parseListingFaults(body?.listingFaults ?? {});
      } catch (err) {
        const message = err instanceof Error ? err.message : 'bad request';
        this.send(res, '', 400, { error: { status: 400, message } });
        return;
      }
      this.send(res, '', 200, { listingFaults: this.listingFaults });
      return;
    }
    if (method === 'GET' && path === '/_sandbox/stats') {
      this.send(res, '', 200, this.getStats());
      return;
    }
    if (method === 'POST' && path === '/_sandbox/stats/reset') {
      this.resetStats();
      this.send(res, '', 200, this.getStats());
      return;
    }
    if (method === 'GET' && path === '/_sandbox/health') {
      this.send(res, '', 200, { ok: true, now: new Date(this.state.now()).toISOString() });
      return;
    }
    this.send(res, '', 404, { error: { status: 404, message: `no such sandbox route: ${method} ${path}` } });
  }
}

/** `{ "sessions": "short" }` from a request body or a command line, checked. */
export function parseListingFaults(raw: unknown): ListingFaults {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new Error('listingFaults must be an object like {"sessions": "short"}');
  const out: ListingFaults = {};
  for (const [resource, fault] of Object.entries(raw)) {
    if (!LISTING_FAULTS.includes(fault as ListingFault))
      throw new Error(`listingFaults.${resource} must be one of ${LISTING_FAULTS.join(', ')}`);
    out[resource] = fault as ListingFault;
  }
  return out;
}

/** `GET /sessions/{id}` style names for the stats, so ids don't explode the table. */
export function routeName(method: string, path: string): string {
  const generic = path.replace(/^\/(sessions|teams)\/[^/]+$/, '/$1/{id}');
  return `${method} ${generic}`;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_BODY) throw new HttpError(413, 'request body too large');
    chunks.push(b);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, 'request body is not valid JSON');
  }
}
