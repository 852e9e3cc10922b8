// Shared machinery of the provider fakes: deterministic randomness for the chaos knobs, body reading,
// JSON replies, latency, and the "fail after N requests" switch.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** mulberry32: a tiny seeded PRNG so throttling patterns repeat from run to run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  if (status === 204 || body === undefined) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** Knobs both fakes share. All can be changed while the server runs (the object is live). */
export interface ChaosKnobs {
  /** Delay before each response, in milliseconds. */
  latencyMs: number;
  /**
   * Fraction (0..1) of requests answered with a throttling error instead of being served; below 1, at most
   * RANDOM_FAULTS_IN_A_ROW times in a row for one request.
   */
  throttleRate: number;
  /** After this many requests every request fails (see failMode); null = never. */
  failAfter: number | null;
  /** 'error': a 5xx reply; 'reset': the socket is destroyed without a reply. */
  failMode: 'error' | 'reset';
  /** Event listings come back empty (as a flaky backend sometimes does). */
  emptyListings: boolean;
  /** Injected HTTP errors, checked in order before a request is served (see FaultRule). */
  faults: FaultRule[];
}

/**
 * One injected fault: requests whose `METHOD /path` matches get `status` (with the provider's own error body)
 * instead of being served. Checked for every top-level request (batch endpoints and token grants included,
 * e.g. `POST /v1.0/$batch`, `POST /batch/calendar/v3`, `POST /tenant/oauth2/v2.0/token`) and for every batch
 * part (`POST /users/a@b/calendars`, `GET /calendars/x/events`).
 *
 * `when: 'after-apply'` (Graph fake): the request is served first (the write happens) and only then the answer is
 * lost: replaced by `status`, or with `drop` by a connection closed without an answer. The case an idempotency
 * key such as Graph's transactionId exists for.
 */
export interface FaultRule {
  /** Which requests; every one when absent. */
  match?: RegExp;
  status: 401 | 403 | 429 | 500 | 503 | 504;
  /** 'before' (default): instead of serving; 'after-apply': after serving a request that succeeded. */
  when?: 'before' | 'after-apply';
  /** With 'after-apply': close the connection without any answer instead of answering `status`. */
  drop?: boolean;
  /**
   * Accept the request and never answer it (the connection stays open until the client gives up):
   * a stalled connection. With 'after-apply' the write happens first. `status` is then not used.
   */
  stall?: boolean;
  /**
   * Fraction (0..1) of matching requests that fail; 1 when absent. Drawn from the fake's seeded PRNG; below 1, one
   * request (the same method, path and body) fails at most `inARow` times in a row (see FaultInjector).
   */
  rate?: number;
  /** With `rate` below 1: the most faults in a row for one request; default RANDOM_FAULTS_IN_A_ROW. */
  inARow?: number;
  /** Fail at most this many, then serve normally (a fault that clears); no limit when absent. */
  limit?: number;
  /** Google fake: the error reason of a 403 (default insufficientPermissions; e.g. rateLimitExceeded). */
  reason?: string;
  /** Retry-After header in seconds (fractions allowed), for 429/503. */
  retryAfterSeconds?: number;
  /** How many requests this rule has failed so far (kept up to date by the fake). */
  hits?: number;
}

/**
 * The most faults chance may answer one request in a row: a FaultRule with a `rate` below 1 and the throttleRate
 * knob skip a request that has had this many (FaultRule.inARow sets another bound for one rule). Below every
 * client's retry limit (8 by default, 10 in the failure tests), so that a random pattern tests that faults are
 * waited out and retried, never that one write is unlucky enough to use up its retries.
 */
export const RANDOM_FAULTS_IN_A_ROW = 3;

/**
 * Decides the faults and throttling answers a fake injects, drawing from its seeded PRNG. A request is known by
 * its identity (method, path and body, as a client's retry sends it again; a batch carries its parts'): the
 * injector counts the faults each identity has had since its last real answer. The seed alone does not make
 * the pattern repeat, since concurrent requests reach the fake in a different order each run; the bound makes
 * every order safe.
 */
export class FaultInjector {
  readonly #knobs: ChaosKnobs;
  readonly #random: () => number;
  /** identity → injected answers in a row since its last real one. */
  readonly #streaks = new Map<string, number>();

  constructor(knobs: ChaosKnobs, random: () => number) {
    this.#knobs = knobs;
    this.#random = random;
  }

  /**
   * The first rule of that phase that fires for `request` (`METHOD /path`), counting the hit against the rule
   * and against every identity in `identities`; null when none does.
   */
  fault(
    request: string,
    identities: readonly string[],
    when: 'before' | 'after-apply' = 'before',
  ): FaultRule | null {
    const streak = this.#longest(identities);
    for (const rule of this.#knobs.faults) {
      if ((rule.when ?? 'before') !== when) continue;
      if (rule.match && !rule.match.test(request)) continue;
      if (rule.limit !== undefined && (rule.hits ?? 0) >= rule.limit) continue;
      if (rule.rate !== undefined && !this.#draw(rule.rate, streak, rule.inARow)) continue;
      rule.hits = (rule.hits ?? 0) + 1;
      this.#failed(identities);
      return rule;
    }
    return null;
  }

  /** Whether the throttleRate knob throttles this request (counted like a fault when it does). */
  throttles(identities: readonly string[]): boolean {
    const rate = this.#knobs.throttleRate;
    if (rate <= 0 || !this.#draw(rate, this.#longest(identities))) return false;
    this.#failed(identities);
    return true;
  }

  /** These requests' real answers went out (a batch's once the batch's did): their next fault starts a new run. */
  answered(identities: readonly string[]): void {
    for (const id of identities) this.#streaks.delete(id);
  }

  /** Whether a fault of probability `rate` fires, for an identity that has had `streak` faults in a row. */
  #draw(rate: number, streak: number, inARow = RANDOM_FAULTS_IN_A_ROW): boolean {
    if (rate < 1 && streak >= inARow) return false;
    return this.#random() < rate;
  }

  #longest(identities: readonly string[]): number {
    let longest = 0;
    for (const id of identities) longest = Math.max(longest, this.#streaks.get(id) ?? 0);
    return longest;
  }

  #failed(identities: readonly string[]): void {
    for (const id of identities) this.#streaks.set(id, (this.#streaks.get(id) ?? 0) + 1);
  }
}

/** A request's identity for FaultInjector: what a client sends again, unchanged, when it retries the request. */
export function requestIdentity(method: string, target: string, body: string): string {
  return `${method} ${target}\n${body}`;
}

export function defaultKnobs(partial: Partial<ChaosKnobs> = {}): ChaosKnobs {
  return {
    latencyMs: 0,
    throttleRate: 0,
    failAfter: null,
    failMode: 'error',
    emptyListings: false,
    faults: [],
    ...partial,
  };
}

export function newId(random: () => number, length: number, alphabet: string): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(random() * alphabet.length)];
  return out;
}

/** A `stall` fault's answer: none; the request is left open until the client closes its connection. */
export function stall(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed || res.socket?.destroyed) resolve();
    else res.once('close', () => resolve());
  });
}
