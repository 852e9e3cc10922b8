// Finds students' names in free text written upstream (titles, parent notes, custom fields, locations, round names,
// scores), the way people actually write them: "Olivia MacDonald's mum drives", "MacDonald, Olivia", "O. MacDonald",
// "Liv MacDonald" (preferred name), "Alexander James Hughes" (a middle name), "Xander-Hughes", "Soren Muller" for
// Søren Müller, "Sasha Shevchenko" for Саша Шевченко (romanised Cyrillic and Greek), "Xаnder" with a Cyrillic а
// (confusable skeletons, UTS #39 style), a soft hyphen, zero-width space or tag character inside a name, a
// decomposed "Ngọc Trâm Bùi", "王小明的妈妈" (no spaces in CJK text) — and, for the students of the session's own
// teams and activity, a first name or surname alone ("Xander's mum drives", "the Hughes's car").
//
// False positives, the policy: a full name (both parts, any spelling above) is scrubbed wherever it stands, in any
// case. A name alone counts only when it is written as a name: a whole word starting with a capital letter, in a
// script that has capitals (a Korean or Chinese given name alone is not looked for), of a student listed on the
// session or in its teams or activity. A name alone that is also a common English word (Will, Grace, Rose, May,
// Hope, Mark, Brown, Young… see COMMON_WORDS) is left at the start of a sentence or line ("Will you bring…") and
// scrubbed elsewhere ("Lift with Will", "Will's boots"). So "Bring Grace's boots" loses "Grace", and so does "the
// Grace period" in a team with a Grace: every doubt goes towards scrubbing, since a missed name puts a child in
// another family's calendar and an extra one costs a word of a note. Measured on the demo school's parent notes:
// see README, "Privacy".
//
// Compiled once per projection context (one school, one pull): every spelling of every student becomes a key in
// one of a few maps, so the cost per text is a tokenisation plus a map lookup per word, however many students the
// school has.
import type { Id } from '../domain/types.ts';
import { runSteps, runStepsPaced } from '../util/event-loop.ts';
import { plainLetters, romanisations } from './letters.ts';

export interface StudentNames {
  id: Id;
  firstName: string;
  legalFirstName?: string | null;
  lastName: string;
}

export interface NameMatcher {
  /**
   * The text with every name of a student other than `keep` replaced by `replacement` (possessive kept). A first
   * name or surname alone counts for the students `near` says are around (the session's), never for `keep`'s; a
   * spelling of `keep`'s own name stays, though a namesake has it too.
   */
  scrub(text: string, replacement: string, keep?: Id | null, near?: (id: Id) => boolean): string;
  /** Whether the text names a student other than `keep`. */
  mentions(text: string, keep?: Id | null, near?: (id: Id) => boolean): boolean;
}

/**
 * Invisible characters removed from the text before matching: default-ignorable code points (soft hyphen,
 * zero-width spaces, word joiners, tag characters, bidi embeddings, overrides and isolates…) except those that
 * shape text (ZWNJ, ZWJ, variation selectors, the combining grapheme joiner).
 */
export const REMOVED =
  /[\p{Default_Ignorable_Code_Point}--[\u034F\u200C\u200D\uFE00-\uFE0F\u{E0100}-\u{E01EF}]]/gv;
/** Invisible joiners and marks that stay in the text (they shape Persian, Indic and emoji) but not in keys. */
const IGNORED_IN_KEYS = /\p{Default_Ignorable_Code_Point}/gu;
/** A word: letters, marks, digits; an apostrophe or hyphen only between letters ("O'Brien's", "Fitzgerald-Hall"). */
const WORD =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: invisible joiners are matched one by one on purpose.
  /[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}\u034F\u200C-\u200F]|['’ʼ\u2010\u2011-](?=[\p{L}\p{N}]))*/gu;
const POSSESSIVE = /['’ʼ]s$/i;
/** Scripts written without spaces between words: names are found inside longer runs of text. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]/u;
const UNSPACED_ONLY =
  /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\s]+$/u;
const NON_ASCII = /[^ -~\t\n\r]/;
const INITIALS_SCRIPT = /^[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{M}'’ʼ\s-]+$/u;
/** Written as a name: a capital first letter (scripts without capitals never match a name alone). */
const CAPITALISED = /^[\p{Lu}\p{Lt}]/u;

/** The comparison form of one word: no marks, no invisible characters, lower case, plain letters, no "'s". */
export function foldWord(word: string): string {
  let w = word;
  if (NON_ASCII.test(w)) {
    w = w.replace(IGNORED_IN_KEYS, '').normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
    w = plainLetters(w).normalize('NFC');
  } else w = w.toLowerCase();
  return w.replace(POSSESSIVE, '');
}

/**
 * Names that are also common English words: alone, at the start of a sentence or line, they are left ("Will you
 * bring…", "Grace period ends"); anywhere else, or possessive, they are scrubbed like any name.
 */
export const COMMON_WORDS: ReadonlySet<string> = new Set(
  (
    'will grace rose may june april august hope faith joy bill mark pat art sue jack ruby amber hazel holly ivy ' +
    'lily daisy iris violet olive pearl jade summer autumn winter dawn sky storm river brook rain sunny honey ' +
    'melody chance chase hunter mason cooper baker taylor cook smith brown green white black young long hall ' +
    'wood bell king rich frank miles guy don drew rob nick penny bob dean carol robin jay wren reed fox lane page ' +
    'wade cliff dale glen grant heath max sterling hardy noble moody gay lucky eve ray bay field north west'
  ).split(' '),
);

function rawWords(name: string): string[] {
  return name.normalize('NFC').replace(REMOVED, '').match(WORD) ?? [];
}

/** A name part's keys: as written, and romanised when Cyrillic or Greek ("Саша Шевченко" → "sasha shevchenko"). */
function partForms(name: string): string[][] {
  const raw = rawWords(name);
  const folded = raw.map(foldWord).filter(Boolean);
  if (folded.length === 0) return [];
  const out = [folded];
  const romans = raw.map(romanisations);
  if (romans.some((r) => r.length > 0)) {
    for (let v = 0; v < 2; v++) {
      const form = raw.map((w, i) => foldWord(romans[i]![v] ?? romans[i]![0] ?? w)).filter(Boolean);
      if (!out.some((o) => o.join(' ') === form.join(' '))) out.push(form);
    }
  }
  return out;
}

interface Forms {
  givens: string[][];
  families: string[][];
}

function formsOf(s: StudentNames): Forms {
  const dedupe = (all: string[][]) =>
    all.filter((g, i) => all.findIndex((x) => x.join(' ') === g.join(' ')) === i);
  return {
    givens: dedupe([s.firstName, s.legalFirstName ?? ''].flatMap(partForms)),
    families: dedupe(partForms(s.lastName)),
  };
}

/** Every way a student's full name is written: either order, initials, joined, with and without spaces. */
function spellings(s: StudentNames, forms: Forms): string[][] {
  const out: string[][] = [];
  const alphabetic = INITIALS_SCRIPT.test(`${s.firstName} ${s.lastName}`);
  for (const family of forms.families) {
    for (const given of forms.givens) {
      out.push([...given, ...family], [...family, ...given]);
      // Glued by a removed zero-width space, or a CJK name written as one run; "Xander-Hughes".
      out.push([[...given, ...family].join('')], [[...family, ...given].join('')]);
      out.push([[...given, ...family].join('-')], [[...family, ...given].join('-')]);
      if (alphabetic && given.length === 1 && family.length === 1) {
        const g = given[0]!;
        const f = family[0]!;
        // "O. MacDonald", "Olivia M.", "MacDonald, O." — short given names would be too common on their own.
        out.push([g[0]!, f], [g, f[0]!], [f, g[0]!]);
      }
    }
  }
  return out;
}

interface Span {
  start: number;
  end: number;
}

/**
 * Staff names are left as they are where they are written in full ("Coach: Charlie Jones" stays when a student is
 * called Charlie or Jones), unless they are a student's full name as well.
 */
export interface PersonName {
  firstName: string;
  lastName: string;
}

export function compileNameMatcher(
  students: Iterable<StudentNames>,
  staff: Iterable<PersonName> = [],
): NameMatcher {
  return runSteps(compileSteps(students, staff));
}

/** Students compiled between two pauses of compileNameMatcherPaced (a few milliseconds of work). */
const STUDENTS_PER_STEP = 500;

/**
 * compileNameMatcher that gives the event loop a turn every few hundred students: a district's 12,000 students
 * are a third of a second of compiling, which a web server in the same process would otherwise wait out.
 */
export async function compileNameMatcherPaced(
  students: Iterable<StudentNames>,
  pause: () => Promise<void>,
  staff: Iterable<PersonName> = [],
): Promise<NameMatcher> {
  return runStepsPaced(compileSteps(students, staff), pause);
}

function* compileSteps(
  students: Iterable<StudentNames>,
  staff: Iterable<PersonName>,
): Generator<void, NameMatcher> {
  const index = yield* indexStudents(students);
  return matcherOver(index, indexStaff(staff));
}

/** Every student's names, by the ways a text may write them. */
interface StudentIndex {
  /** A full spelling (its words joined by spaces) → whose it is. */
  owners: Map<string, Id[]>;
  starts: Set<string>;
  maxWords: number;
  /** A first name or surname alone (one or more words) → whose it is. */
  partials: Map<string, Id[]>;
  partialStarts: Set<string>;
  maxPartial: number;
  /** A one-word given name → the surnames that may follow it after one or two middle names → whose. */
  middles: Map<string, Map<string, Id[]>>;
  /** Surname and given name glued, for scripts written without spaces → whose. */
  unspaced: Map<string, Id[]>;
}

/** Staff full names (either order): passed over whole, so their parts are not taken for students' names. */
interface StaffIndex {
  staffNames: Set<string>;
  staffStarts: Set<string>;
  maxStaff: number;
}

function addOwner(map: Map<string, Id[]>, key: string, id: Id) {
  const list = map.get(key);
  if (!list) map.set(key, [id]);
  else if (!list.includes(id)) list.push(id);
}

function* indexStudents(students: Iterable<StudentNames>): Generator<void, StudentIndex> {
  const ix: StudentIndex = {
    owners: new Map(),
    starts: new Set(),
    maxWords: 1,
    partials: new Map(),
    partialStarts: new Set(),
    maxPartial: 1,
    middles: new Map(),
    unspaced: new Map(),
  };
  let compiled = 0;
  for (const s of students) {
    if (++compiled % STUDENTS_PER_STEP === 0) yield;
    indexStudent(ix, s);
  }
  return ix;
}

function indexStudent(ix: StudentIndex, s: StudentNames) {
  const forms = formsOf(s);
  for (const spelling of spellings(s, forms)) {
    const key = spelling.join(' ');
    // A lone "Li" or "Jo" is a word, not a name: glued single-word spellings need some length.
    if (spelling.length === 1 && [...key].length < (UNSPACED.test(key) ? 2 : 6)) continue;
    addOwner(ix.owners, key, s.id);
    ix.starts.add(spelling[0]!);
    ix.maxWords = Math.max(ix.maxWords, spelling.length);
  }
  if (forms.families.length === 0) return;
  for (const part of [...forms.givens, ...forms.families]) {
    const key = part.join(' ');
    if (key.replace(/[\s'-]/g, '').length < 2 || UNSPACED.test(key)) continue;
    addOwner(ix.partials, key, s.id);
    ix.partialStarts.add(part[0]!);
    ix.maxPartial = Math.max(ix.maxPartial, part.length);
  }
  for (const given of forms.givens) {
    if (given.length !== 1) continue;
    const byFamily = ix.middles.get(given[0]!) ?? new Map<string, Id[]>();
    for (const family of forms.families) addOwner(byFamily, family.join(' '), s.id);
    ix.middles.set(given[0]!, byFamily);
  }
  for (const given of [s.firstName, s.legalFirstName ?? '']) {
    if (!given.trim() || !UNSPACED_ONLY.test(`${given} ${s.lastName}`)) continue;
    for (const needle of [`${s.lastName}${given}`, `${given}${s.lastName}`])
      addOwner(ix.unspaced, needle.replace(/\s+/g, '').normalize('NFC'), s.id);
  }
}

function indexStaff(staff: Iterable<PersonName>): StaffIndex {
  const staffNames = new Set<string>();
  const staffStarts = new Set<string>();
  let maxStaff = 1;
  for (const p of staff) {
    const given = rawWords(p.firstName).map(foldWord).filter(Boolean);
    const family = rawWords(p.lastName).map(foldWord).filter(Boolean);
    if (!given.length || !family.length) continue;
    for (const spelling of [
      [...given, ...family],
      [...family, ...given],
    ]) {
      staffNames.add(spelling.join(' '));
      staffStarts.add(spelling[0]!);
      maxStaff = Math.max(maxStaff, spelling.length);
    }
  }
  return { staffNames, staffStarts, maxStaff };
}

/** Words repeat across a school's events ("Training", "Bring", team names): each is folded once per compile. */
function foldOnce(): (w: string) => string {
  const folded = new Map<string, string>();
  return (w: string) => {
    let k = folded.get(w);
    if (k === undefined) {
      if (folded.size > 100_000) folded.clear();
      k = foldWord(w);
      folded.set(w, k);
    }
    return k;
  };
}

type SpanFinder = (text: string, keep: Id | null, near: ((id: Id) => boolean) | undefined) => Span[];

function spanFinder(
  ix: StudentIndex,
  st: StaffIndex,
  unspacedRe: RegExp | null,
  fold: (w: string) => string,
): SpanFinder {
  const { owners, starts, maxWords, partials, partialStarts, maxPartial, middles, unspaced } = ix;
  const { staffNames, staffStarts, maxStaff } = st;
  // A spelling of keep's own name is keep's, whoever else has it: a namesake's name in keep's own feed tells the
  // family nothing, and scrubbing it there would call their own child "(a student)".
  const foreign = (ids: Id[] | undefined, keep: Id | null) =>
    !!ids && !(keep !== null && ids.includes(keep)) && ids.some((id) => id !== keep);
  const key = (tokens: RegExpExecArray[], from: number, n: number) => {
    let k = fold(tokens[from]![0]);
    for (let j = 1; j < n; j++) k += ` ${fold(tokens[from + j]![0])}`;
    return k;
  };
  /** Where a span of tokens ends: before a possessive "'s"; with the full stop of an initial ("Olivia M."). */
  const endOf = (text: string, last: RegExpExecArray) => {
    const possessive = POSSESSIVE.exec(last[0]);
    let end = last.index + last[0].length - (possessive?.[0].length ?? 0);
    if (last[0].length === 1 && text[end] === '.') end++;
    return end;
  };
  /**
   * "Alexander James Hughes", "Alexander J. Hughes": n tokens from i, or 0; -n when the name is keep's own (its
   * words are then passed over, so keep's middle name is not taken for a classmate's first name).
   */
  const withMiddle = (tokens: RegExpExecArray[], i: number, keep: Id | null): number => {
    const byFamily = middles.get(fold(tokens[i]![0]));
    if (!byFamily) return 0;
    for (let m = 1; m <= 2; m++) {
      const middle = tokens[i + m];
      if (!middle || !CAPITALISED.test(middle[0])) return 0;
      for (let f = 1; f <= 2 && i + m + f < tokens.length; f++) {
        const ids = byFamily.get(key(tokens, i + m + 1, f));
        if (ids) return foreign(ids, keep) ? m + f + 1 : -(m + f + 1);
      }
    }
    return 0;
  };
  /** A staff member's full name at i: -n (passed over), or 0. */
  const staffAt = (tokens: RegExpExecArray[], i: number): number => {
    if (!staffStarts.has(fold(tokens[i]![0]))) return 0;
    for (let n = Math.min(maxStaff, tokens.length - i); n >= 2; n--)
      if (staffNames.has(key(tokens, i, n))) return -n;
    return 0;
  };
  /** A first name or surname alone, written as a name, of a student around (not keep): n tokens from i, or 0. */
  const alone = (
    text: string,
    tokens: RegExpExecArray[],
    i: number,
    keep: Id | null,
    near: (id: Id) => boolean,
  ): number => {
    if (!partialStarts.has(fold(tokens[i]![0]))) return 0;
    for (let n = Math.min(maxPartial, tokens.length - i); n >= 1; n--) {
      const k = key(tokens, i, n);
      const ids = partials.get(k);
      if (!ids || (keep !== null && ids.includes(keep)) || !ids.some((id) => id !== keep && near(id)))
        continue;
      for (let j = 0; j < n; j++) if (!CAPITALISED.test(tokens[i + j]![0])) return 0;
      const last = tokens[i + n - 1]![0];
      if (COMMON_WORDS.has(k) && !POSSESSIVE.test(last) && sentenceStart(text, tokens[i]!.index)) return 0;
      return n;
    }
    return 0;
  };

  /** Spans (in the cleaned text) that name a student other than keep, in order, not overlapping. */
  function spans(text: string, keep: Id | null, near: ((id: Id) => boolean) | undefined): Span[] {
    const out: Span[] = [];
    if (unspacedRe && UNSPACED.test(text)) {
      for (const m of text.matchAll(unspacedRe))
        if (foreign(unspaced.get(m[0]), keep)) out.push({ start: m.index, end: m.index + m[0].length });
    }
    const tokens = [...text.matchAll(WORD)];
    for (let i = 0; i < tokens.length; i++) {
      let n = 0;
      if (starts.has(fold(tokens[i]![0]))) {
        for (let len = Math.min(maxWords, tokens.length - i); len >= 1; len--) {
          const ids = owners.get(key(tokens, i, len));
          if (ids) {
            n = foreign(ids, keep) ? len : -len;
            break;
          }
        }
      }
      if (n === 0) n = withMiddle(tokens, i, keep);
      if (n === 0 && near) n = staffAt(tokens, i) || alone(text, tokens, i, keep, near);
      if (n < 0) i += -n - 1;
      if (n <= 0) continue;
      out.push({ start: tokens[i]!.index, end: endOf(text, tokens[i + n - 1]!) });
      i += n - 1;
    }
    if (out.length < 2) return out;
    out.sort((a, b) => a.start - b.start || b.end - a.end);
    const merged: Span[] = [out[0]!];
    for (const s of out.slice(1)) {
      const prev = merged[merged.length - 1]!;
      if (s.start <= prev.end) prev.end = Math.max(prev.end, s.end);
      else merged.push(s);
    }
    return merged;
  }
  return spans;
}

function matcherOver(ix: StudentIndex, st: StaffIndex): NameMatcher {
  const { owners, starts, partialStarts, middles, unspaced } = ix;
  const needles = [...unspaced.keys()].sort((a, b) => b.length - a.length);
  const unspacedRe = needles.length
    ? new RegExp(needles.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'gu')
    : null;

  const fold = foldOnce();
  const spans = spanFinder(ix, st, unspacedRe, fold);

  const clean = (text: string) => (NON_ASCII.test(text) ? text.normalize('NFC').replace(REMOVED, '') : text);

  if (owners.size === 0 && !unspacedRe) {
    return { scrub: (text) => clean(text), mentions: () => false };
  }
  // The same short texts come back in every event of a school (team, activity and venue names, titles, times):
  // whether one holds a word that can start a name at all is remembered, so most texts cost one lookup.
  const possible = new Map<string, boolean>();
  const mayName = (t: string) => {
    let yes = possible.get(t);
    if (yes !== undefined) return yes;
    yes = !!unspacedRe && UNSPACED.test(t);
    if (!yes)
      for (const m of t.matchAll(WORD)) {
        const w = fold(m[0]);
        if (starts.has(w) || partialStarts.has(w) || middles.has(w)) {
          yes = true;
          break;
        }
      }
    if (t.length <= 500) {
      if (possible.size > 50_000) possible.clear();
      possible.set(t, yes);
    }
    return yes;
  };
  return {
    scrub(text, replacement, keep = null, near) {
      const t = clean(text);
      if (!mayName(t)) return t;
      const found = spans(t, keep, near);
      if (found.length === 0) return t;
      let out = '';
      let at = 0;
      for (const s of found) {
        out += t.slice(at, s.start) + replacement;
        at = s.end;
      }
      return out + t.slice(at);
    },
    mentions(text, keep = null, near) {
      const t = clean(text);
      return mayName(t) && spans(t, keep, near).length > 0;
    },
  };
}

/** Whether only spaces, opening quotes, brackets or a bullet stand between `at` and a sentence's or line's start. */
function sentenceStart(text: string, at: number): boolean {
  for (let i = at - 1; i >= 0; i--) {
    const c = text[i]!;
    if (c === '\n' || c === '.' || c === '!' || c === '?') return true;
    if (!/[\s"'“‘([•*–—-]/.test(c)) return false;
  }
  return true;
}
