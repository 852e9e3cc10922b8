// Whether a resource's listing can be taken as the whole truth: what it announced against what it delivered,
// and records it carried without a usable id.
import type { Gathered, ListingTally } from './gathered.ts';

/** The listing judged: what is wrong with it, and whether that leaves out records (no deletions, no cursor). */
export interface Listed {
  problems: string[];
  /** A listing delivered other than it announced: it may have left records out. */
  incomplete: boolean;
  /** No deletion may rest on it: incomplete, or malformed records whose id is unknown. */
  untrusted: boolean;
}

/**
 * Why a listing cannot be the whole truth, or null. An upstream that reports one page too few, or whose pages
 * shift while being read, still answers 200 on every page; only its own count gives it away.
 */
export function listingGap(label: string, t: ListingTally): string | null {
  if (t.announced === null) return null;
  const distinct = t.received - t.repeated;
  if (distinct === t.announced && t.repeated === 0) return null;
  const parts: string[] = [];
  const n = (x: number) => x.toLocaleString('en');
  if (distinct < t.announced) parts.push(`${n(t.announced - distinct)} missing`);
  if (distinct > t.announced) parts.push(`${n(distinct - t.announced)} more than announced`);
  if (t.repeated > 0) parts.push(`${n(t.repeated)} repeated`);
  return (
    `the ${label} listing is incomplete: it announced ${n(t.announced)} records and delivered ` +
    `${n(distinct)} distinct (${parts.join(', ')})`
  );
}

/** Whether any listing of the download fell short of (or over) its own count. */
export function anyListingGap(got: Pick<Gathered, 'tallies'>): boolean {
  return got.tallies.some(({ label, tally }) => listingGap(label, tally));
}

export function judgeListing(got: Gathered, full: boolean): Listed {
  const problems: string[] = [];
  for (const { label, tally } of got.tallies) {
    const gap = listingGap(label, tally);
    if (gap) problems.push(gap);
  }
  const incomplete = problems.length > 0;
  if (got.unknownSkipped > 0) {
    problems.push(
      `${got.unknownSkipped} malformed record${got.unknownSkipped === 1 ? '' : 's'} without a usable id skipped` +
        (full ? ' (no deletions of it until upstream fixes them)' : ''),
    );
  }
  return { problems, incomplete, untrusted: incomplete || got.unknownSkipped > 0 };
}
