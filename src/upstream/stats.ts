// Per-endpoint request accounting. `requests` counts HTTP attempts actually sent (so it matches the server's own
// count), `retries` the attempts after the first, `throttled` the 429 answers, `errors` the attempts that ended in
// any other failure (4xx, 5xx, network, timeout), whether or not a retry then succeeded.
import type { EndpointStats } from './api.ts';

export class StatsRecorder {
  readonly #byEndpoint = new Map<string, EndpointStats>();

  for(endpoint: string): EndpointStats {
    let s = this.#byEndpoint.get(endpoint);
    if (!s) {
      s = { requests: 0, retries: 0, throttled: 0, errors: 0 };
      this.#byEndpoint.set(endpoint, s);
    }
    return s;
  }

  snapshot(): Record<string, EndpointStats> {
    const out: Record<string, EndpointStats> = {};
    for (const [k, v] of this.#byEndpoint) out[k] = { ...v };
    return out;
  }

  totals(): EndpointStats {
    const t: EndpointStats = { requests: 0, retries: 0, throttled: 0, errors: 0 };
    for (const v of this.#byEndpoint.values()) {
      t.requests += v.requests;
      t.retries += v.retries;
      t.throttled += v.throttled;
      t.errors += v.errors;
    }
    return t;
  }
}
