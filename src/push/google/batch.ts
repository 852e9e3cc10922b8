// The batch engine (batchSize > 1): POST {rootUrl}batch/calendar/v3, multipart/mixed, up to batchSize requests
// per round trip, accounts in parallel up to `concurrency`. Each part is paced and counted against quota like
// a single request; the parts are checked one by one — throttled ones come back later, a create whose id is
// taken becomes an adoption (PUT), an update of a vanished event becomes an insert.
import { mapLimit } from '../../util/concurrency.ts';
import { nextRetryDelay, sleep } from '../../util/retry.ts';
import type { WriteOp, WriteResult } from '../provider.ts';
import { googleEventId } from '../stable-ids.ts';
import {
  failureOf,
  type GoogleClients,
  isAccountProblem,
  isQuota,
  isRefusal,
  isThrottle,
  isTransient,
} from './clients.ts';

type Stage = 'insert' | 'adopt' | 'put' | 'delete';

interface Pending {
  i: number;
  stage: Stage;
  attempts: number;
  /** Times throttled (counted apart from attempts). */
  throttled?: number;
  notBefore: number;
}

/** How often one write may be throttled before it is reported as failed. */
const THROTTLED_RETRIES = 24;

/** One account's share of an apply call. */
interface AccountRun {
  c: GoogleClients;
  account: string;
  ops: WriteOp[];
  results: WriteResult[];
  /** calendar key → the result every later op of it gets (quota exceeded, calendar gone). */
  stopped: Map<string, WriteResult>;
}

export async function applyBatched(c: GoogleClients, ops: WriteOp[]): Promise<WriteResult[]> {
  const results = new Array<WriteResult>(ops.length);
  const byAccount = new Map<string, number[]>();
  ops.forEach((op, i) => {
    const account = c.account(op.calendar.owner);
    const list = byAccount.get(account) ?? [];
    list.push(i);
    byAccount.set(account, list);
  });
  await mapLimit([...byAccount], c.settings.concurrency, ([account, indexes]) =>
    runAccount({ c, account, ops, results, stopped: new Map() }, indexes),
  );
  return results;
}

async function runAccount(run: AccountRun, indexes: number[]): Promise<void> {
  const { batchSize, concurrency } = run.c.settings;
  const stageOf = (op: WriteOp): Stage =>
    op.kind === 'create' ? 'insert' : op.kind === 'update' ? 'put' : 'delete';
  let queue: Pending[] = indexes.map((i) => ({ i, stage: stageOf(run.ops[i]!), attempts: 0, notBefore: 0 }));
  while (queue.length) {
    queue = queue.filter((p) => {
      const stop = run.stopped.get(run.ops[p.i]!.calendar.key);
      if (stop) run.results[p.i] = stop;
      return !stop;
    });
    const now = Date.now();
    const ready = queue.filter((p) => p.notBefore <= now).slice(0, batchSize * concurrency);
    if (ready.length === 0) {
      if (queue.length) await sleep(Math.max(1, Math.min(...queue.map((p) => p.notBefore)) - now));
      continue;
    }
    const taken = new Set(ready);
    queue = queue.filter((p) => !taken.has(p));
    const batches: Pending[][] = [];
    for (let k = 0; k < ready.length; k += batchSize) batches.push(ready.slice(k, k + batchSize));
    const next = await Promise.all(batches.map((b) => sendBatch(run, b)));
    for (const again of next) queue.push(...again);
  }
}

/** Sends one batch; returns the items to send again (throttled, or needing a second step). */
async function sendBatch(run: AccountRun, items: Pending[]): Promise<Pending[]> {
  const { c, results } = run;
  const policy = c.retryPolicy;
  const again: Pending[] = [];
  const retry = (p: Pending, reason: string, throttled: boolean) => {
    if (throttled) c.stats.throttled++;
    // Throttling is not a failure of the write: it has its own, larger bound, so that at 30 % throttling
    // (batch and part alike) maxRetries does not lose writes.
    const tries = throttled ? (p.throttled ?? 0) : p.attempts;
    const delay = nextRetryDelay(policy, tries, {
      limit: throttled ? THROTTLED_RETRIES : policy.maxRetries,
      step: Math.min(tries, policy.maxRetries),
    });
    if (delay === null) {
      results[p.i] = { ok: false, kind: 'error', reason };
      return;
    }
    c.stats.retries++;
    p.notBefore = Date.now() + delay;
    if (throttled) p.throttled = tries + 1;
    else p.attempts++;
    again.push(p);
  };
  let token: string;
  try {
    token = (await c.auth(run.account).getAccessToken()).token ?? '';
  } catch (err) {
    const kind = isAccountProblem(err) ? 'account' : 'error';
    for (const p of items) results[p.i] = { ok: false, kind, reason: failureOf(err).message };
    return [];
  }
  const pacer = c.pacer(run.account);
  for (const _ of items) await pacer.take();
  const boundary = `rostercal_${Math.random().toString(36).slice(2)}`;
  c.stats.requests++;
  let responses: Map<number, { status: number; json: unknown }>;
  try {
    const res = await fetch(new URL('batch/calendar/v3', c.settings.rootUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/mixed; boundary=${boundary}` },
      body: batchBody(run.ops, items, boundary),
      // The round trip's time limit, answer included: a batch never answered is retried like a dropped
      // connection (its inserts carry stable ids: repeated ones find them taken, 409, and adopt).
      signal: AbortSignal.timeout(c.settings.requestTimeoutMs),
    });
    const text = await res.text();
    if (res.status !== 200) {
      const f = failureOf({ response: { status: res.status, data: safeJson(text) } });
      if (isQuota(f)) {
        for (const p of items)
          results[p.i] = { ok: false, kind: 'quota', reason: `quota exceeded: ${f.message}` };
        return [];
      }
      if (isRefusal(f)) {
        // 401, 403 forbidden…: the whole batch was refused; asking again cannot help.
        for (const p of items) results[p.i] = { ok: false, kind: 'error', reason: f.message };
        return [];
      }
      for (const p of items) retry(p, f.message, isThrottle(f));
      return again;
    }
    responses = parseBatchResponse(text, res.headers.get('content-type') ?? '');
  } catch (err) {
    for (const p of items) retry(p, failureOf(err).message, false);
    return again;
  }
  items.forEach((p, n) => {
    const r = responses.get(n);
    if (!r) retry(p, 'no answer in the batch response', false);
    else settle(run, p, r, again, retry);
  });
  return again;
}

/** One part's answer: a result, or the item back in the queue (retry, or its next stage). */
function settle(
  run: AccountRun,
  p: Pending,
  r: { status: number; json: unknown },
  again: Pending[],
  retry: (p: Pending, reason: string, throttled: boolean) => void,
): void {
  const op = run.ops[p.i]!;
  const f = failureOf({ response: { status: r.status, data: r.json } });
  const ok = r.status >= 200 && r.status < 300;
  const stop = (result: WriteResult) => {
    run.results[p.i] = result;
    run.stopped.set(op.calendar.key, result);
  };
  if (isQuota(f)) {
    stop({ ok: false, kind: 'quota', reason: `quota exceeded: ${f.message}` });
    return;
  }
  if (isThrottle(f) || (!ok && isTransient(f))) {
    retry(p, f.message, isThrottle(f));
    return;
  }
  const id = eventIdOf(op);
  const failed: WriteResult = { ok: false, kind: 'error', reason: f.message };
  switch (p.stage) {
    case 'delete':
      run.results[p.i] =
        ok || r.status === 404 || r.status === 410 ? { ok: true, remoteEventId: null } : failed;
      return;
    case 'insert':
      if (ok)
        run.results[p.i] = {
          ok: true,
          remoteEventId: id,
          ...(op.kind === 'update' ? { recreated: true } : {}),
        };
      else if (r.status === 409) again.push({ ...p, stage: 'adopt', notBefore: 0 });
      else if (r.status === 404)
        stop({ ok: false, kind: 'calendar-gone', reason: 'calendar not found (deleted in Google?)' });
      else run.results[p.i] = failed;
      return;
    case 'adopt':
      run.results[p.i] = ok
        ? { ok: true, remoteEventId: id, ...(op.kind === 'create' ? { adopted: true } : {}) }
        : failed;
      return;
    case 'put':
      if (ok) run.results[p.i] = { ok: true, remoteEventId: id };
      else if (r.status === 404 || r.status === 410) again.push({ ...p, stage: 'insert', notBefore: 0 });
      else run.results[p.i] = failed;
      return;
  }
}

function eventIdOf(op: WriteOp): string {
  return op.kind === 'delete' ? op.remoteEventId : (op.remoteEventId ?? googleEventId(op.identity));
}

function batchBody(ops: WriteOp[], items: Pending[], boundary: string): string {
  return items
    .map((p, n) => {
      const part = partOf(ops[p.i]!, p.stage);
      return (
        `--${boundary}\r\nContent-Type: application/http\r\nContent-ID: <item${n}>\r\n\r\n` +
        `${part.method} ${part.path}\r\n` +
        (part.body === undefined
          ? '\r\n'
          : `Content-Type: application/json\r\n\r\n${JSON.stringify(part.body)}\r\n`)
      );
    })
    .join('')
    .concat(`--${boundary}--\r\n`);
}

function partOf(op: WriteOp, stage: Stage): { method: string; path: string; body?: unknown } {
  const events = `/calendar/v3/calendars/${encodeURIComponent(op.calendar.remoteCalendarId)}/events`;
  const id = eventIdOf(op);
  const body = op.kind === 'delete' ? undefined : op.rendered.body;
  switch (stage) {
    case 'delete':
      return { method: 'DELETE', path: `${events}/${encodeURIComponent(id)}?sendUpdates=none` };
    case 'insert':
      return { method: 'POST', path: `${events}?sendUpdates=none`, body: { ...(body as object), id } };
    case 'put':
    case 'adopt':
      return { method: 'PUT', path: `${events}/${encodeURIComponent(id)}?sendUpdates=none`, body };
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Parts of a multipart/mixed batch answer, by the number in their `Content-ID: <response-itemN>`. */
export function parseBatchResponse(
  text: string,
  contentType: string,
): Map<number, { status: number; json: unknown }> {
  const out = new Map<number, { status: number; json: unknown }>();
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (!boundary) return out;
  for (const part of text.split(`--${boundary}`).slice(1)) {
    if (part.startsWith('--')) break;
    const id = /Content-ID:\s*<response-item(\d+)>/i.exec(part)?.[1];
    const status = /HTTP\/1\.1 (\d{3})/.exec(part)?.[1];
    if (id === undefined || status === undefined) continue;
    const afterStatus = part.slice(part.search(/HTTP\/1\.1 \d{3}/));
    const sep = afterStatus.search(/\r?\n\r?\n/);
    const bodyText = sep < 0 ? '' : afterStatus.slice(sep).trim();
    out.set(Number(id), { status: Number(status), json: bodyText ? safeJson(bodyText) : null });
  }
  return out;
}
