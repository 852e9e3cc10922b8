// Google Calendar provider (googleapis v3).
// - Event ids are ours (deterministic base32hex), so a create that finds the id taken (409: a lost mapping, a
//   crash after the insert, or a deleted event lingering as `cancelled`) adopts it with a full update, which
//   also sets it back to confirmed. A delete answered 404/410 is done.
// - gaxios never retries POST/PATCH or a 403 by itself (and we switch its retries off to count them): 429 and
//   403 rateLimitExceeded/userRateLimitExceeded back off exponentially here; quotaExceeded pauses the calendar.
// - Writes are paced per Google account, calendars are worked on in parallel up to `concurrency`.
// - Ownership: private extended properties `rostercal` = school:target (the ONE key listings filter on),
//   `rostercalSession` = calendar/session and `rostercalHash` = content hash.

import { type Auth, type calendar_v3, google } from 'googleapis';
import type { CalendarEvent } from '../calendar/types.ts';
import type { Instant } from '../domain/types.ts';
import { scrubSecrets } from '../log.ts';
import { mapLimit } from '../sync/concurrency.ts';
import { GoogleAuthError, googleAuthClient } from './google-auth.ts';
import {
  contentHash,
  type EventIdentity,
  googleEventId,
  ownerTag,
  parseSessionTag,
  sessionTag,
} from './identity.ts';
import { backoffDelay, Pacer, sleep } from './pace.ts';
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
} from './provider.ts';
import type { GoogleSettings } from './targets.ts';

const OWNER_KEY = 'rostercal';
const SESSION_KEY = 'rostercalSession';
const HASH_KEY = 'rostercalHash';
/** Bumped when the mapping from CalendarEvent to Google fields changes: every event then gets rewritten. */
const FORMAT = 'g1';

class PausedError extends Error {}

interface Failure {
  status: number | null;
  reason: string | null;
  message: string;
}

function failureOf(err: unknown): Failure {
  if (err instanceof GoogleAuthError) return { status: null, reason: 'auth', message: err.message };
  const e = err as {
    response?: { status?: number; data?: { error?: { message?: string; errors?: { reason?: string }[] } } };
    code?: string;
    message?: string;
  };
  const status = e.response?.status ?? null;
  const reason = e.response?.data?.error?.errors?.[0]?.reason ?? null;
  // Google's front end may quote the request's Authorization header back: redact before anyone sees it.
  const message = scrubSecrets(e.response?.data?.error?.message ?? e.message ?? String(err));
  return {
    status,
    reason,
    message: status ? `${status} ${reason ?? ''} ${message}`.replace(/\s+/g, ' ').trim() : message,
  };
}

function isThrottle(f: Failure): boolean {
  return (
    f.status === 429 ||
    (f.status === 403 && (f.reason === 'rateLimitExceeded' || f.reason === 'userRateLimitExceeded'))
  );
}

/** A 4xx that no retry can change (not throttling, not a timeout). */
function isRefusal(f: Failure): boolean {
  return f.status !== null && f.status >= 400 && f.status < 500 && f.status !== 408 && !isThrottle(f);
}

function isQuota(f: Failure): boolean {
  return f.status === 403 && (f.reason === 'quotaExceeded' || f.reason === 'dailyLimitExceeded');
}

function isTransient(f: Failure): boolean {
  return f.reason !== 'auth' && (f.status === null || f.status >= 500 || f.status === 408);
}

function locationText(ev: CalendarEvent): string | undefined {
  const l = ev.location;
  if (!l) return undefined;
  if (l.address && !l.name.includes(l.address)) return l.name ? `${l.name}, ${l.address}` : l.address;
  return l.name || undefined;
}

export interface GoogleProviderOptions {
  schoolId: string;
  targetId: string;
  settings: GoogleSettings;
  /** Staff scope with mode primary/secondary: each calendar's owner is the delegated account. */
  delegated: boolean;
}

export class GoogleProvider implements PushProvider {
  readonly kind = 'google' as const;
  readonly #o: GoogleProviderOptions;
  readonly #apis = new Map<string, calendar_v3.Calendar>();
  readonly #auths = new Map<string, Auth.OAuth2Client>();
  readonly #pacers = new Map<string, Pacer>();
  readonly #calendarLists = new Map<string, Promise<calendar_v3.Schema$CalendarListEntry[]>>();
  readonly #stats: ProviderStats = { requests: 0, retries: 0, throttled: 0 };
  readonly #owner: string;

  constructor(o: GoogleProviderOptions) {
    this.#o = o;
    this.#owner = ownerTag(o.schoolId, o.targetId);
  }

  stats(): ProviderStats {
    return { ...this.#stats };
  }

  /** Account key: '' is the target's own account; otherwise the delegated user. */
  #account(owner: string | null): string {
    return this.#o.delegated && owner ? owner : '';
  }

  #auth(account: string): Auth.OAuth2Client {
    let auth = this.#auths.get(account);
    if (!auth) {
      auth = googleAuthClient(this.#o.settings.auth, account === '' ? undefined : account);
      this.#auths.set(account, auth);
    }
    return auth;
  }

  #api(account: string): calendar_v3.Calendar {
    let api = this.#apis.get(account);
    if (!api) {
      api = google.calendar({
        version: 'v3',
        auth: this.#auth(account),
        rootUrl: this.#o.settings.rootUrl,
        retry: false,
      });
      this.#apis.set(account, api);
    }
    return api;
  }

  #pacer(account: string): Pacer {
    let p = this.#pacers.get(account);
    if (!p) {
      p = new Pacer(this.#o.settings.writesPerSecond);
      this.#pacers.set(account, p);
    }
    return p;
  }

  /** One API call with pacing (writes), counting, backoff on throttling and transient failures. */
  async #call<T>(account: string, write: boolean, fn: (api: calendar_v3.Calendar) => Promise<T>): Promise<T> {
    const b = this.#o.settings.backoff;
    for (let attempt = 0; ; attempt++) {
      if (write) await this.#pacer(account).take();
      this.#stats.requests++;
      try {
        return await fn(this.#api(account));
      } catch (err) {
        const f = failureOf(err);
        if (isQuota(f)) throw new PausedError(f.message);
        const throttle = isThrottle(f);
        if (throttle) this.#stats.throttled++;
        if ((throttle || isTransient(f)) && attempt < b.maxRetries) {
          this.#stats.retries++;
          await sleep(backoffDelay(attempt, b));
          continue;
        }
        throw err;
      }
    }
  }

  eventIdFor(identity: EventIdentity): string {
    return googleEventId(identity);
  }

  render(ev: CalendarEvent, identity: EventIdentity): Rendered {
    const content = {
      summary: ev.title,
      description: ev.description,
      location: locationText(ev),
      start: { dateTime: ev.start, timeZone: ev.timeZone },
      end: { dateTime: ev.end, timeZone: ev.timeZone },
      // A cancelled session stays visible (its title says so) but no longer blocks time; Google's own
      // `cancelled` status would delete it.
      status: ev.status === 'tentative' ? 'tentative' : 'confirmed',
      transparency: ev.status === 'cancelled' ? 'transparent' : 'opaque',
    };
    const hash = contentHash({ format: FORMAT, ...content });
    const body: calendar_v3.Schema$Event = {
      ...content,
      extendedProperties: {
        private: {
          [OWNER_KEY]: this.#owner,
          [SESSION_KEY]: sessionTag(identity.calendarKey, identity.sessionId),
          [HASH_KEY]: hash,
        },
      },
    };
    return { body, hash };
  }

  async #calendarList(account: string): Promise<calendar_v3.Schema$CalendarListEntry[]> {
    let p = this.#calendarLists.get(account);
    if (!p) {
      p = (async () => {
        const out: calendar_v3.Schema$CalendarListEntry[] = [];
        let pageToken: string | undefined;
        do {
          const res = await this.#call(account, false, (api) =>
            api.calendarList.list({ maxResults: 250, ...(pageToken ? { pageToken } : {}) }),
          );
          out.push(...(res.data.items ?? []));
          pageToken = res.data.nextPageToken ?? undefined;
        } while (pageToken);
        return out;
      })();
      this.#calendarLists.set(account, p);
      p.catch(() => this.#calendarLists.delete(account));
    }
    return p;
  }

  /** Calendars made publicly readable in this process (calendars.familiesMayAdd): once each. */
  readonly #publicRead = new Set<string>();

  /** The public reader rule that lets families add a calendar (`calendars.familiesMayAdd`); idempotent. */
  async #familiesMayRead(account: string, calendarId: string): Promise<void> {
    if (!this.#o.settings.calendars.familiesMayAdd || this.#publicRead.has(calendarId)) return;
    await this.#call(account, true, (api) =>
      api.acl.insert({
        calendarId,
        sendNotifications: false,
        requestBody: { role: 'reader', scope: { type: 'default' } },
      }),
    );
    this.#publicRead.add(calendarId);
  }

  async #ensureOne(spec: CalendarSpec, dryRun: boolean): Promise<EnsureResult> {
    const mode = this.#o.settings.calendars.mode;
    const account = this.#account(spec.owner);
    if (this.#o.delegated && !spec.owner)
      return { ok: false, skip: true, reason: `${spec.key}: no email address to act as` };
    try {
      if (mode === 'primary') {
        if (spec.remoteCalendarId)
          return { ok: true, remoteCalendarId: spec.remoteCalendarId, created: false };
        // Proves delegation works for this account before we plan writes into it.
        await this.#call(account, false, (api) => api.calendars.get({ calendarId: 'primary' }));
        return { ok: true, remoteCalendarId: 'primary', created: false };
      }
      if (spec.remoteCalendarId) {
        if (!dryRun) await this.#familiesMayRead(account, spec.remoteCalendarId);
        return { ok: true, remoteCalendarId: spec.remoteCalendarId, created: false };
      }
      const found = (await this.#calendarList(account)).find((c) => c.description?.includes(spec.marker));
      if (found?.id) {
        if (!dryRun) await this.#familiesMayRead(account, found.id);
        return { ok: true, remoteCalendarId: found.id, created: false };
      }
      if (dryRun) return { ok: true, remoteCalendarId: '', created: true };
      const created = await this.#call(account, true, (api) =>
        api.calendars.insert({
          requestBody: { summary: spec.name, description: spec.description, timeZone: spec.timeZone },
        }),
      );
      const id = created.data.id;
      if (!id) return { ok: false, skip: false, reason: `${spec.key}: calendar insert returned no id` };
      for (const rule of this.#o.settings.calendars.share) {
        const value = rule.value?.includes('{email}')
          ? spec.memberEmail
            ? rule.value.replaceAll('{email}', spec.memberEmail)
            : null
          : rule.value;
        if (rule.type !== 'default' && !value) continue;
        await this.#call(account, true, (api) =>
          api.acl.insert({
            calendarId: id,
            sendNotifications: false,
            requestBody: { role: rule.role, scope: { type: rule.type, ...(value ? { value } : {}) } },
          }),
        );
      }
      await this.#familiesMayRead(account, id);
      return { ok: true, remoteCalendarId: id, created: true };
    } catch (err) {
      const f = err instanceof PausedError ? { message: `quota exceeded: ${err.message}` } : failureOf(err);
      const skip = err instanceof GoogleAuthError ? err.accountProblem : false;
      return { ok: false, skip, reason: `${spec.key}: ${f.message}` };
    }
  }

  async ensureCalendars(
    specs: CalendarSpec[],
    opts: { dryRun: boolean },
  ): Promise<Map<string, EnsureResult>> {
    const results = await mapLimit(specs, this.#o.settings.concurrency, (s) =>
      this.#ensureOne(s, opts.dryRun),
    );
    return new Map(specs.map((s, i) => [s.key, results[i]!]));
  }

  async #listOne(cal: CalendarRef, window: { from: Instant; to: Instant }): Promise<ListResult> {
    const account = this.#account(cal.owner);
    const events: RemoteEvent[] = [];
    try {
      let pageToken: string | undefined;
      do {
        const res = await this.#call(account, false, (api) =>
          api.events.list({
            calendarId: cal.remoteCalendarId,
            privateExtendedProperty: [`${OWNER_KEY}=${this.#owner}`],
            timeMin: window.from,
            timeMax: window.to,
            showDeleted: true,
            maxResults: 2500,
            ...(pageToken ? { pageToken } : {}),
          }),
        );
        for (const e of res.data.items ?? []) {
          if (!e.id) continue;
          const props = e.extendedProperties?.private ?? {};
          const tag = parseSessionTag(props[SESSION_KEY]);
          events.push({
            remoteEventId: e.id,
            calendarKey: tag?.calendarKey ?? null,
            sessionId: tag?.sessionId ?? null,
            hash: props[HASH_KEY] ?? null,
            start: e.start?.dateTime ? new Date(e.start.dateTime).toISOString() : null,
            end: e.end?.dateTime ? new Date(e.end.dateTime).toISOString() : null,
            live: e.status !== 'cancelled',
          });
        }
        pageToken = res.data.nextPageToken ?? undefined;
      } while (pageToken);
      return { ok: true, events };
    } catch (err) {
      if (err instanceof PausedError)
        return { ok: false, paused: true, reason: `quota exceeded: ${err.message}` };
      const f = failureOf(err);
      if (f.status === 404) return { ok: false, gone: true, reason: `calendar not found: ${f.message}` };
      return { ok: false, reason: f.message, skip: err instanceof GoogleAuthError && err.accountProblem };
    }
  }

  async listOwned(
    calendars: CalendarRef[],
    window: { from: Instant; to: Instant },
  ): Promise<Map<string, ListResult>> {
    const results = await mapLimit(calendars, this.#o.settings.concurrency, (c) => this.#listOne(c, window));
    return new Map(calendars.map((c, i) => [c.key, results[i]!]));
  }

  async #put(account: string, calendarId: string, eventId: string, body: unknown) {
    return this.#call(account, true, (api) =>
      api.events.update({
        calendarId,
        eventId,
        sendUpdates: 'none',
        requestBody: body as calendar_v3.Schema$Event,
      }),
    );
  }

  async #insert(account: string, calendarId: string, eventId: string, body: unknown): Promise<WriteResult> {
    try {
      await this.#call(account, true, (api) =>
        api.events.insert({
          calendarId,
          sendUpdates: 'none',
          requestBody: { ...(body as calendar_v3.Schema$Event), id: eventId },
        }),
      );
      return { ok: true, remoteEventId: eventId };
    } catch (err) {
      const status = failureOf(err).status;
      // Inserting into a calendar answers 404 only when the calendar itself is gone.
      if (status === 404)
        return { ok: false, calendarGone: true, reason: 'calendar not found (deleted in Google?)' };
      // 409: the id exists (perhaps as a cancelled event): adopt it, and the update makes it confirmed again.
      if (status !== 409) throw err;
      await this.#put(account, calendarId, eventId, body);
      return { ok: true, remoteEventId: eventId, adopted: true };
    }
  }

  async #applyOne(op: WriteOp): Promise<WriteResult> {
    const account = this.#account(op.calendar.owner);
    const calendarId = op.calendar.remoteCalendarId;
    switch (op.kind) {
      case 'create':
        return this.#insert(
          account,
          calendarId,
          op.remoteEventId ?? googleEventId(op.identity),
          op.rendered.body,
        );
      case 'update':
        try {
          await this.#put(account, calendarId, op.remoteEventId, op.rendered.body);
          return { ok: true, remoteEventId: op.remoteEventId };
        } catch (err) {
          const s = failureOf(err).status;
          if (s !== 404 && s !== 410) throw err;
          const r = await this.#insert(account, calendarId, op.remoteEventId, op.rendered.body);
          return r.ok ? { ...r, recreated: true } : r;
        }
      case 'delete':
        try {
          await this.#call(account, true, (api) =>
            api.events.delete({ calendarId, eventId: op.remoteEventId, sendUpdates: 'none' }),
          );
        } catch (err) {
          const s = failureOf(err).status;
          if (s !== 404 && s !== 410) throw err;
        }
        return { ok: true, remoteEventId: null };
    }
  }

  async apply(ops: WriteOp[]): Promise<WriteResult[]> {
    if (this.#o.settings.batchSize > 1) return this.#applyBatched(ops);
    const results = new Array<WriteResult>(ops.length);
    const byCalendar = new Map<string, number[]>();
    ops.forEach((op, i) => {
      const list = byCalendar.get(op.calendar.key) ?? [];
      list.push(i);
      byCalendar.set(op.calendar.key, list);
    });
    await mapLimit([...byCalendar.values()], this.#o.settings.concurrency, async (indexes) => {
      let paused: string | null = null;
      for (const i of indexes) {
        const op = ops[i]!;
        if (paused) {
          results[i] = { ok: false, paused: true, reason: paused };
          continue;
        }
        try {
          results[i] = await this.#applyOne(op);
        } catch (err) {
          if (err instanceof PausedError) {
            paused = `quota exceeded: ${err.message}`;
            results[i] = { ok: false, paused: true, reason: paused };
          } else {
            const skip = err instanceof GoogleAuthError && err.accountProblem;
            results[i] = { ok: false, reason: failureOf(err).message, ...(skip ? { skip } : {}) };
          }
        }
      }
    });
    return results;
  }

  // --- batching: POST {rootUrl}batch/calendar/v3, multipart/mixed, up to batchSize requests per round trip.
  // Each part is paced and counted against quota like a single request; the parts are checked one by one.

  async #applyBatched(ops: WriteOp[]): Promise<WriteResult[]> {
    const results = new Array<WriteResult>(ops.length);
    const byAccount = new Map<string, number[]>();
    ops.forEach((op, i) => {
      const account = this.#account(op.calendar.owner);
      const list = byAccount.get(account) ?? [];
      list.push(i);
      byAccount.set(account, list);
    });
    await mapLimit([...byAccount], this.#o.settings.concurrency, ([account, indexes]) =>
      this.#runAccount(account, indexes, ops, results),
    );
    return results;
  }

  async #runAccount(
    account: string,
    indexes: number[],
    ops: WriteOp[],
    results: WriteResult[],
  ): Promise<void> {
    const { batchSize, concurrency } = this.#o.settings;
    const stageOf = (op: WriteOp): Stage =>
      op.kind === 'create' ? 'insert' : op.kind === 'update' ? 'put' : 'delete';
    let queue: Pending[] = indexes.map((i) => ({ i, stage: stageOf(ops[i]!), attempts: 0, notBefore: 0 }));
    const stopped = new Map<string, WriteResult>(); // calendar key → the result every later op of it gets
    while (queue.length) {
      queue = queue.filter((p) => {
        const stop = stopped.get(ops[p.i]!.calendar.key);
        if (stop) results[p.i] = stop;
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
      const next = await Promise.all(batches.map((b) => this.#sendBatch(account, b, ops, results, stopped)));
      for (const again of next) queue.push(...again);
    }
  }

  /** Sends one batch; returns the items to send again (throttled, or needing a second step). */
  async #sendBatch(
    account: string,
    items: Pending[],
    ops: WriteOp[],
    results: WriteResult[],
    stopped: Map<string, WriteResult>,
  ): Promise<Pending[]> {
    const b = this.#o.settings.backoff;
    const again: Pending[] = [];
    const retry = (p: Pending, reason: string, throttled: boolean) => {
      if (throttled) this.#stats.throttled++;
      if (p.attempts >= b.maxRetries) {
        results[p.i] = { ok: false, reason };
        return;
      }
      this.#stats.retries++;
      p.notBefore = Date.now() + backoffDelay(p.attempts, b);
      p.attempts++;
      again.push(p);
    };
    let token: string;
    try {
      token = (await this.#auth(account).getAccessToken()).token ?? '';
    } catch (err) {
      const skip = err instanceof GoogleAuthError && err.accountProblem;
      for (const p of items)
        results[p.i] = { ok: false, reason: failureOf(err).message, ...(skip ? { skip } : {}) };
      return [];
    }
    const pacer = this.#pacer(account);
    for (const _ of items) await pacer.take();
    const boundary = `rostercal_${Math.random().toString(36).slice(2)}`;
    const body = items
      .map((p, n) => {
        const part = this.#part(ops[p.i]!, p.stage);
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
    this.#stats.requests++;
    let responses: Map<number, { status: number; json: unknown }>;
    try {
      const res = await fetch(new URL('batch/calendar/v3', this.#o.settings.rootUrl), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': `multipart/mixed; boundary=${boundary}`,
        },
        body,
      });
      const text = await res.text();
      if (res.status !== 200) {
        const f = failureOf({ response: { status: res.status, data: safeJson(text) } });
        if (isQuota(f)) {
          for (const p of items)
            results[p.i] = { ok: false, paused: true, reason: `quota exceeded: ${f.message}` };
          return [];
        }
        if (isRefusal(f)) {
          // 401, 403 forbidden…: the whole batch was refused; asking again cannot help.
          for (const p of items) results[p.i] = { ok: false, reason: f.message };
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
      const op = ops[p.i]!;
      const r = responses.get(n);
      if (!r) {
        retry(p, 'no answer in the batch response', false);
        return;
      }
      const f = failureOf({ response: { status: r.status, data: r.json } });
      const ok = r.status >= 200 && r.status < 300;
      if (isQuota(f)) {
        const paused: WriteResult = { ok: false, paused: true, reason: `quota exceeded: ${f.message}` };
        results[p.i] = paused;
        stopped.set(op.calendar.key, paused);
        return;
      }
      if (isThrottle(f) || (!ok && isTransient(f))) {
        retry(p, f.message, isThrottle(f));
        return;
      }
      const id = op.kind === 'delete' ? op.remoteEventId : (op.remoteEventId ?? googleEventId(op.identity));
      switch (p.stage) {
        case 'delete':
          results[p.i] =
            ok || r.status === 404 || r.status === 410
              ? { ok: true, remoteEventId: null }
              : { ok: false, reason: f.message };
          return;
        case 'insert':
          if (ok)
            results[p.i] = {
              ok: true,
              remoteEventId: id,
              ...(op.kind === 'update' ? { recreated: true } : {}),
            };
          else if (r.status === 409) again.push({ ...p, stage: 'adopt', notBefore: 0 });
          else if (r.status === 404) {
            const gone: WriteResult = {
              ok: false,
              calendarGone: true,
              reason: 'calendar not found (deleted in Google?)',
            };
            results[p.i] = gone;
            stopped.set(op.calendar.key, gone);
          } else results[p.i] = { ok: false, reason: f.message };
          return;
        case 'adopt':
          results[p.i] = ok
            ? { ok: true, remoteEventId: id, ...(op.kind === 'create' ? { adopted: true } : {}) }
            : { ok: false, reason: f.message };
          return;
        case 'put':
          if (ok) results[p.i] = { ok: true, remoteEventId: id };
          else if (r.status === 404 || r.status === 410) again.push({ ...p, stage: 'insert', notBefore: 0 });
          else results[p.i] = { ok: false, reason: f.message };
          return;
      }
    });
    return again;
  }

  #part(op: WriteOp, stage: Stage): { method: string; path: string; body?: unknown } {
    const events = `/calendar/v3/calendars/${encodeURIComponent(op.calendar.remoteCalendarId)}/events`;
    const id = op.kind === 'delete' ? op.remoteEventId : (op.remoteEventId ?? googleEventId(op.identity));
    switch (stage) {
      case 'delete':
        return { method: 'DELETE', path: `${events}/${encodeURIComponent(id)}?sendUpdates=none` };
      case 'insert':
        return {
          method: 'POST',
          path: `${events}?sendUpdates=none`,
          body: { ...(renderedBody(op) as object), id },
        };
      case 'put':
      case 'adopt':
        return {
          method: 'PUT',
          path: `${events}/${encodeURIComponent(id)}?sendUpdates=none`,
          body: renderedBody(op),
        };
    }
  }
}

type Stage = 'insert' | 'adopt' | 'put' | 'delete';

interface Pending {
  i: number;
  stage: Stage;
  attempts: number;
  notBefore: number;
}

function renderedBody(op: WriteOp): unknown {
  return op.kind === 'delete' ? undefined : op.rendered.body;
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
