// The one gate between upstream text and the words an audience reads. projectSession reads a session only
// through throughGate, a copy in which every string, at any depth — the fields listed today and any field added to the
// upstream schema tomorrow — comes out already said for the audience (cleaned, names scrubbed for guardians and
// students, capped), so no output can build a family's text from a raw upstream field by forgetting to list it.
// What is not part of the session (custom field labels, staff names from the context) goes through the same
// `say` explicitly, in project.ts. Outputs (ICS, landing and family pages, Google and Outlook bodies) receive only
// CalendarEvents made here.
//
// Cleaning: C0 and C1 control characters (but line feed and tab), DEL, and the default-ignorable code points that
// only hide text or reorder it (bidi embeddings, overrides and isolates, zero-width spaces, word joiners, tag
// characters, soft hyphens); CR and the Unicode line and paragraph separators become line feeds. Caps (code
// points, an ellipsis marks a cut): see CAPS.
import { LRUCache } from 'lru-cache';
import type { Id, Session } from '../domain/types.ts';
import type { FeedScopeRef, ProjectionContext } from './context.ts';
import { REMOVED } from './other-children-filter.ts';
import type { Audience } from './types.ts';

/** Longest texts an event carries, in characters; a longer one is cut and ends with "…". */
export const CAPS = {
  /** SUMMARY, an event's title. */
  title: 200,
  /** LOCATION's venue name. */
  location: 200,
  /** LOCATION's address. */
  address: 300,
  /** Any one upstream text (a parent note, a round name, a custom field's value). */
  part: 2000,
  /** DESCRIPTION as a whole. */
  description: 6000,
  /** A category, a custom field's label, a family member's label. */
  label: 100,
} as const;

/** What an audience may read of one upstream text. */
export type Say = (text: string) => string;

// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;
const NEEDS_CLEANING =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u2028\u2029\p{Default_Ignorable_Code_Point}]/u;

/** The text without control characters and invisible hiding or reordering characters (see above). */
export function cleanText(text: string): string {
  if (!NEEDS_CLEANING.test(text)) return text;
  return text
    .replace(/\r\n?|[\u2028\u2029]/g, '\n')
    .replace(CONTROL, '')
    .normalize('NFC')
    .replace(REMOVED, '');
}

/** The text cut to `max` characters (code points), the last one an ellipsis, when it is longer. */
export function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  // A code point is one or two UTF-16 units: this much of the text holds more than max of them, or all of it.
  const head = Array.from(text.slice(0, 2 * max + 2));
  if (head.length <= max && text.length <= 2 * max + 2) return text;
  return `${head
    .slice(0, max - 1)
    .join('')
    .trimEnd()}…`;
}

const sayForStaff: Say = (text) => capText(cleanText(text), CAPS.part);

/** Texts up to this long are remembered per voice: team, venue and staff names come back in every event. */
const REMEMBERED_LENGTH = 300;
const voices = new WeakMap<ProjectionContext, LRUCache<string, Say>>();

/**
 * How an audience's text is said in a session: cleaned and capped for everyone; for guardians and students, every
 * other student's name scrubbed too (`keep`: the feed's own student), a first name or surname alone for the
 * students around the session (its own students, its teams' and its activity's). One voice per context, audience,
 * kept student and set of students around, shared by the sessions that have the same (a feed's, mostly).
 */
export function voiceFor(
  ctx: ProjectionContext,
  audience: Audience,
  keep: Id | null,
  session: Pick<Session, 'activity' | 'teams' | 'students'>,
): Say {
  if (audience === 'staff') return sayForStaff;
  const activity = ctx.activityStudents.get(session.activity.id);
  const teams = session.teams.map((t) => t.id).sort((a, b) => a - b);
  const teamSets = teams.flatMap((id) => ctx.teamStudents.get(id) ?? []);
  const extra = session.students
    .map((s) => s.id)
    .filter((id) => !activity?.has(id) && !teamSets.some((t) => t.has(id)));
  const key = `${audience}|${keep}|${session.activity.id}|${teams.join(',')}|${extra.join(',')}`;
  let byKey = voices.get(ctx);
  if (!byKey) {
    byKey = new LRUCache({ max: 2_000 });
    voices.set(ctx, byKey);
  }
  let voice = byKey.get(key);
  if (voice) return voice;
  const extras = new Set(extra);
  const near = (id: Id) => !!activity?.has(id) || teamSets.some((t) => t.has(id)) || extras.has(id);
  const scrub = scrubbing(ctx, keep, near);
  const said = new Map<string, string>();
  voice = (text) => {
    const hit = said.get(text);
    if (hit !== undefined) return hit;
    const out = scrub(text);
    if (text.length <= REMEMBERED_LENGTH && said.size < 5_000) said.set(text, out);
    return out;
  };
  byKey.set(key, voice);
  return voice;
}

/**
 * How a feed's own texts are said (its calendar's name and description, a pushed calendar's name): for a team or
 * an activity, a first name or surname alone counts for its students; a student's own name stays in their feed.
 */
export function feedVoice(ctx: ProjectionContext, audience: Audience, feed: FeedScopeRef): Say {
  if (audience === 'staff') return sayForStaff;
  const around =
    feed.scope === 'team'
      ? ctx.teamStudents.get(feed.id)
      : feed.scope === 'activity'
        ? ctx.activityStudents.get(feed.id)
        : undefined;
  const keep = feed.scope === 'student' ? feed.id : null;
  return scrubbing(ctx, keep, (id) => around?.has(id) ?? false);
}

/** Cleaned, other students' names scrubbed, capped. */
function scrubbing(ctx: ProjectionContext, keep: Id | null, near: (id: Id) => boolean): Say {
  const removed = ctx.templates.description.nameRemoved;
  // Cut (generously) before matching, so a 200 KB note costs what a long one does; then the real cap.
  return (text) =>
    capText(ctx.names.scrub(cleanText(capText(text, CAPS.part * 2)), removed, keep, near), CAPS.part);
}

/** A feed's name, calendar name and description as its audience reads them. */
export function sayFeedTexts<T extends { subject: string; calendarName: string; description: string }>(
  texts: T,
  ctx: ProjectionContext,
  audience: Audience,
  feed: FeedScopeRef,
): T {
  const say = feedVoice(ctx, audience, feed);
  return {
    ...texts,
    subject: capText(say(texts.subject), CAPS.title),
    calendarName: capText(say(texts.calendarName), CAPS.title),
    description: say(texts.description),
  };
}

/**
 * The value as `say` lets an audience read it: a copy in which every string, at any depth, is said. Numbers,
 * booleans and nulls pass as they are. Sessions are plain data (JSON from the store), so a copy is all of them.
 */
export function throughGate<T>(value: T, say: Say): T {
  return copy(value, say) as T;
}

function copy(value: unknown, say: Say): unknown {
  if (typeof value === 'string') return say(value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => copy(v, say));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = copy((value as Record<string, unknown>)[key], say);
  return out;
}
