// The demo school's days off: New South Wales public holidays and school holidays, so the generated school never
// trains on Christmas Day or in the summer break. Rules, not a table, so every year the generator may reach is
// covered and the result is the same on every machine:
//   public holidays (NSW, state-wide): New Year's Day, Australia Day (26 Jan; a Saturday or Sunday moves it to the
//     Monday), Good Friday to Easter Monday, Anzac Day (25 Apr), the King's Birthday (second Monday of June),
//     Labour Day (first Monday of October), Christmas Day and Boxing Day (with their weekday substitutes);
//   school holidays (the pattern of the NSW Eastern division's terms, not the Department's published dates):
//     summer from the Saturday after the last Friday on or before 19 December to the Sunday before the first
//     Monday on or after 1 February; autumn, winter and spring two weeks each (with the weekends either side)
//     from the first Monday on or after 10 April, 30 June and 22 September.
const DAY = 86_400_000;

/** A calendar date as days since 1970-01-01 (no time zone: the school's local date). */
function dayNumber(y: number, m: number, d: number): number {
  return Date.UTC(y, m - 1, d) / DAY;
}
const weekday = (n: number) => new Date(n * DAY).getUTCDay(); // 0 Sunday … 6 Saturday

/** The first day on or after `n` that falls on `dow`. */
function onOrAfter(n: number, dow: number): number {
  return n + ((dow - weekday(n) + 7) % 7);
}
function onOrBefore(n: number, dow: number): number {
  return n - ((weekday(n) - dow + 7) % 7);
}

/** Easter Sunday (Gregorian; the anonymous algorithm of Meeus/Jones/Butcher). */
export function easterSunday(y: number): number {
  const a = y % 19;
  const b = Math.floor(y / 100);
  const c = y % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return dayNumber(y, month, day);
}

function publicHolidays(y: number): Map<number, string> {
  const out = new Map<number, string>();
  const add = (n: number, name: string) => out.set(n, name);
  /** The day itself, and the next weekday not already a holiday when it falls on a weekend. */
  const withSubstitute = (n: number, name: string) => {
    add(n, name);
    if (weekday(n) === 0 || weekday(n) === 6) {
      let sub = onOrAfter(n, 1);
      while (out.has(sub)) sub++;
      add(sub, `${name} (substitute)`);
    }
  };
  withSubstitute(dayNumber(y, 1, 1), "New Year's Day");
  withSubstitute(dayNumber(y, 1, 26), 'Australia Day');
  const easter = easterSunday(y);
  add(easter - 2, 'Good Friday');
  add(easter - 1, 'Easter Saturday');
  add(easter, 'Easter Sunday');
  add(easter + 1, 'Easter Monday');
  add(dayNumber(y, 4, 25), 'Anzac Day');
  add(onOrAfter(dayNumber(y, 6, 1), 1) + 7, "King's Birthday");
  add(onOrAfter(dayNumber(y, 10, 1), 1), 'Labour Day');
  add(dayNumber(y, 12, 25), 'Christmas Day');
  add(dayNumber(y, 12, 26), 'Boxing Day');
  for (const n of [dayNumber(y, 12, 25), dayNumber(y, 12, 26)]) {
    if (weekday(n) === 0 || weekday(n) === 6) {
      let sub = onOrAfter(n, 1);
      while (out.has(sub)) sub++;
      add(sub, `${out.get(n)} (substitute)`);
    }
  }
  return out;
}

function schoolHolidays(y: number): [from: number, to: number, name: string][] {
  const twoWeeks = (monthDay: [number, number], name: string): [number, number, string] => {
    const monday = onOrAfter(dayNumber(y, ...monthDay), 1);
    return [monday - 2, monday + 15, name];
  };
  const termOneStarts = (year: number) => onOrAfter(dayNumber(year, 2, 1), 1);
  const termFourEnds = (year: number) => onOrBefore(dayNumber(year, 12, 19), 5);
  return [
    [termFourEnds(y - 1) + 1, termOneStarts(y) - 1, 'summer school holidays'],
    twoWeeks([4, 10], 'autumn school holidays'),
    twoWeeks([6, 30], 'winter school holidays'),
    twoWeeks([9, 22], 'spring school holidays'),
    [termFourEnds(y) + 1, termOneStarts(y + 1) - 1, 'summer school holidays'],
  ];
}

const cache = new Map<
  number,
  { publicHolidays: Map<number, string>; holidays: [number, number, string][] }
>();

/**
 * Why the school has no activities on a local date (`YYYY-MM-DD`), or null on a school day. Weekends in term are
 * school days here: fixtures are played on Saturdays.
 */
export function dayOff(date: string): string | null {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const n = dayNumber(y, m, d);
  let year = cache.get(y);
  if (!year) {
    year = { publicHolidays: publicHolidays(y), holidays: schoolHolidays(y) };
    cache.set(y, year);
  }
  const holiday = year.publicHolidays.get(n);
  if (holiday) return holiday;
  for (const [from, to, name] of year.holidays) if (n >= from && n <= to) return name;
  return null;
}
