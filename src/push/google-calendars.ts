// Finding or creating a target's Google calendars: the account's primary calendar, one known from an earlier
// run, one found by the ownership marker in its description, or a new one shared as the settings say (and made
// publicly readable when families may add it).
import type { calendar_v3 } from 'googleapis';
import { failureOf, type GoogleClients, isAccountProblem, PausedError } from './google-client.ts';
import type { CalendarSpec, EnsureResult } from './provider.ts';

export class GoogleCalendars {
  readonly #c: GoogleClients;
  readonly #calendarLists = new Map<string, Promise<calendar_v3.Schema$CalendarListEntry[]>>();
  /** Calendars made publicly readable in this process (calendars.familiesMayAdd): once each. */
  readonly #publicRead = new Set<string>();

  constructor(clients: GoogleClients) {
    this.#c = clients;
  }

  async ensure(spec: CalendarSpec, dryRun: boolean): Promise<EnsureResult> {
    const mode = this.#c.settings.calendars.mode;
    const account = this.#c.account(spec.owner);
    if (this.#c.delegated && !spec.owner)
      return { ok: false, skip: true, reason: `${spec.key}: no email address to act as` };
    try {
      if (mode === 'primary') {
        if (spec.remoteCalendarId)
          return { ok: true, remoteCalendarId: spec.remoteCalendarId, created: false };
        // Proves delegation works for this account before we plan writes into it.
        await this.#c.call(account, false, (api) => api.calendars.get({ calendarId: 'primary' }));
        return { ok: true, remoteCalendarId: 'primary', created: false };
      }
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
      return { ok: false, skip: isAccountProblem(err), reason: `${spec.key}: ${f.message}` };
    }
  }

  async #create(account: string, spec: CalendarSpec): Promise<EnsureResult> {
    const created = await this.#c.call(account, true, (api) =>
      api.calendars.insert({
        requestBody: { summary: spec.name, description: spec.description, timeZone: spec.timeZone },
      }),
    );
    const id = created.data.id;
    if (!id) return { ok: false, skip: false, reason: `${spec.key}: calendar insert returned no id` };
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
