// The Outlook (Microsoft 365) adapter over Microsoft Graph v1.0, app-only, behind PushProvider: each job in a file
// of its own — clients.ts (the Graph client, its counting and timing middleware, Graph's answers read),
// auth.ts (token or client secret), batch.ts (GraphBatcher: $batch of up to 20, ≤ 4 concurrent requests per mailbox,
// throttled sub-responses retried after their Retry-After), render.ts (events and the extended properties that
// mark them as ours), calendars.ts (find or create), listing.ts and writes.ts.
// - The SDK's RetryHandler covers the $batch round trip itself (it never looks inside), which is why every create
//   carries a deterministic transactionId.
// - `Prefer: IdType="ImmutableId"` on every request, so event ids survive moves between folders.
// - A dedicated calendar per mailbox (default "School activities"), created if missing.
// - A mailbox that does not exist or has no Exchange licence is reported and skipped; the others go on.
import type { CalendarEvent } from '../../calendar/types.ts';
import type { OutlookSettings } from '../../config/push-targets.ts';
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
import { type EventIdentity, ownerTag } from '../stable-ids.ts';
import { ensureOutlookCalendar } from './calendars.ts';
import { OutlookClients } from './clients.ts';
import { listOutlookCalendar } from './listing.ts';
import { renderOutlookEvent } from './render.ts';
import { applyOutlookWrites } from './writes.ts';

export interface OutlookProviderOptions {
  schoolId: string;
  targetId: string;
  settings: OutlookSettings;
}

export class OutlookProvider implements PushProvider {
  readonly kind = 'outlook' as const;
  readonly #clients: OutlookClients;
  /** The ownership tag on every event of this target. */
  readonly #owner: string;

  constructor(o: OutlookProviderOptions) {
    this.#clients = new OutlookClients(o.settings);
    this.#owner = ownerTag(o.schoolId, o.targetId);
  }

  stats(): ProviderStats {
    return this.#clients.stats();
  }

  eventIdFor(): null {
    return null;
  }

  render(ev: CalendarEvent, identity: EventIdentity): Rendered {
    return renderOutlookEvent(ev, identity, this.#owner);
  }

  ensureCalendars(specs: CalendarSpec[], opts: { dryRun: boolean }): Promise<Map<string, EnsureResult>> {
    return byKey(specs, Promise.all(specs.map((s) => ensureOutlookCalendar(this.#clients, s, opts.dryRun))));
  }

  listOwned(calendars: CalendarRef[]): Promise<Map<string, ListResult>> {
    return byKey(
      calendars,
      Promise.all(calendars.map((c) => listOutlookCalendar(this.#clients, this.#owner, c))),
    );
  }

  apply(ops: WriteOp[]): Promise<WriteResult[]> {
    return applyOutlookWrites(this.#clients, ops);
  }
}
