// Finds students' names in free text written upstream (titles, parent notes, custom fields, locations), the way
// teachers actually write them: "Olivia MacDonald's mum drives", "MacDonald, Olivia", "O. MacDonald",
// "Liv MacDonald" (preferred name), "Soren Muller" for Søren Müller, a decomposed "Ngọc Trâm Bùi", a soft hyphen
// or zero-width space inside a name, "王小明的妈妈" (no spaces in CJK text).
//
// Compiled once per projection context (one school, one pull): every spelling of every student becomes a key in
// one map, so the cost per text is a tokenisation plus one map lookup per word that can start a name, however
// many students the school has. Over-matching (an unrelated "J. Smith") costs a few words of a note; missing a
// name puts a child's name in another family's calendar, so every doubt goes towards scrubbing.
import type { Id } from '../domain/types.ts';
import { runSteps, runStepsPaced } from '../util/event-loop.ts';

export interface StudentNames {
  id: Id;
  firstName: string;
  legalFirstName?: string | null;
  lastName: string;
}

export interface NameMatcher {
  /** The text with every name of a student other than `keep` replaced by `replacement` (possessive kept). */
  scrub(text: string, replacement: string, keep?: Id | null): string;
  /** Whether the text names a student other than `keep`. */
  mentions(text: string, keep?: Id | null): boolean;
}

/** Invisible characters removed from guardian-facing text: they only serve to hide a name or flip a line. */
const REMOVED = /[\u00AD\u180E\u200B\u2060-\u2064\uFEFF\u202A-\u202E\u2066-\u2069]/g;
/** Invisible joiners and marks that stay in the text (they shape Persian, Indic and emoji) but not in keys. */
const IGNORED_IN_KEYS = /[\u034F\u200C-\u200F]/g;
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

/** Letters that neither NFKD nor case folding turn into their plain form. */
const FOLD: Record<string, string> = {
  ø: 'o',
  đ: 'd',
  ł: 'l',
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  þ: 'th',
  ð: 'd',
  ı: 'i',
  ħ: 'h',
  ŧ: 't',
  ς: 'σ',
  ʼ: "'",
  '’': "'",
  '\u2010': '-',
  '\u2011': '-',
};
const FOLD_RE = new RegExp(`[${Object.keys(FOLD).join('')}]`, 'g');

/** The comparison form of one word: no marks, no invisible characters, lower case, plain letters, no "'s". */
export function foldWord(word: string): string {
  let w = word;
  if (NON_ASCII.test(w)) {
    w = w
      .replace(IGNORED_IN_KEYS, '')
      .replace(REMOVED, '')
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .replace(FOLD_RE, (c) => FOLD[c] ?? c)
      .normalize('NFC');
  } else w = w.toLowerCase();
  return w.replace(POSSESSIVE, '');
}

function words(name: string): string[] {
  return (name.normalize('NFC').replace(REMOVED, '').match(WORD) ?? []).map(foldWord).filter(Boolean);
}

/** Every way a student's full name is written: either order, initials, with and without spaces. */
function spellings(s: StudentNames): string[][] {
  const family = words(s.lastName);
  if (family.length === 0) return [];
  const givens = [s.firstName, s.legalFirstName ?? '']
    .map(words)
    .filter((g, i, all) => g.length > 0 && all.findIndex((x) => x.join(' ') === g.join(' ')) === i);
  const out: string[][] = [];
  for (const given of givens) {
    out.push([...given, ...family], [...family, ...given]);
    // Glued by a removed zero-width space, or a CJK name written as one run.
    out.push([[...given, ...family].join('')], [[...family, ...given].join('')]);
    const alphabetic = INITIALS_SCRIPT.test(`${s.firstName} ${s.lastName}`);
    if (alphabetic && given.length === 1 && family.length === 1) {
      const g = given[0]!;
      const f = family[0]!;
      // "O. MacDonald", "Olivia M.", "MacDonald, O." — short given names would be too common on their own.
      out.push([g[0]!, f], [g, f[0]!], [f, g[0]!]);
    }
  }
  return out;
}

interface Span {
  start: number;
  end: number;
}

export function compileNameMatcher(students: Iterable<StudentNames>): NameMatcher {
  return runSteps(compileSteps(students));
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
): Promise<NameMatcher> {
  return runStepsPaced(compileSteps(students), pause);
}

function* compileSteps(students: Iterable<StudentNames>): Generator<void, NameMatcher> {
  const owners = new Map<string, Id[]>();
  const starts = new Set<string>();
  let maxWords = 1;
  const unspaced = new Map<string, Id[]>();
  const add = (map: Map<string, Id[]>, key: string, id: Id) => {
    const list = map.get(key);
    if (!list) map.set(key, [id]);
    else if (!list.includes(id)) list.push(id);
  };
  let compiled = 0;
  for (const s of students) {
    if (++compiled % STUDENTS_PER_STEP === 0) yield;
    for (const spelling of spellings(s)) {
      const key = spelling.join(' ');
      // A lone "Li" or "Jo" is a word, not a name: glued single-word spellings need some length.
      if (spelling.length === 1 && [...key].length < (UNSPACED.test(key) ? 2 : 6)) continue;
      add(owners, key, s.id);
      starts.add(spelling[0]!);
      maxWords = Math.max(maxWords, spelling.length);
    }
    for (const given of [s.firstName, s.legalFirstName ?? '']) {
      if (!given.trim() || !UNSPACED_ONLY.test(`${given} ${s.lastName}`)) continue;
      for (const needle of [`${s.lastName}${given}`, `${given}${s.lastName}`])
        add(unspaced, needle.replace(/\s+/g, '').normalize('NFC'), s.id);
    }
  }
  const needles = [...unspaced.keys()].sort((a, b) => b.length - a.length);
  const unspacedRe = needles.length
    ? new RegExp(needles.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'gu')
    : null;

  // Words repeat across a school's events ("Training", "Bring", team names): fold each once per compile.
  const folded = new Map<string, string>();
  const fold = (w: string) => {
    let k = folded.get(w);
    if (k === undefined) {
      if (folded.size > 100_000) folded.clear();
      k = foldWord(w);
      folded.set(w, k);
    }
    return k;
  };
  const foreign = (ids: Id[] | undefined, keep: Id | null) => ids?.some((id) => id !== keep) ?? false;

  /** Spans (in the cleaned text) that name a student other than keep, in order, not overlapping. */
  function spans(text: string, keep: Id | null): Span[] {
    const out: Span[] = [];
    if (unspacedRe && UNSPACED.test(text)) {
      for (const m of text.matchAll(unspacedRe))
        if (foreign(unspaced.get(m[0]), keep)) out.push({ start: m.index, end: m.index + m[0].length });
    }
    const tokens = [...text.matchAll(WORD)];
    for (let i = 0; i < tokens.length; i++) {
      if (!starts.has(fold(tokens[i]![0]))) continue;
      for (let n = Math.min(maxWords, tokens.length - i); n >= 1; n--) {
        let key = fold(tokens[i]![0]);
        for (let j = 1; j < n; j++) key += ` ${fold(tokens[i + j]![0])}`;
        if (!foreign(owners.get(key), keep)) continue;
        const first = tokens[i]!;
        const last = tokens[i + n - 1]!;
        const possessive = POSSESSIVE.exec(last[0]);
        let end = last.index + last[0].length - (possessive?.[0].length ?? 0);
        // "Olivia M." — the initial's full stop goes with it.
        if (last[0].length === 1 && text[end] === '.') end++;
        out.push({ start: first.index, end });
        i += n - 1;
        break;
      }
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

  const clean = (text: string) => (NON_ASCII.test(text) ? text.normalize('NFC').replace(REMOVED, '') : text);

  if (owners.size === 0 && !unspacedRe) {
    return { scrub: (text) => clean(text), mentions: () => false };
  }
  return {
    scrub(text, replacement, keep = null) {
      const t = clean(text);
      const found = spans(t, keep);
      if (found.length === 0) return t;
      let out = '';
      let at = 0;
      for (const s of found) {
        out += t.slice(at, s.start) + replacement;
        at = s.end;
      }
      return out + t.slice(at);
    },
    mentions(text, keep = null) {
      return spans(clean(text), keep).length > 0;
    },
  };
}
