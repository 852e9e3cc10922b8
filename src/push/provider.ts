// What the engine asks of a calendar provider. Bulk-shaped on purpose: the engine hands over every calendar's
// work at once so a provider can batch across calendars (Graph $batch) or pace and parallelise (Google).
import type { CalendarEvent } from '../calendar/types.ts';
import type { Id, Instant } from '../domain/types.ts';
import type { EventIdentity } from './stable-ids.ts';

/** One remote calendar the target owns (or writes into). */
export interface CalendarSpec {
  /** Our key, e.g. `team:12`, `staff:40`. */
  key: string;
  /** Display name for a calendar rostercal creates. */
  name: string;
  /** Description for a calendar rostercal creates (carries the ownership marker). */
  description: string;
  marker: string;
  timeZone: string;
  /** Mailbox (Outlook) or delegated account (Google); null = the target's own account. */
  owner: string | null;
  /** The member's email, for sharing rules that name it. */
  memberEmail: string | null;
  /** Known from an earlier run. */
  remoteCalendarId: string | null;
  /**
   * Public calendars (`calendars.familiesMayAdd`) only: the feed's rotation count. The calendar of this
   * generation is the one to keep; those of other generations found by their marker are closed and retired.
   */
  generation?: number;
}

/**
 * Why a provider could not do what it was asked, as the push run acts on it:
 * - `quota`: the provider's quota is spent (Google quotaExceeded): the calendar rests (paused) for pauseMinutes;
 * - `account`: the mailbox or account is unusable (not licensed, suspended, not delegated): its calendars are
 *   skipped, the others go on;
 * - `calendar-gone`: the remote calendar itself was deleted by hand: it is forgotten and made again next run;
 * - `error`: anything else (refused, a 5xx that outlasted the retries): this calendar failed.
 */
export type FailureKind = 'quota' | 'account' | 'calendar-gone' | 'error';

/** A provider's failure: its kind, and the words shown to the operator (no secrets: providers scrub them). */
export interface PushFailure<K extends FailureKind = FailureKind> {
  ok: false;
  kind: K;
  reason: string;
}

export type EnsureResult =
  | {
      ok: true;
      remoteCalendarId: string;
      created: boolean;
      /** Calendars of earlier generations (no longer public): delete them once this one is complete. */
      retire?: string[];
    }
  | PushFailure<'account' | 'error'>;

/** An event of ours found in a remote calendar. */
export interface RemoteEvent {
  remoteEventId: string;
  /** From the event's tag; null when unreadable. */
  calendarKey: string | null;
  sessionId: Id | null;
  /** Content hash we stored on it when we wrote it. */
  hash: string | null;
  start: Instant | null;
  end: Instant | null;
  /** false for Google events that linger as cancelled (deleted). */
  live: boolean;
}

export type ListResult = { ok: true; events: RemoteEvent[] } | PushFailure;

export interface Rendered {
  body: unknown;
  hash: string;
}

export type WriteOp =
  | {
      kind: 'create';
      calendar: CalendarRef;
      identity: EventIdentity;
      rendered: Rendered;
      /** Google: the deterministic event id. */
      remoteEventId: string | null;
      /** Graph: transactionId generation (a deliberate re-creation after the event vanished). */
      generation?: string;
    }
  | {
      kind: 'update';
      calendar: CalendarRef;
      identity: EventIdentity;
      rendered: Rendered;
      remoteEventId: string;
    }
  | { kind: 'delete'; calendar: CalendarRef; identity: EventIdentity; remoteEventId: string };

export interface CalendarRef {
  key: string;
  remoteCalendarId: string;
  owner: string | null;
}

export type WriteResult =
  | {
      ok: true;
      /** The remote id now holding the event (absent for deletes). */
      remoteEventId: string | null;
      /** A create found the event already there and updated it instead. */
      adopted?: boolean;
      /** An update found the event gone and created it again. */
      recreated?: boolean;
    }
  | PushFailure;

export interface ProviderStats {
  /** HTTP round trips. */
  requests: number;
  retries: number;
  throttled: number;
}

export interface PushProvider {
  readonly kind: 'google' | 'outlook';
  /** Provider body and content hash of a projected event (the projection decided what it says). */
  render(event: CalendarEvent, identity: EventIdentity): Rendered;
  /** Google's deterministic id for a create, or null when the provider assigns ids. */
  eventIdFor(identity: EventIdentity): string | null;
  /** Finds or creates each calendar (no creation when dryRun). */
  ensureCalendars(specs: CalendarSpec[], opts: { dryRun: boolean }): Promise<Map<string, EnsureResult>>;
  /** Our events in each calendar (by ownership tag) intersecting the window, cancelled ones included. */
  listOwned(
    calendars: CalendarRef[],
    window: { from: Instant; to: Instant },
  ): Promise<Map<string, ListResult>>;
  /** Applies writes; results in the same order as ops. */
  apply(ops: WriteOp[]): Promise<WriteResult[]>;
  /** Deletes replaced calendars (Google public calendars after a rotation); a missing one counts as deleted. */
  retireCalendars?(
    calendars: { owner: string | null; remoteCalendarId: string }[],
  ): Promise<(string | null)[]>;
  stats(): ProviderStats;
}

/** A provider's answers, one per calendar asked about in the same order, keyed by the calendar's key. */
export async function byKey<T>(
  asked: readonly { key: string }[],
  answers: Promise<T[]>,
): Promise<Map<string, T>> {
  const results = await answers;
  return new Map(asked.map((a, i) => [a.key, results[i]!]));
}
