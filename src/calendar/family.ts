// What an event says in a family's combined calendar: each member feed's events (already projected for that
// feed's audience and scope, so name scrubbing and visibility are theirs), one event per session, naming only
// the family members whose own calendar has it ("Training (Ana, Ben)"). A family of one names nobody.
import type { Id } from '../domain/types.ts';
import { CAPS, capText, cleanText } from './gate.ts';
import type { CalendarEvent } from './types.ts';

export interface FamilyMemberEvents {
  /** How the family calls this calendar: a child's first name, or a team's name. */
  label: string;
  events: CalendarEvent[];
}

/**
 * How a member is called in the family's calendar, as the family reads it: a child's own first name, or a team's
 * or activity's name as its feed says it (already through the gate), cleaned and capped.
 */
export function familyLabel(text: string): string {
  return capText(cleanText(text.trim()), CAPS.label);
}

/** Names joined the way people write them: "Ana", "Ana and Ben", "Ana, Ben and Chloe". */
export function joinNames(names: string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/**
 * One event per session across the members. The text is the first member's projection of it (members are in
 * the order the family added them); the UID is the family's own (`session-<id>-family-<key>@…`), so the
 * combined calendar never collides with a member's feed subscribed beside it.
 */
export function familyEvents(familyKey: string, members: FamilyMemberEvents[]): CalendarEvent[] {
  const bySession = new Map<
    Id,
    { event: CalendarEvent; labels: string[]; sequence: number; modified: string }
  >();
  for (const m of members) {
    for (const e of m.events) {
      const hit = bySession.get(e.sessionId);
      if (!hit) {
        bySession.set(e.sessionId, {
          event: e,
          labels: [m.label],
          sequence: e.sequence,
          modified: e.lastModified,
        });
        continue;
      }
      if (!hit.labels.includes(m.label)) hit.labels.push(m.label);
      hit.sequence = Math.max(hit.sequence, e.sequence);
      if (e.lastModified > hit.modified) hit.modified = e.lastModified;
    }
  }
  const named = members.length > 1;
  return [...bySession.values()].map(({ event, labels, sequence, modified }) => {
    const who = joinNames(labels);
    return {
      ...event,
      // The members' domain (uid.ts): the installation's, or the school's alone for UIDs that predate it.
      uid: `session-${event.sessionId}-family-${familyKey}@${event.uid.slice(event.uid.lastIndexOf('@') + 1)}`,
      sequence,
      lastModified: modified,
      title: named ? `${event.title} (${labels.join(', ')})` : event.title,
      description: named
        ? [event.description.trim(), `For ${who}.`].filter(Boolean).join('\n\n')
        : event.description,
    };
  });
}
