// The Google Calendar adapter (@googleapis/calendar, v3) behind PushProvider: each job in a file of its own —
// clients.ts (per-account clients, pacing, backoff), auth.ts (service account and delegation), render.ts (events
// and their tags), calendars.ts (find or create), listing.ts, writes.ts (one request per write) and batch.ts (the
// batch engine). Calendars are worked on in parallel up to `concurrency`.
import type { CalendarEvent } from '../../calendar/types.ts';
import type { GoogleSettings } from '../../config/push-targets.ts';
import type { Instant } from '../../domain/types.ts';
import { mapLimit } from '../../util/concurrency.ts';
import {
  byKey,
  type CalendarRef,
  type CalendarSpec,
  type EnsureResult,
  type ListResult,
  type ProviderStats,
  type PushProvider,
  type Rendered,
  type WriteOp,
  type WriteResult,
} from '../provider.ts';
import { type EventIdentity, googleEventId, ownerTag } from '../stable-ids.ts';
import { applyBatched } from './batch.ts';
import { GoogleCalendars } from './calendars.ts';
import { failureOf, GoogleClients } from './clients.ts';
import { listGoogleCalendar } from './listing.ts';
import { renderGoogleEvent } from './render.ts';
import { applyOneByOne } from './writes.ts';

export interface GoogleProviderOptions {
  schoolId: string;
  targetId: string;
  settings: GoogleSettings;
  /** Staff scope with mode primary/secondary: each calendar's owner is the delegated account. */
  delegated: boolean;
}

export class GoogleProvider implements PushProvider {
  readonly kind = 'google' as const;
  readonly #clients: GoogleClients;
  readonly #calendars: GoogleCalendars;
  /** The ownership tag on every event of this target. */
  readonly #owner: string;

  constructor(o: GoogleProviderOptions) {
    this.#clients = new GoogleClients(o.settings, o.delegated);
    this.#calendars = new GoogleCalendars(this.#clients, { school: o.schoolId, target: o.targetId });
    this.#owner = ownerTag(o.schoolId, o.targetId);
  }

  /** Deletes replaced public calendars, one by one; each answer is null or why it failed. */
  async retireCalendars(
    calendars: { owner: string | null; remoteCalendarId: string }[],
  ): Promise<(string | null)[]> {
    const out: (string | null)[] = [];
    for (const c of calendars) {
      try {
        await this.#calendars.deleteCalendar(this.#clients.account(c.owner), c.remoteCalendarId);
        out.push(null);
      } catch (err) {
        out.push(failureOf(err).message);
      }
    }
    return out;
  }

  /** Removes the public reader rule of a calendar (a rotation closes the old calendar at once). */
  closePublic(owner: string | null, remoteCalendarId: string): Promise<void> {
    return this.#calendars.closePublic(this.#clients.account(owner), remoteCalendarId);
  }

  stats(): ProviderStats {
    return { ...this.#clients.stats };
  }

  eventIdFor(identity: EventIdentity): string {
    return googleEventId(identity);
  }

  render(ev: CalendarEvent, identity: EventIdentity): Rendered {
    return renderGoogleEvent(ev, identity, this.#owner);
  }

  ensureCalendars(specs: CalendarSpec[], opts: { dryRun: boolean }): Promise<Map<string, EnsureResult>> {
    const { concurrency } = this.#clients.settings;
    return byKey(
      specs,
      mapLimit(specs, concurrency, (s) => this.#calendars.ensure(s, opts.dryRun)),
    );
  }

  listOwned(
    calendars: CalendarRef[],
    window: { from: Instant; to: Instant },
  ): Promise<Map<string, ListResult>> {
    const { concurrency } = this.#clients.settings;
    return byKey(
      calendars,
      mapLimit(calendars, concurrency, (c) => listGoogleCalendar(this.#clients, this.#owner, c, window)),
    );
  }

  apply(ops: WriteOp[]): Promise<WriteResult[]> {
    return this.#clients.settings.batchSize > 1
      ? applyBatched(this.#clients, ops)
      : applyOneByOne(this.#clients, ops);
  }
}
