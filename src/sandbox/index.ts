// The sandbox: a stand-alone, in-memory Extracurricular Data Service over HTTP, serving a generated school.
import type { AddressInfo } from 'node:net';
import { SANDBOX_TOKEN } from '../domain/sandbox-token.ts';
import { isMalformed } from './chaos.ts';
import { generateSchool } from './generate.ts';
import type { Scale, School } from './model.ts';
import { type ListingFaults, parseListingFaults, SandboxServer, type SandboxStats } from './server.ts';
import { SandboxState } from './state.ts';

export { generateSchool, SCALE_NAMES, SCHOOL_TIME_ZONE } from './generate.ts';
export type * from './model.ts';
export type { ListingFault, ListingFaults, RouteStats, SandboxStats } from './server.ts';

export interface SandboxOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  seed?: number;
  scale?: Scale;
  /**
   * The sandbox clock's start (ISO), and the school is generated around it. Default: the real time, the school
   * generated around its minute (the clock is not truncated: its `Date` header would tell a client it runs behind).
   */
  now?: string;
  /**
   * Whether the school keeps New South Wales public and school holidays (no sessions on them). Default true, as a
   * real school's calendar does; false gives a school in term every day of the year, for a test whose school is
   * built around the real week and needs sessions in it whatever the date of the run.
   */
  holidays?: boolean;
  token?: string;
  readonlyToken?: string;
  /** Requests per second (token bucket); off by default. */
  rateLimit?: number;
  /** Bucket size; defaults to the rate limit. */
  burst?: number;
  /**
   * The rate limit's clock in ms (default: the real one). In-process tests that count retries hold it still, so a
   * refill comes when the test says, not when the machine's load lets a second pass.
   */
  rateClock?: () => number;
  /** Fraction (0..1) of API requests answered with a 5xx. */
  errorRate?: number;
  latencyMs?: number;
  /** Fraction (0..1) of list records served malformed (deterministic per seed, resource and id). */
  malformedRate?: number;
  /** Listings that lose track of their pages, by resource path: `{ sessions: 'short' }` (see server.ts). */
  listingFaults?: ListingFaults;
}

export interface Sandbox {
  url: string;
  token: string;
  readonlyToken: string;
  /** The live school: generated data, changed in place by writes through the API. */
  school: School;
  close(): Promise<void>;
  /** Moves the sandbox clock (which then runs on in real time). */
  setNow(iso: string): void;
  /** The sandbox clock now (ISO). */
  now(): string;
  stats(): SandboxStats;
  resetStats(): void;
  /** Whether a list record is served malformed (`resource` as in the path: `sessions`, `student-teams`…). */
  isMalformed(resource: string, id: number): boolean;
  /** Replaces the listing faults (also `POST /_sandbox/chaos {"listingFaults": {…}}`). */
  setListingFaults(faults: ListingFaults): void;
  /**
   * Holds every API request at the door until `release()`: `arrived(n)` resolves once n requests wait there. For
   * tests that need one client to be mid-pull while another starts, whatever the machine's speed.
   */
  hold(): SandboxHold;
}

export interface SandboxHold {
  arrived(n?: number): Promise<void>;
  release(): void;
}

function check(name: string, value: number | undefined, min: number, max: number): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || Number.isNaN(value) || value < min || value > max) {
    throw new Error(`sandbox option ${name} must be a number from ${min} to ${max}, got ${String(value)}`);
  }
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const seed = opts.seed ?? 1;
  const scale = opts.scale ?? 'small';
  if (!['small', 'school', 'district'].includes(scale)) {
    throw new Error(`sandbox option scale must be small, school or district, got ${String(scale)}`);
  }
  check('port', opts.port, 0, 65535);
  check('rateLimit', opts.rateLimit, 0, 1e6);
  check('burst', opts.burst, 0, 1e6);
  check('errorRate', opts.errorRate, 0, 1);
  check('malformedRate', opts.malformedRate, 0, 1);
  check('latencyMs', opts.latencyMs, 0, 600_000);
  const nowMs = opts.now === undefined ? Math.floor(Date.now() / 60_000) * 60_000 : Date.parse(opts.now);
  if (Number.isNaN(nowMs))
    throw new Error(`sandbox option now must be an ISO 8601 timestamp, got ${opts.now}`);
  const token = opts.token ?? SANDBOX_TOKEN;
  const readonlyToken = opts.readonlyToken ?? 'sandbox-readonly-token';
  if (token === readonlyToken) throw new Error('sandbox options token and readonlyToken must differ');

  const school = generateSchool(seed, scale, nowMs, { holidays: opts.holidays ?? true });
  const state = new SandboxState(school, opts.now === undefined ? Date.now() : nowMs);
  const malformedRate = opts.malformedRate ?? 0;
  const server = new SandboxServer(state, {
    seed,
    token,
    readonlyToken,
    rateLimit: opts.rateLimit,
    burst: opts.burst,
    rateClock: opts.rateClock,
    errorRate: opts.errorRate,
    latencyMs: opts.latencyMs,
    malformedRate,
    listingFaults: parseListingFaults(opts.listingFaults ?? {}),
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.server.listen(opts.port ?? 0, host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const address = server.server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return {
    url: `http://${urlHost}:${address.port}`,
    token,
    readonlyToken,
    school,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.server.close((err) => (err ? reject(err) : resolve()));
        server.server.closeAllConnections();
      }),
    setNow(iso: string) {
      const ms = Date.parse(iso);
      if (Number.isNaN(ms)) throw new Error(`setNow needs an ISO 8601 timestamp, got ${iso}`);
      state.setNow(ms);
    },
    now: () => new Date(state.now()).toISOString(),
    stats: () => server.getStats(),
    resetStats: () => server.resetStats(),
    isMalformed: (resource, id) => isMalformed(seed, malformedRate, resource, id),
    setListingFaults: (faults) => {
      server.listingFaults = parseListingFaults(faults);
    },
    hold() {
      let release!: () => void;
      const released = new Promise<void>((r) => {
        release = r;
      });
      const waiters: { n: number; resolve: () => void }[] = [];
      const gate = {
        released,
        waiting: 0,
        onArrive: () => {
          for (const w of [...waiters])
            if (gate.waiting >= w.n) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve();
            }
        },
      };
      server.gate = gate;
      return {
        arrived: (n = 1) =>
          gate.waiting >= n
            ? Promise.resolve()
            : new Promise<void>((resolve) => waiters.push({ n, resolve })),
        release() {
          if (server.gate === gate) server.gate = null;
          release();
        },
      };
    },
  };
}
