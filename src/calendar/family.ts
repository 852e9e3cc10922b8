// What an event says in a family's combined calendar: each member feed's events (already projected for that
// feed's audience and scope, so name scrubbing and visibility are theirs), one event per session, naming only
// the family members whose own calendar has it ("Training (Ana, Ben)"). A family of one names nobody.
import type { Id, Instant } from '../domain/types.ts';
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

/** A member of a family link as its page and calendar may call it. */
export interface NamedMember {
  scope: 'student' | 'team' | 'activity' | 'staff';
  /** familyLabel's: a child's first name, a team's name. */
  label: string;
  /** A child's full name (the family's own child: it may be named in full on its own family's page). */
  fullName: string;
}

/**
 * The labels of every member the link was made with, those still in it and those that dropped out together: two
 * children sharing a first name are called by their full names, so "Ánh is no longer in this calendar" can never
 * leave the family guessing which Ánh, and the one still in it is not "Ánh" either. Only the link's own
 * children are named; a team keeps its name.
 */
export function distinctLabels(members: readonly NamedMember[]): string[] {
  const count = new Map<string, number>();
  for (const m of members) if (m.scope === 'student') count.set(m.label, (count.get(m.label) ?? 0) + 1);
  return members.map((m) =>
    m.scope === 'student' && count.get(m.label)! > 1 ? familyLabel(m.fullName) : m.label,
  );
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

/** A member of a family link whose own link was rotated (`replaced`) or stopped since the link was made. */
export interface LostMember {
  scope: 'student' | 'team' | 'activity' | 'staff';
  scopeId: Id;
  /** As the family calls it: the child's first name, a team's name. */
  label: string;
  /** When its own link stopped working. */
  since: Instant;
  replaced: boolean;
}

/** How long the notice of a member that dropped out stands in the calendar, from the day it dropped out. */
const NOTICE_DAYS = 7;

/** What the family's page and calendar say of a member that dropped out: a headline and how to add it back. */
export function lostWords(m: LostMember): { title: string; body: string } {
  const who = m.label;
  const title = `${who} is no longer in this calendar: a new link is needed`;
  const why = m.replaced
    ? `The school gave ${who} a new calendar link, so ${who}\u2019s sessions no longer appear in this family calendar.`
    : `The school stopped ${who}\u2019s calendar link, so ${who}\u2019s sessions no longer appear in this family calendar.`;
  const how = m.replaced
    ? `To add them back, open ${who}\u2019s new calendar page (from the school; ask the school office if you do not have it), choose \u201cAdd another child\u2019s link\u201d there and paste this family link: that makes a new family link with everyone. Subscribe to it, then remove this calendar.`
    : `Ask the school office for ${who}\u2019s new calendar link, then add it to a new family link from its page.`;
  return { title, body: `${why} ${how}` };
}

/**
 * One event per member that dropped out, from the moment its link stopped, for a week: the family's calendar says
 * so where they look instead of going quiet. Its UID is stable (the family, the member, the moment).
 */
export function lostNotices(
  familyKey: string,
  lost: readonly LostMember[],
  timeZone: string,
): CalendarEvent[] {
  return lost.map((m) => {
    const words = lostWords(m);
    const start = Date.parse(m.since);
    return {
      sessionId: 0,
      uid: `family-${familyKey}-left-${m.scope}-${m.scopeId}-${start}@rostercal`,
      sequence: 0,
      lastModified: new Date(start).toISOString(),
      start: new Date(start).toISOString(),
      end: new Date(start + NOTICE_DAYS * 86_400_000).toISOString(),
      timeZone,
      title: capText(words.title, CAPS.title),
      description: words.body,
      status: 'confirmed',
      location: null,
      color: null,
      categories: [],
      noGame: true,
    };
  });
}
