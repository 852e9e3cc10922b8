// What the name matcher takes that is not a name, measured: the demo school's parent notes (the sandbox's
// generated school, seed 42, 'school' scale: 1,200 students, among them Will, Grace, Ruby, Jack, Brown, Taylor)
// scrubbed as a team feed scrubs them, and a labelled corpus of notes that name teammates beside the words that
// look like names (Will you…, the Grace period, Brown shoes). The figures are printed for the README.
import { describe, expect, it } from 'vitest';
import { COMMON_WORDS, compileNameMatcher } from '../../src/calendar/other-children-filter.ts';
import { generateSchool } from '../../src/sandbox/index.ts';

const school = generateSchool(42, 'school', '2026-11-23T01:00:00Z');
const matcher = compileNameMatcher(school.students, school.users);
const WORD = /[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}]|['’-](?=[\p{L}\p{N}]))*/gu;
/** Words, a possessive "'s" not one of its own ("—'s mum" is two). */
const count = (text: string) => (text.replace(/['’]s\b/g, '').match(WORD) ?? []).length;
/** No letters: every word of a scrubbed span is gone from the count. */
const GONE = '\u2014';

const membersOf = new Map<number, Set<number>>();
for (const m of school.memberships) {
  const set = membersOf.get(m.teamId) ?? new Set<number>();
  set.add(m.studentId);
  membersOf.set(m.teamId, set);
}
const activityOf = new Map(school.teams.map((t) => [t.id, t.activityId]));
const byActivity = new Map<number, Set<number>>();
for (const [team, members] of membersOf) {
  const a = activityOf.get(team)!;
  const set = byActivity.get(a) ?? new Set<number>();
  for (const id of members) set.add(id);
  byActivity.set(a, set);
}

describe('words scrubbed that are not names', () => {
  it('in the demo school’s parent notes (none name a student): counted', () => {
    let words = 0;
    let scrubbed = 0;
    let notes = 0;
    // Titles, venues and team names too: none of the generated ones names a student either.
    let otherWords = 0;
    let otherScrubbed = 0;
    const venue = new Map(school.locations.map((l) => [l.id, l.name]));
    const teamName = new Map(school.teams.map((t) => [t.id, t.name]));
    for (const s of school.sessions) {
      const around = byActivity.get(s.activityId) ?? new Set<number>();
      const near = (id: number) => around.has(id) || s.rosterIds.includes(id);
      const gone = (text: string) => count(text) - count(matcher.scrub(text, GONE, null, near));
      for (const text of [
        s.title,
        venue.get(s.locationId ?? -1) ?? '',
        ...s.teamIds.map((t) => teamName.get(t)!),
      ]) {
        otherWords += count(text);
        otherScrubbed += gone(text);
      }
      const text = s.studentParentNotes.trim();
      if (!text) continue;
      notes++;
      words += count(text);
      scrubbed += gone(text);
    }
    console.log(
      `demo parent notes: ${notes} notes, ${words} words, ${scrubbed} scrubbed (${((100 * scrubbed) / words).toFixed(3)}%), none of them names; titles, venues and team names: ${otherWords} words, ${otherScrubbed} scrubbed`,
    );
    expect(notes).toBeGreaterThan(1000);
    expect(scrubbed / words).toBeLessThan(0.001);
    expect(otherScrubbed / otherWords).toBeLessThan(0.001);
  });

  it('in notes that name teammates beside words that look like names: counted', () => {
    // Teammates with names in a script with capitals (a name alone is only looked for there), and, as if they
    // were in the same activity, every student whose name is also a common word: the worst case for the traps.
    const latin = (s: { firstName: string; lastName: string }) =>
      /^[\p{Script=Latin}' -]+$/u.test(`${s.firstName} ${s.lastName}`);
    const [a, b, c] = school.students.filter(
      (s) => s.current && latin(s) && !COMMON_WORDS.has(s.firstName.toLowerCase()),
    );
    const traps = school.students.filter((s) =>
      [s.firstName, s.lastName].some((n) => COMMON_WORDS.has(n.toLowerCase())),
    );
    const mates = [a!, b!, c!, ...traps];
    // [[…]] marks a name; everything else is not one.
    const corpus = [
      `[[${a!.firstName}]]'s mum drives on Saturday.`,
      `Lift with [[${b!.firstName} ${b!.lastName}]] and [[${c!.lastName}]].`,
      `Bags go in the [[${a!.lastName}]]'s car.`,
      'Will you bring the oranges? Grace period for fees ends Friday.',
      'May we remind you: Brown shoes are not part of the uniform.',
      'Rose Bay ferry at 8:10. Mark the date: June 5.',
      'Please bring a Jack for the bike stand and Ruby red socks for the Smith Cup.',
      'Meet at Taylor Square. Young players bring a hat.',
      `[[${c!.firstName}]] and [[${b!.firstName}]] warm up first.`,
      'Pick-up from the College Road gate.',
    ];
    const near = (id: number) => mates.some((m) => m.id === id);
    let names = 0;
    let scrubbedNames = 0;
    let scrubbedOthers = 0;
    for (const line of corpus) {
      const plain = line.replace(/\[\[|\]\]/g, '');
      const out = matcher.scrub(plain, GONE, null, near);
      const marked = [...line.matchAll(/\[\[(.+?)\]\]/g)].map((m) => m[1]!);
      const nameWords = marked.reduce((n, m) => n + count(m), 0);
      const gone = count(plain) - count(out);
      names += nameWords;
      // Every marked name must be gone: what else went is what was scrubbed and was not a name.
      for (const m of marked) expect(out.includes(m), `${line} → ${out}`).toBe(false);
      scrubbedNames += nameWords;
      scrubbedOthers += gone - nameWords;
    }
    const share = scrubbedOthers / (scrubbedNames + scrubbedOthers);
    console.log(
      `labelled notes: ${names} name words, all scrubbed; ${scrubbedOthers} other words scrubbed (${(100 * share).toFixed(1)}% of scrubbed words were not names)`,
    );
    expect(scrubbedNames).toBe(names);
    expect(share).toBeLessThan(0.5);
  });
});
