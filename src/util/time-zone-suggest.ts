// "Did you mean …?" for a time zone the runtime does not know: a misspelt IANA name ("Australia/Sidney"), a city
// alone ("Sydney") or an abbreviation people write on letters ("AEST", "EST"). Abbreviations are not zones: the
// few the runtime does accept (EST, MST) are fixed offsets that ignore daylight saving, so a school in New York
// would be an hour out half the year; those are refused too (isAbbreviation).
import { editDistance as distance } from './edit-distance.ts';

/** Abbreviations people write for a zone, and the IANA zone(s) they most often mean. */
const ABBREVIATIONS: Record<string, readonly string[]> = {
  AEST: ['Australia/Sydney', 'Australia/Brisbane'],
  AEDT: ['Australia/Sydney', 'Australia/Melbourne'],
  ACST: ['Australia/Adelaide', 'Australia/Darwin'],
  ACDT: ['Australia/Adelaide'],
  AWST: ['Australia/Perth'],
  NZST: ['Pacific/Auckland'],
  NZDT: ['Pacific/Auckland'],
  EST: ['America/New_York', 'America/Toronto'],
  EDT: ['America/New_York', 'America/Toronto'],
  CST: ['America/Chicago'],
  CDT: ['America/Chicago'],
  MST: ['America/Denver', 'America/Phoenix'],
  MDT: ['America/Denver'],
  PST: ['America/Los_Angeles', 'America/Vancouver'],
  PDT: ['America/Los_Angeles', 'America/Vancouver'],
  AKST: ['America/Anchorage'],
  BST: ['Europe/London'],
  IST: ['Asia/Kolkata', 'Europe/Dublin'],
  CEST: ['Europe/Paris', 'Europe/Berlin'],
  SAST: ['Africa/Johannesburg'],
  SGT: ['Asia/Singapore'],
  HKT: ['Asia/Hong_Kong'],
  JST: ['Asia/Tokyo'],
  KST: ['Asia/Seoul'],
  WIB: ['Asia/Jakarta'],
};

/** Names the runtime accepts that are abbreviations standing for a region's zone without its daylight saving. */
const FIXED_OFFSET_ABBREVIATIONS = new Set(['EST', 'MST']);

/** True for EST and MST: accepted by the runtime, but fixed offsets that a school almost never means. */
export function isAbbreviation(timeZone: string): boolean {
  return FIXED_OFFSET_ABBREVIATIONS.has(timeZone.trim().toUpperCase());
}

let zones: readonly string[] | null = null;

/** The IANA zones a school may mean for `input`, best first (at most three); empty when nothing is close. */
export function suggestTimeZones(input: string): string[] {
  const text = input.trim();
  const abbreviated = ABBREVIATIONS[text.toUpperCase()];
  if (abbreviated) return [...abbreviated];
  zones ??= Intl.supportedValuesOf('timeZone');
  const wanted = text.toLowerCase().replace(/[\s-]+/g, '_');
  if (!wanted) return [];
  const city = wanted.slice(wanted.lastIndexOf('/') + 1);
  // A few letters wrong per name, never so many that any short name matches anything.
  const allowed = Math.max(1, Math.min(3, Math.floor(wanted.length / 4)));
  const scored: { zone: string; d: number }[] = [];
  for (const zone of zones) {
    const z = zone.toLowerCase();
    const whole = distance(wanted, z);
    // A city alone ("Sydney", "new york") is compared with the zone's last part.
    const part = wanted.includes('/') ? whole : distance(city, z.slice(z.lastIndexOf('/') + 1));
    const d = Math.min(whole, part);
    if (d <= allowed) scored.push({ zone, d });
  }
  // Only the closest: "Lodnon" is London, not Lisbon as well.
  const best = Math.min(...scored.map((s) => s.d));
  return scored
    .filter((s) => s.d === best)
    .map((s) => s.zone)
    .sort()
    .slice(0, 3);
}

/** " Did you mean Australia/Sydney?" (or " … A or B?"), or "" when nothing is close. */
export function didYouMean(input: string): string {
  const found = suggestTimeZones(input);
  if (!found.length) return '';
  const list = found.length === 1 ? found[0]! : `${found.slice(0, -1).join(', ')} or ${found.at(-1)!}`;
  return ` Did you mean ${list}?`;
}
