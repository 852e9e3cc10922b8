// BENCH_TRACE=1 in bench:feeds (issue 46): what the slowest requests of the "never a stall" minutes waited on.
// Serve's side records, on one clock (epoch ms, sub-millisecond), each request's arrival at the app and its end,
// every store call it made (with the time it took, its wait for a connection included), GC pauses, the store
// calls of everything else (the pull's, its transactions) and the holds of serve's loop; the client's side
// (`explainSlowest`) lays the slowest requests it timed over that record. Off, none of it runs.
import { AsyncLocalStorage } from 'node:async_hooks';
import { PerformanceObserver } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';

/** Now, in epoch ms on both sides of the loopback (each process's own timeOrigin + its monotonic clock). */
export const epochMs = (): number => performance.timeOrigin + performance.now();

interface Span {
  name: string;
  at: number;
  ms: number;
}

interface ServedRequest {
  id: string;
  at: number;
  end: number;
  calls: Span[];
}

export interface ServeRecord {
  requests: ServedRequest[];
  /** Store calls outside any request over 2 ms (the pull's reads, writes and transactions). */
  others: Span[];
  gcs: Span[];
  holds: { at: number; wallMs: number; cpuMs: number; waitMs: number }[];
}

export class ServeTrace {
  readonly #als = new AsyncLocalStorage<ServedRequest>();
  #record: ServeRecord = { requests: [], others: [], gcs: [], holds: [] };

  constructor() {
    const kinds: Record<number, string> = { 1: 'gc minor', 2: 'gc major', 4: 'gc incremental', 8: 'gc weak' };
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const kind = (e as { detail?: { kind?: number } }).detail?.kind ?? 0;
        this.#record.gcs.push({
          name: kinds[kind] ?? `gc ${kind}`,
          at: performance.timeOrigin + e.startTime,
          ms: e.duration,
        });
      }
    }).observe({ entryTypes: ['gc'] });
  }

  /** Starts a new record (the `measure` command); the previous one is returned by take(). */
  take(): ServeRecord {
    const r = this.#record;
    this.#record = { requests: [], others: [], gcs: [], holds: [] };
    return r;
  }

  hold(h: ServeRecord['holds'][number]): void {
    this.#record.holds.push(h);
  }

  /** The first middleware: a request carrying the client's x-bench-trace id is timed. */
  readonly middleware = (req: Request, res: Response, next: NextFunction): void => {
    const id = req.headers['x-bench-trace'];
    if (typeof id !== 'string') {
      next();
      return;
    }
    const served: ServedRequest = { id, at: epochMs(), end: 0, calls: [] };
    res.once('finish', () => {
      served.end = epochMs();
      this.#record.requests.push(served);
    });
    this.#als.run(served, next);
  };

  /** The store with every repository call timed, into the request that made it or the others. */
  wrapStore<S extends object>(store: S): S {
    const wrapped = new Map<PropertyKey, unknown>();
    const timed =
      (name: string, fn: (...a: unknown[]) => unknown, self: unknown) =>
      (...args: unknown[]) => {
        const at = epochMs();
        const req = this.#als.getStore();
        const done = () => {
          const ms = epochMs() - at;
          if (req) req.calls.push({ name, at, ms });
          else if (ms > 2) this.#record.others.push({ name, at, ms });
        };
        const out = fn.apply(self, args);
        if (out instanceof Promise) return out.finally(done);
        done();
        return out;
      };
    return new Proxy(store, {
      get: (target, prop) => {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value === 'function') return timed(String(prop), value as never, target);
        if (typeof value !== 'object' || value === null) return value;
        let repo = wrapped.get(prop);
        if (!repo) {
          const inner = value as Record<PropertyKey, unknown>;
          repo = new Proxy(inner, {
            get: (t, p) => {
              const v = Reflect.get(t, p, t) as unknown;
              return typeof v === 'function' ? timed(`${String(prop)}.${String(p)}`, v as never, t) : v;
            },
          });
          wrapped.set(prop, repo);
        }
        return repo;
      },
    });
  }
}

/** A request as the client timed it. */
export interface ClientTiming {
  id: string;
  kind: 'feed' | 'page';
  at: number;
  end: number;
}

const overlapMs = (a0: number, a1: number, b0: number, b1: number) =>
  Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));

/** Lines saying, for the `n` slowest requests of each kind, where their time went. */
export function explainSlowest(label: string, timed: ClientTiming[], rec: ServeRecord, n = 4): string[] {
  const byId = new Map(rec.requests.map((r) => [r.id, r]));
  const out: string[] = [];
  for (const kind of ['feed', 'page'] as const) {
    const slowest = timed
      .filter((t) => t.kind === kind)
      .sort((a, b) => b.end - b.at - (a.end - a.at))
      .slice(0, n);
    for (const t of slowest) {
      const s = byId.get(t.id);
      const total = t.end - t.at;
      if (!s) {
        out.push(`${label} ${kind} ${total.toFixed(1)} ms: not seen by serve`);
        continue;
      }
      const calls = s.calls
        .filter((c) => c.ms >= 1)
        .map((c) => `${c.name} ${c.ms.toFixed(1)}`)
        .join(', ');
      const gcs = rec.gcs.filter((g) => overlapMs(t.at, t.end, g.at, g.at + g.ms) > 0);
      const gcMs = gcs.reduce((n, g) => n + overlapMs(t.at, t.end, g.at, g.at + g.ms), 0);
      const holds = rec.holds
        .filter((h) => overlapMs(t.at, t.end, h.at, h.at + h.wallMs) > 0)
        .map((h) => `${h.wallMs.toFixed(0)}/${h.cpuMs.toFixed(0)}cpu/${h.waitMs.toFixed(0)}wait`);
      const others = rec.others
        .filter((o) => overlapMs(t.at, t.end, o.at, o.at + o.ms) > 0)
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 3)
        .map((o) => `${o.name} ${o.ms.toFixed(0)}`);
      out.push(
        `${label} ${kind} ${total.toFixed(1)} ms: before serve ${(s.at - t.at).toFixed(1)}, in serve ${(s.end - s.at).toFixed(1)}, after ${(t.end - s.end).toFixed(1)}` +
          ` | store calls: ${calls || 'none ≥ 1 ms'} | GC ${gcMs.toFixed(1)} ms (${gcs.map((g) => `${g.name} ${g.ms.toFixed(1)}`).join(', ')})` +
          ` | loop holds (wall/cpu/wait ms): ${holds.join(', ') || 'none'} | pull's store calls meanwhile: ${others.join(', ') || 'none'}`,
      );
    }
  }
  return out;
}
