// Finding or creating a target's Google calendars: the account's primary calendar, one known from an earlier
// run, one found by the ownership marker in its description, or a new one shared as the settings say (and made
// publicly readable when families may add it).
import type { calendar_v3 } from '@googleapis/calendar';
import type { CalendarSpec, EnsureResult } from '../provider.ts';
import { markerGeneration } from '../stable-ids.ts';
import { failureOf, type GoogleClients, isAccountProblem, PausedError } from './clients.ts';

function isGone(err: unknown): boolean {
  const status = failureOf(err).status;
  return status === 404 || status === 410;
}

export class GoogleCalendars {
  readonly #c: GoogleClients;
  readonly #calendarLists = new Map<string, Promise<calendar_v3.Schema$CalendarListEntry[]>>();
  /** Calendars made publicly readable in this process (calendars.familiesMayAdd): once each. */
  readonly #publicRead = new Set<string>();

  /** Whose calendars: the school and target named in every calendar's marker. */
  readonly #owner: { school: string; target: string };

  constructor(clients: GoogleClients, owner: { school: string; target: string }) {
    this.#c = clients;
    this.#owner = owner;
  }

  async ensure(spec: CalendarSpec, dryRun: boolean): Promise<EnsureResult> {
    const mode = this.#c.settings.calendars.mode;
    const account = this.#c.account(spec.owner);
    if (this.#c.delegated && !spec.owner)
      return { ok: false, kind: 'account', reason: `${spec.key}: no email address to act as` };
    try {
      if (mode === 'primary') {
        if (spec.remoteCalendarId)
          return { ok: true, remoteCalendarId: spec.remoteCalendarId, created: false };
        // Proves delegation works for this account before we plan writes into it.
        await this.#c.call(account, false, (api) => api.calendars.get({ calendarId: 'primary' }));
        return { ok: true, remoteCalendarId: 'primary', created: false };
      }
      if (spec.generation !== undefined) return await this.#ensurePublic(account, spec, dryRun);
      const known =
        spec.remoteCalendarId ||
        (await this.#calendarList(account)).find((c) => c.description?.includes(spec.marker))?.id;
      if (known) {
        if (!dryRun) await this.#familiesMayRead(account, known);
        return { ok: true, remoteCalendarId: known, created: false };
      }
      if (dryRun) return { ok: true, remoteCalendarId: '', created: true };
      return await this.#create(account, spec);
    } catch (err) {
      const f = err instanceof PausedError ? { message: `quota exceeded: ${err.message}` } : failureOf(err);
      return {
        ok: false,
        kind: isAccountProblem(err) ? 'account' : 'error',
        reason: `${spec.key}: ${f.message}`,
      };
    }
  }

  /**
   * A public calendar (`calendars.familiesMayAdd`) is found by its marker, never by the stored id alone: after a
   * rotation (or a lost database, or a crash mid-replacement) the account may hold calendars of earlier
   * generations. The newest generation is kept (or created); every other one loses its public rule now and is
   * handed back to be deleted once the kept one is complete. An older calendar is never adopted.
   */
  async #ensurePublic(account: string, spec: CalendarSpec, dryRun: boolean): Promise<EnsureResult> {
    const { school, target } = this.#owner;
    const found = (await this.#calendarList(account))
      .map((c) => ({ id: c.id, gen: markerGeneration(c.description, school, target, spec.key) }))
      .filter((c): c is { id: string; gen: number } => Boolean(c.id) && c.gen !== null);
    const wanted = Math.max(spec.generation ?? 1, ...found.map((c) => c.gen));
    const keep =
      found.find((c) => c.gen === wanted && c.id === spec.remoteCalendarId) ??
      found.find((c) => c.gen === wanted);
    const retire = found.filter((c) => c !== keep).map((c) => c.id);
    if (dryRun) return { ok: true, remoteCalendarId: keep?.id ?? '', created: !keep, retire };
    for (const id of retire) await this.closePublic(account, id);
    if (keep) {
      await this.#familiesMayRead(account, keep.id);
      return { ok: true, remoteCalendarId: keep.id, created: false, retire };
    }
    const made = await this.#create(account, spec);
    return made.ok ? { ...made, retire } : made;
  }

  /** Removes the public reader rule of a calendar (a replaced one): idempotent, a missing rule or calendar is fine. */
  async closePublic(account: string, calendarId: string): Promise<void> {
    try {
      await this.#c.call(account, true, (api) => api.acl.delete({ calendarId, ruleId: 'default' }));
    } catch (err) {
      if (!isGone(err)) throw err;
    }
    this.#publicRead.delete(calendarId);
  }

  /** Deletes a replaced calendar; a calendar already gone counts as deleted. */
  async deleteCalendar(account: string, calendarId: string): Promise<void> {
    try {
      await this.#c.call(account, true, (api) => api.calendars.delete({ calendarId }));
    } catch (err) {
      if (!isGone(err)) throw err;
    }
  }

  async #create(account: string, spec: CalendarSpec): Promise<EnsureResult> {
    const created = await this.#c.call(account, true, (api) =>
      api.calendars.insert({
        requestBody: { summary: spec.name, description: spec.description, timeZone: spec.timeZone },
      }),
    );
    const id = created.data.id;
    if (!id) return { ok: false, kind: 'error', reason: `${spec.key}: calendar insert returned no id` };
    for (const rule of this.#c.settings.calendars.share) {
      const value = rule.value?.includes('{email}')
        ? spec.memberEmail
          ? rule.value.replaceAll('{email}', spec.memberEmail)
          : null
        : rule.value;
      if (rule.type !== 'default' && !value) continue;
      await this.#c.call(account, true, (api) =>
        api.acl.insert({
          calendarId: id,
          sendNotifications: false,
          requestBody: { role: rule.role, scope: { type: rule.type, ...(value ? { value } : {}) } },
        }),
      );
    }
    await this.#familiesMayRead(account, id);
    return { ok: true, remoteCalendarId: id, created: true };
  }

  async #calendarList(account: string): Promise<calendar_v3.Schema$CalendarListEntry[]> {
    let p = this.#calendarLists.get(account);
    if (!p) {
      p = (async () => {
        const out: calendar_v3.Schema$CalendarListEntry[] = [];
        let pageToken: string | undefined;
        do {
          const res = await this.#c.call(account, false, (api) =>
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

  /** The public reader rule that lets families add a calendar (`calendars.familiesMayAdd`); idempotent. */
  async #familiesMayRead(account: string, calendarId: string): Promise<void> {
    if (!this.#c.settings.calendars.familiesMayAdd || this.#publicRead.has(calendarId)) return;
    await this.#c.call(account, true, (api) =>
      api.acl.insert({
        calendarId,
        sendNotifications: false,
        requestBody: { role: 'reader', scope: { type: 'default' } },
      }),
    );
    this.#publicRead.add(calendarId);
  }
}
