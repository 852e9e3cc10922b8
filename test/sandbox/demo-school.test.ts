// The demo school must read as a real one at first sight: notes, uniforms and venues that suit the activity, no
// sessions on public holidays or in school holidays, single-sex teams whose members' names suit them, and a README
// whose numbers are the demo's. Each property is checked over the whole generated school (the demo's seed and
// scale), at two dates so that both halves of the school year are covered.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEMO_SANDBOX } from '../../src/config.ts';
import { ACTIVITIES } from '../../src/sandbox/fixed-facts.ts';
import { generateSchool } from '../../src/sandbox/index.ts';
import { givenNameGender } from '../../src/sandbox/name-pools.ts';
import { dayOff, easterSunday } from '../../src/sandbox/school-calendar.ts';

const DATES = ['2026-11-23T01:00:00.000Z', '2027-06-01T01:00:00.000Z'];
const schools = DATES.map((now) => ({
  now,
  school: generateSchool(DEMO_SANDBOX.seed, DEMO_SANDBOX.scale, now),
}));
const kindOf = new Map(ACTIVITIES.map((a) => [a.name, a.kind]));

function sessionsWithContext() {
  return schools.flatMap(({ school }) => {
    const activity = new Map(school.activities.map((a) => [a.id, a.name]));
    const location = new Map(school.locations.map((l) => [l.id, l.name]));
    return school.sessions.map((s) => {
      const name = activity.get(s.activityId)!;
      return {
        s,
        activity: name,
        kind: kindOf.get(name)!,
        venue: s.locationId === null ? null : (location.get(s.locationId) ?? null),
        uniforms: Object.values(s.teamCustomFieldsData).map((d) => String(d.uniform ?? '')),
      };
    });
  });
}

const localDate = (ms: number) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: 'Australia/Sydney' }).format(new Date(ms));

describe('the demo school', () => {
  it('notes, uniforms and venues suit the kind of activity', () => {
    const all = sessionsWithContext();
    expect(all.length).toBeGreaterThan(4000);
    const bad: string[] = [];
    const flag = (why: string, x: (typeof all)[number]) =>
      bad.push(`${why}: session ${x.s.id} ${x.s.title} (${x.activity}) at ${x.venue} wearing ${x.uniforms}`);
    for (const x of all) {
      const text = `${x.s.studentParentNotes}\n${x.s.notes}`;
      if (/mouthguard/i.test(text) && !['Rugby Union', 'Hockey'].includes(x.activity)) flag('mouthguards', x);
      if (x.kind !== 'sport' && /boots|shin pads|cones and bibs|PE store/i.test(text)) flag('sport note', x);
      if (x.kind === 'sport' && /instrument|script|concert/i.test(text)) flag('music/drama note', x);
      for (const u of x.uniforms) {
        if (x.kind !== 'sport' && /kit$/i.test(u)) flag('sports kit', x);
        if (x.kind === 'sport' && /concert|blacks/i.test(u)) flag('concert blacks', x);
      }
      // One-off sessions with no team: trials and carnivals are for sport, auditions and showcases for the arts.
      if (x.s.teamIds.length === 0) {
        if (x.kind !== 'sport' && /Trials|Carnival|Team photos/.test(x.s.title)) flag('sport one-off', x);
        if (x.kind === 'sport' && /Showcase|Auditions/.test(x.s.title)) flag('arts one-off', x);
        if (!['music', 'drama'].includes(x.kind) && /Auditions|Showcase/.test(x.s.title))
          flag('arts one-off', x);
      }
      const v = x.venue;
      if (v === 'Aquatic Centre' && x.activity !== 'Water Polo') flag('pool', x);
      if (v === 'Tennis Courts' && x.activity !== 'Tennis') flag('tennis courts', x);
      if (v === 'Boatshed' && x.activity !== 'Rowing') flag('boatshed', x);
      if (v?.startsWith('Music School') && x.kind !== 'music') flag('music room', x);
      if (v?.startsWith('Sports Centre') && !['Netball', 'Basketball', 'Volleyball'].includes(x.activity))
        flag('courts', x);
      if (
        x.kind === 'sport' &&
        ['Great Hall', 'Library Seminar Room', 'Science Block — Lab 4'].includes(v ?? '')
      )
        flag('sport indoors', x);
      if (x.activity === 'Water Polo' && v !== null && !v.includes('Aquatic') && x.s.locationId! < 500)
        flag('water polo out of the water', x);
    }
    expect(bad.slice(0, 20)).toEqual([]);
  });

  it('has no session on a public holiday or in the school holidays', () => {
    const bad: string[] = [];
    for (const { school } of schools)
      for (const s of school.sessions) {
        const day = localDate(s.start);
        const why = dayOff(day);
        if (why || /-(12-2[5-9]|12-3[01]|01-0[1-9]|01-1\d|01-2\d)$/.test(day))
          bad.push(`${s.id} ${s.title} on ${day} (${why ?? 'summer break'})`);
      }
    expect(bad.slice(0, 20)).toEqual([]);
    // Sessions in term time remain: every month of term has some.
    const months = new Set(
      schools.flatMap(({ school }) => school.sessions.map((s) => localDate(s.start).slice(0, 7))),
    );
    for (const m of ['2026-08', '2026-11', '2027-03', '2027-05', '2027-08', '2027-11'])
      expect(months).toContain(m);
  });

  it('knows the NSW days off (rules documented in school-calendar.ts)', () => {
    expect(localDate(Date.UTC(2027, 2, 28, 12) - 0)).toBe('2027-03-28');
    expect(new Date(easterSunday(2027) * 86_400_000).toISOString().slice(0, 10)).toBe('2027-03-28');
    expect(new Date(easterSunday(2026) * 86_400_000).toISOString().slice(0, 10)).toBe('2026-04-05');
    expect(dayOff('2026-12-25')).toBe('Christmas Day');
    expect(dayOff('2027-01-01')).toBe("New Year's Day");
    expect(dayOff('2027-01-26')).toBe('Australia Day');
    expect(dayOff('2027-03-26')).toBe('Good Friday');
    expect(dayOff('2027-03-29')).toBe('Easter Monday');
    expect(dayOff('2027-06-14')).toBe("King's Birthday");
    expect(dayOff('2026-10-05')).toBe('Labour Day');
    expect(dayOff('2026-12-28')).toBe('Boxing Day (substitute)'); // 26 December 2026 is a Saturday
    expect(dayOff('2026-12-30')).toBe('summer school holidays');
    expect(dayOff('2027-01-15')).toBe('summer school holidays');
    expect(dayOff('2027-07-06')).toBe('winter school holidays');
    expect(dayOff('2027-02-01')).toBeNull(); // Term 1 starts
    expect(dayOff('2026-11-25')).toBeNull();
    expect(dayOff('2026-11-28')).toBeNull(); // a Saturday in term: fixtures are played
  });

  it('single-sex teams list only students of that sex whose names suit it', () => {
    const bad: string[] = [];
    for (const { school } of schools) {
      const student = new Map(school.students.map((s) => [s.id, s]));
      for (const team of school.teams) {
        const sub = team.subcategory?.name;
        if (sub !== 'Boys' && sub !== 'Girls') continue;
        const other = sub === 'Boys' ? 'female' : 'male';
        for (const m of school.memberships.filter((x) => x.teamId === team.id)) {
          const p = student.get(m.studentId)!;
          const recorded = p.gender === (sub === 'Boys' ? 'Female' : 'Male');
          const named = [p.firstName, p.legalFirstName].some((n) => n && givenNameGender(n) === other);
          if (recorded || named) bad.push(`${team.name}: ${p.firstName} ${p.lastName} (${p.gender})`);
        }
      }
      // Every boy and girl has a name that is a boy's or a girl's (or either).
      for (const p of school.students) {
        const g = givenNameGender(p.firstName);
        if ((p.gender === 'Male' && g === 'female') || (p.gender === 'Female' && g === 'male'))
          bad.push(`${p.firstName} ${p.lastName} is recorded ${p.gender}`);
      }
    }
    expect(bad.slice(0, 20)).toEqual([]);
  });

  it('the README states what the demo really has', () => {
    const readme = readFileSync('README.md', 'utf8');
    const m =
      /generated school \(([\d,]+) students, ([\d,]+) of\s+them current, each with a feed; (\d+) teams; about ([\d,]+) sessions[^)]*reads ([\d,]+) to ([\d,]+)/.exec(
        readme,
      );
    expect(
      m,
      'README: "generated school (N students, M of them current, …; T teams; about S sessions … reads A to B"',
    ).not.toBeNull();
    const num = (s: string) => Number(s.replace(/,/g, ''));
    for (const { now, school } of schools) {
      expect(num(m![1]!)).toBe(school.students.length);
      expect(num(m![2]!)).toBe(school.students.filter((s) => s.current).length);
      expect(num(m![3]!)).toBe(school.teams.length);
      // Sessions depend on the date (a year around today): "about" means within 10%.
      expect(Math.abs(school.sessions.length - num(m![4]!))).toBeLessThan(num(m![4]!) * 0.1);
      // What a pull reads with the default window (syncWindow: 60 days back).
      const inWindow = school.sessions.filter((s) => s.end >= Date.parse(now) - 60 * 86_400_000).length;
      expect(inWindow).toBeGreaterThanOrEqual(num(m![5]!) * 0.98);
      expect(inWindow).toBeLessThanOrEqual(num(m![6]!) * 1.02);
    }
  });
});
