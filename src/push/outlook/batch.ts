// Graph `$batch` scheduling: every request rostercal makes to a mailbox goes through here, packed 20 to a
// round trip, with never more than 4 requests in flight per mailbox (Exchange's limit: more get 429
// MailboxConcurrency). Within a batch a mailbox gets up to 4 dependsOn chains (the server runs a chain one
// request at a time), so one busy mailbox can still fill a batch while staying at 4 concurrent requests.
// Sub-responses are checked one by one: throttled ones (429/503/504) wait their Retry-After and go again, the
// ones cut short by a failed predecessor (424) go again at once, everything else is handed back.
import { nextRetryDelay, type RetryPolicy } from '../../util/retry.ts';

export interface SubRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Relative to the version root, e.g. `/users/a@b.org/calendars`. */
  url: string;
  body?: unknown;
}

export interface SubResponse {
  status: number;
  headers: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: Graph JSON bodies are read field by field by the callers.
  body: any;
}

interface BatchRequestItem {
  id: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  dependsOn?: string[];
}

export type SendBatch = (
  requests: BatchRequestItem[],
) => Promise<{ responses?: (SubResponse & { id: string })[] }>;

interface Item {
  mailbox: string;
  req: SubRequest;
  resolve: (r: SubResponse) => void;
  attempts: number;
  throttledAttempts: number;
  notBefore: number;
}

export interface BatcherSettings {
  batchSize: number;
  maxConcurrentPerMailbox: number;
  parallelBatches: number;
  backoff: RetryPolicy;
}

export interface BatcherStats {
  batches: number;
  items: number;
  throttledItems: number;
  retriedItems: number;
}

const THROTTLED = new Set([429, 503, 504]);
/** How often one item may be throttled before it is handed back as failed (it waits each Retry-After). */
const THROTTLED_RETRIES = 24;
export const PREFER_IMMUTABLE_ID = 'IdType="ImmutableId"';

function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
  return key ? headers[key] : undefined;
}

/**
 * The answer every item of a `$batch` gets when Graph refused the round trip with a 4xx other than 408/429
 * (the SDK throws a GraphError carrying statusCode and code); null for what may pass on a later try
 * (throttling, 5xx, a broken connection).
 */
function refusal(failure: unknown): SubResponse | null {
  const r = lastFailure(failure);
  // @azure/identity's verdict on the app's credentials (the token endpoint said invalid_client & co.) reaches
  // us with no HTTP status, only its name as the code: as final as a 401.
  if (CREDENTIAL_REFUSALS.has(r.body.error.code)) return r;
  return r.status >= 400 && r.status < 500 && r.status !== 408 && r.status !== 429 ? r : null;
}

const CREDENTIAL_REFUSALS = new Set(['AuthenticationRequiredError', 'CredentialUnavailableError']);

/** What an item gets when its `$batch` round trips kept failing: the last HTTP status and Graph's words. */
function lastFailure(failure: unknown): SubResponse {
  const e = failure as { statusCode?: unknown; code?: unknown; message?: unknown } | null;
  const status = typeof e?.statusCode === 'number' && e.statusCode > 0 ? e.statusCode : 0;
  const code = typeof e?.code === 'string' && e.code ? e.code : 'BatchFailed';
  return {
    status,
    headers: {},
    body: { error: { code, message: String(e?.message ?? failure ?? 'no response') } },
  };
}

export class GraphBatcher {
  readonly #send: SendBatch;
  readonly #s: BatcherSettings;
  readonly #queues = new Map<string, Item[]>();
  readonly #busy = new Map<string, number>();
  #inflight = 0;
  #scheduled = false;
  #timer: NodeJS.Timeout | null = null;
  #rr = 0;
  readonly stats: BatcherStats = { batches: 0, items: 0, throttledItems: 0, retriedItems: 0 };

  /** The settings' backoff, jittered: parallel mailboxes must not retry in lockstep. */
  readonly #policy: RetryPolicy;

  constructor(send: SendBatch, settings: BatcherSettings) {
    this.#send = send;
    this.#s = settings;
    this.#policy = { ...settings.backoff, jitter: true };
  }

  submit(mailbox: string, req: SubRequest): Promise<SubResponse> {
    return new Promise((resolve) => {
      this.#enqueue({ mailbox, req, resolve, attempts: 0, throttledAttempts: 0, notBefore: 0 }, false);
    });
  }

  #enqueue(item: Item, front: boolean) {
    const q = this.#queues.get(item.mailbox) ?? [];
    if (front) q.unshift(item);
    else q.push(item);
    this.#queues.set(item.mailbox, q);
    this.#schedule();
  }

  #schedule() {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // Let every caller of this tick enqueue first: batches fill up instead of leaving with one item.
    setImmediate(() => {
      this.#scheduled = false;
      this.#pump();
    });
  }

  #pump() {
    while (this.#inflight < this.#s.parallelBatches) {
      const batch = this.#build();
      if (!batch) break;
      this.#inflight++;
      void this.#run(batch).finally(() => {
        this.#inflight--;
        this.#schedule();
      });
    }
    this.#armTimer();
  }

  /**
   * Wakes up for items waiting out a Retry-After or a backoff. Items that are ready but whose mailbox is busy
   * need no timer: the batch in flight schedules the next pump when it ends. The timer keeps the process alive
   * on purpose: a `rostercal sync` whose items all wait must not end (Node would exit 13, "unsettled top-level
   * await") with the push half done.
   */
  #armTimer() {
    if (this.#timer) return;
    const now = Date.now();
    let earliest = Number.POSITIVE_INFINITY;
    for (const q of this.#queues.values())
      for (const it of q) if (it.notBefore > now) earliest = Math.min(earliest, it.notBefore);
    if (!Number.isFinite(earliest)) return;
    this.#timer = setTimeout(
      () => {
        this.#timer = null;
        this.#pump();
      },
      Math.max(1, earliest - now),
    );
  }

  #build(): { items: Item[]; chains: Map<string, number>; json: BatchRequestItem[] } | null {
    const now = Date.now();
    const room = this.#s.batchSize;
    const ready = (mb: string) => (this.#queues.get(mb) ?? []).filter((it) => it.notBefore <= now);
    const mailboxes = [...this.#queues.keys()].filter(
      (mb) => (this.#busy.get(mb) ?? 0) === 0 && ready(mb).length > 0,
    );
    if (mailboxes.length === 0) return null;
    const start = this.#rr++ % mailboxes.length;
    const order = [...mailboxes.slice(start), ...mailboxes.slice(0, start)];
    // chains[i] = list of items; pass 1 starts chains (up to the per-mailbox limit), pass 2 lengthens them.
    const chains: { mailbox: string; items: Item[] }[] = [];
    const taken = new Set<Item>();
    let count = 0;
    const takeNext = (mb: string): Item | undefined => {
      const it = (this.#queues.get(mb) ?? []).find((x) => x.notBefore <= now && !taken.has(x));
      if (it) taken.add(it);
      return it;
    };
    for (const mb of order) {
      for (let c = 0; c < this.#s.maxConcurrentPerMailbox && count < room; c++) {
        const it = takeNext(mb);
        if (!it) break;
        chains.push({ mailbox: mb, items: [it] });
        count++;
      }
      if (count >= room) break;
    }
    let grew = true;
    while (count < room && grew) {
      grew = false;
      for (const chain of chains) {
        if (count >= room) break;
        const it = takeNext(chain.mailbox);
        if (!it) continue;
        chain.items.push(it);
        count++;
        grew = true;
      }
    }
    for (const [mb, q] of this.#queues) {
      const rest = q.filter((x) => !taken.has(x));
      if (rest.length) this.#queues.set(mb, rest);
      else this.#queues.delete(mb);
    }
    const perMailbox = new Map<string, number>();
    const items: Item[] = [];
    const json: BatchRequestItem[] = [];
    for (const chain of chains) {
      perMailbox.set(chain.mailbox, (perMailbox.get(chain.mailbox) ?? 0) + 1);
      let prev: string | null = null;
      for (const it of chain.items) {
        const id = String(items.length + 1);
        items.push(it);
        const headers: Record<string, string> = { Prefer: PREFER_IMMUTABLE_ID };
        if (it.req.body !== undefined) headers['Content-Type'] = 'application/json';
        json.push({
          id,
          method: it.req.method,
          url: it.req.url,
          headers,
          ...(it.req.body !== undefined ? { body: it.req.body } : {}),
          ...(prev ? { dependsOn: [prev] } : {}),
        });
        prev = id;
      }
    }
    for (const [mb, n] of perMailbox) this.#busy.set(mb, (this.#busy.get(mb) ?? 0) + n);
    return { items, chains: perMailbox, json };
  }

  /**
   * Puts an item back to wait `retryAfterMs` (Graph's Retry-After, throttled items) or its backoff; false when its
   * retries are spent. Throttling is not a failure of the request, so it does not use up the backoff's retries
   * (at 30 % throttling, 8 retries would still lose about one write in 50,000) — but it is bounded.
   */
  #retry(it: Item, throttled: boolean, retryAfterMs: number | null = null): boolean {
    const delay = throttled
      ? nextRetryDelay(this.#policy, it.throttledAttempts, {
          limit: THROTTLED_RETRIES,
          retryAfter: { ms: retryAfterMs, use: 'exact' },
        })
      : nextRetryDelay(this.#policy, it.attempts);
    if (delay === null) return false;
    if (throttled) it.throttledAttempts++;
    else it.attempts++;
    this.stats.retriedItems++;
    it.notBefore = Date.now() + delay;
    this.#enqueue(it, true);
    return true;
  }

  async #run(batch: { items: Item[]; chains: Map<string, number>; json: BatchRequestItem[] }) {
    this.stats.batches++;
    this.stats.items += batch.items.length;
    try {
      let responses: (SubResponse & { id: string })[] = [];
      let failure: unknown = null;
      try {
        responses = (await this.#send(batch.json)).responses ?? [];
      } catch (err) {
        failure = err;
      }
      const byId = new Map(responses.map((r) => [String(r.id), r]));
      const refused = refusal(failure);
      batch.items.forEach((it, i) => {
        const r = byId.get(String(i + 1));
        if (!r && refused) {
          // Graph refused the round trip itself (401, 403, 400…): asking again cannot help.
          it.resolve(refused);
          return;
        }
        if (!r) {
          // The whole batch failed (or the server left this one out): try again later.
          if (!this.#retry(it, false)) it.resolve(lastFailure(failure));
          return;
        }
        if (r.status === 424) {
          // Never ran: its predecessor in the chain failed. Not the item's fault: no attempt counted.
          it.notBefore = 0;
          this.#enqueue(it, true);
          return;
        }
        if (THROTTLED.has(r.status)) {
          this.stats.throttledItems++;
          const after = Number(header(r.headers, 'Retry-After'));
          if (this.#retry(it, true, Number.isFinite(after) && after >= 0 ? after * 1000 : null)) return;
        }
        it.resolve({ status: r.status, headers: r.headers ?? {}, body: r.body });
      });
    } finally {
      for (const [mb, n] of batch.chains) {
        const left = (this.#busy.get(mb) ?? 0) - n;
        if (left > 0) this.#busy.set(mb, left);
        else this.#busy.delete(mb);
      }
    }
  }
}
