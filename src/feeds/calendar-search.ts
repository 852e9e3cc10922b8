// Finding a calendar by what an admin knows (issue 44): a child's, team's, activity's or staff member's name in any
// script (case, accents and look-alike letters folded; Cyrillic and Greek names also by their romanisation), an id
// (the upstream's, a student's SIS id, a staff member's e-mail), or a pasted feed or family URL. The subjects come
// from the store in one light query (store/calendar-subjects.ts) and are folded once per school and subjects' version
// (a district's 13,700 names: the query and the folding took 0.3-1 s on a loaded machine, a search of the folded
// names a few ms); a search answers from the index in hand and has it made again when a pull changed the subjects
// (teams, students, staff, activities: not sessions, which pulls change far more often).
// serve makes it after each pull (prepare, an after-pull step), in slices that leave the event loop to requests,
// so no admin's first search waits for it; a search that comes while it is being made waits for that one.
import { plainLetters, romanisations } from '../calendar/letters.ts';
import type { AfterPullStep } from '../jobs/after-pull-step.ts';
import type { CalendarSubject, FeedScope, SchoolId, Store } from '../store/types.ts';
import { TimeSlice } from '../util/event-loop.ts';
import { tokensIn } from './family.ts';
import { type FeedDef, feedDefFor, getFeedDef } from './feed-defs.ts';
import { hashToken } from './tokens.ts';

export interface SearchHit {
  def: FeedDef;
  /** Why it matched, when not by name: `student id 5197`, `the pasted link (replaced since: …)`. */
  why: string | null;
}

export interface SearchAnswer {
  hits: SearchHit[];
  /** Matches beyond the limit: the admin should say more. */
  more: number;
  /** What the query named that is not a calendar here (a pasted link no school of the admin's knows). */
  notes: string[];
}

/** Lower case, marks removed, look-alike and special letters plain: "Ngụyễn" and "NGUYEN" meet. */
export function foldName(text: string): string {
  return plainLetters(text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().normalize('NFC'));
}

/** A name's folded spellings: as written, and Cyrillic or Greek words romanised ("Саша" → "sasha"). */
function spellings(name: string): string[] {
  const folded = foldName(name);
  // Most names have no Cyrillic or Greek letter: one test, no romanisation.
  if (!/[\u0370-\u03ff\u0400-\u04ff]/.test(name)) return [folded];
  const words = name.split(/\s+/).filter(Boolean);
  const romanised = words.map((w) => romanisations(w));
  const out = new Set([folded]);
  for (const variant of [0, 1])
    out.add(words.map((w, i) => romanised[i]![variant] ?? romanised[i]![0] ?? foldName(w)).join(' '));
  return [...out];
}

/** A subject with its names' folded spellings, made once per index. */
interface Entry {
  subject: CalendarSubject;
  keys: string[];
}

function entryOf(subject: CalendarSubject): Entry {
  return { subject, keys: [...new Set([subject.name, ...subject.otherNames].flatMap(spellings))] };
}

/** How well `words` name the subject: 0 no match, higher better (whole words before parts of words). */
function score(entry: Entry, words: string[]): number {
  let best = 0;
  for (const key of entry.keys) {
    if (!words.every((w) => key.includes(w))) continue;
    const keyWords = key.split(' ');
    const whole = words.filter((w) => keyWords.includes(w)).length;
    const starts = words.filter((w) => keyWords.some((k) => k.startsWith(w))).length;
    best = Math.max(best, 1 + whole * 2 + starts + (key === words.join(' ') ? 10 : 0));
  }
  return best;
}

const SCOPE_ORDER: Record<FeedScope, number> = { student: 0, team: 1, activity: 2, staff: 3 };

/** Subjects whose id or a known id is the query (`5197`, a SIS id, an e-mail). */
function byId(entries: Entry[], query: string): { subject: CalendarSubject; why: string }[] {
  const q = query.trim().toLowerCase();
  if (!q || /\s/.test(q)) return [];
  const out: { subject: CalendarSubject; why: string }[] = [];
  for (const { subject: s } of entries) {
    if (/^\d+$/.test(q) && s.id === Number(q)) out.push({ subject: s, why: `${s.scope} id ${s.id}` });
    else if (s.knownIds.some((k) => k.toLowerCase() === q))
      out.push({ subject: s, why: `known as ${query.trim()}` });
  }
  return out;
}

/** The calendars a pasted feed or family URL (or bare token) names, in the given schools. */
async function byLink(
  store: Pick<Store, 'records' | 'links'>,
  schools: ReadonlySet<SchoolId>,
  query: string,
): Promise<{ hits: SearchHit[]; notes: string[] }> {
  const hits: SearchHit[] = [];
  const notes: string[] = [];
  for (const token of tokensIn(query)) {
    const hash = hashToken(token);
    const feed = await store.links.findFeedTokenByHash(hash);
    if (feed && schools.has(feed.schoolId)) {
      const def = await getFeedDef(store, feed.schoolId, feed.scope, feed.scopeId);
      if (def)
        hits.push({
          def,
          why: feed.revokedAt
            ? `the pasted link was replaced on ${feed.revokedAt.slice(0, 10)}: it no longer works`
            : 'the pasted link (it works)',
        });
      continue;
    }
    const family = await store.links.findFamilyLinkByHash(hash);
    if (family && schools.has(family.schoolId)) {
      for (const m of family.members) {
        const def = await getFeedDef(store, family.schoolId, m.scope, m.scopeId);
        if (def) hits.push({ def, why: `in the pasted family link (made ${family.createdAt.slice(0, 10)})` });
      }
      if (!family.members.length) notes.push('The pasted family link names no calendar any more.');
      continue;
    }
    notes.push('A pasted link names no calendar of a school you administer (mistyped, or never made here).');
  }
  return { hits, notes };
}

interface SchoolIndex {
  subjectsVersion: number;
  name: string;
  entries: Entry[];
}

/** What a school's index is: the subjects' version it was made from (null: none yet), and how many were made. */
export interface IndexState {
  subjectsVersion: number | null;
  builds: number;
}

/** Folds the subjects' names a slice at a time: 13,700 names must not hold the event loop for a second. */
async function entriesOf(subjects: readonly CalendarSubject[]): Promise<Entry[]> {
  const slice = new TimeSlice();
  const entries: Entry[] = [];
  for (const subject of subjects) {
    entries.push(entryOf(subject));
    await slice.pause();
  }
  return entries;
}

/** The admins' search over the store, with each school's folded names kept per data version. */
export class CalendarSearch {
  readonly #store: Pick<Store, 'records' | 'links'>;
  readonly #indexes = new Map<SchoolId, SchoolIndex>();
  readonly #building = new Map<SchoolId, Promise<SchoolIndex>>();
  readonly #builds = new Map<SchoolId, number>();

  constructor(store: Pick<Store, 'records' | 'links'>) {
    this.#store = store;
  }

  #build(schoolId: SchoolId, subjectsVersion: number): Promise<SchoolIndex> {
    let building = this.#building.get(schoolId);
    if (!building) {
      building = (async () => {
        const [subjects, schools] = await Promise.all([
          this.#store.records.listCalendarSubjects(schoolId),
          this.#store.records.listSchools(),
        ]);
        const name = schools.find((s) => s.id === schoolId)?.name ?? schoolId;
        const index = { subjectsVersion, name, entries: await entriesOf(subjects) };
        this.#indexes.set(schoolId, index);
        this.#builds.set(schoolId, (this.#builds.get(schoolId) ?? 0) + 1);
        return index;
      })().finally(() => this.#building.delete(schoolId));
      this.#building.set(schoolId, building);
    }
    return building;
  }

  /**
   * The school's index: the one in hand, made again in the background when the subjects changed since (a search
   * is at most one pull behind); made now when there is none.
   */
  async #index(schoolId: SchoolId): Promise<SchoolIndex> {
    const version = await this.#store.records.subjectsVersion(schoolId);
    const held = this.#indexes.get(schoolId);
    if (!held) return this.#build(schoolId, version);
    if (held.subjectsVersion !== version) void this.#build(schoolId, version).catch(() => {});
    return held;
  }

  /**
   * Makes the school's index from its current subjects unless the one in hand already is (after a pull, at start):
   * off any request, so the first search answers from it. A build under way is waited for, never doubled.
   */
  async prepare(schoolId: SchoolId): Promise<void> {
    // Twice at most: a build under way when this was asked may be of the data before the pull that asks.
    for (let round = 0; round < 2; round++) {
      const version = await this.#store.records.subjectsVersion(schoolId);
      if (this.#indexes.get(schoolId)?.subjectsVersion === version) return;
      await this.#build(schoolId, version);
    }
  }

  /** The school's index as it stands (for /metrics-like checks and tests: is it ready before a search comes?). */
  state(schoolId: SchoolId): IndexState {
    return {
      subjectsVersion: this.#indexes.get(schoolId)?.subjectsVersion ?? null,
      builds: this.#builds.get(schoolId) ?? 0,
    };
  }

  /** How many calendars of each scope the school has (from its index, which this makes ready for searches). */
  async counts(schoolId: SchoolId): Promise<Record<FeedScope, number>> {
    const counts: Record<FeedScope, number> = { team: 0, student: 0, staff: 0, activity: 0 };
    for (const e of (await this.#index(schoolId)).entries) counts[e.subject.scope]++;
    return counts;
  }

  /**
   * The calendars of `schools` that `query` names, best first, at most `limit`. A link in the query is looked
   * up by its hash; otherwise ids and names are matched.
   */
  async search(schools: readonly { id: SchoolId }[], query: string, limit = 20): Promise<SearchAnswer> {
    const q = query.trim().slice(0, 500);
    if (!q) return { hits: [], more: 0, notes: [] };
    const schoolIds = new Set(schools.map((s) => s.id));
    if (tokensIn(q).length) {
      const { hits, notes } = await byLink(this.#store, schoolIds, q);
      return { hits: hits.slice(0, limit), more: Math.max(0, hits.length - limit), notes };
    }
    const words = foldName(q).split(/\s+/).filter(Boolean);
    const found: {
      school: { id: SchoolId; name: string };
      subject: CalendarSubject;
      rank: number;
      why: string | null;
    }[] = [];
    for (const schoolId of schoolIds) {
      const index = await this.#index(schoolId);
      const school = { id: schoolId, name: index.name };
      const ids = byId(index.entries, q);
      for (const { subject, why } of ids) found.push({ school, subject, rank: 100, why });
      if (ids.length) continue;
      for (const entry of index.entries) {
        const rank = score(entry, words);
        if (rank) found.push({ school, subject: entry.subject, rank, why: null });
      }
    }
    found.sort(
      (a, b) =>
        b.rank - a.rank ||
        SCOPE_ORDER[a.subject.scope] - SCOPE_ORDER[b.subject.scope] ||
        a.subject.name.localeCompare(b.subject.name),
    );
    const hits = found.slice(0, limit).map((f) => ({
      def: feedDefFor(f.school, f.subject.scope, f.subject.id, f.subject.name, null),
      why: f.why,
    }));
    return { hits, more: Math.max(0, found.length - limit), notes: [] };
  }
}

/**
 * serve's step after each pull: the school's search index made again when the pull changed its subjects, so the
 * admins' next search does not wait for it. A failure only costs that wait: logged, never the pull's.
 */
export function searchIndexAfterPull(search: Pick<CalendarSearch, 'prepare'>): AfterPullStep {
  return {
    name: 'search index',
    async run(ctx) {
      await search
        .prepare(ctx.school.id)
        .catch((err) => ctx.log.warn({ err, school: ctx.school.id }, 'search index not made after the pull'));
      return true;
    },
  };
}
