// What the projection hands to every output (ICS feeds, Google, Outlook). Outputs format it; they never
// decide what it says. Adding a field here is how an output gets new information.
import type { Id, Instant } from '../domain/types.ts';

export type Audience = 'guardian' | 'student' | 'staff';

export interface CalendarEvent {
  sessionId: Id;
  /**
   * Stable across runs and renders: `session-<id>@<school>.rostercal`, or for a feed
   * `session-<id>-<scope>-<scopeId>@<school>.rostercal` (see uid.ts for why the scope is part of it).
   */
  uid: string;
  /** ICS SEQUENCE: advances when what this audience sees changes. */
  sequence: number;
  lastModified: Instant;
  start: Instant;
  end: Instant;
  /** The school's IANA time zone, for VTIMEZONE and remote calendars. */
  timeZone: string;
  title: string;
  description: string;
  status: 'confirmed' | 'tentative' | 'cancelled';
  location: {
    name: string;
    address: string | null;
    latitude: number | null;
    longitude: number | null;
  } | null;
  /** `#rrggbb` from the activity. */
  color: string | null;
  categories: string[];
  /**
   * Set (true) only for a bye: no game, nothing to attend. Outputs show it as free time, with no reminder, no
   * "Can't make it?" and nothing to add or find the way to. Absent on every other event.
   */
  noGame?: true;
}
