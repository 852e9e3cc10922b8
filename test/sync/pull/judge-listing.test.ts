// Whether a listing can be taken as the whole truth (sync/pull/judge-listing.ts): only its own count gives away an
// upstream that drops or repeats records across pages, and malformed records without an id forbid deletions.
import { describe, expect, it } from 'vitest';
import type { Gathered, ListingTally } from '../../../src/sync/pull/gathered.ts';
import { anyListingGap, judgeListing, listingGap } from '../../../src/sync/pull/judge-listing.ts';

const tally = (announced: number | null, received: number, repeated = 0): ListingTally => ({
  announced,
  received,
  repeated,
  ids: new Set(),
});

/** Only what the judge reads of a download. */
const got = (tallies: ListingTally[], unknownSkipped = 0) =>
  ({ tallies: tallies.map((t, i) => ({ label: `l${i}`, tally: t })), unknownSkipped }) as unknown as Gathered;

describe('a listing’s gap', () => {
  it('is none when it delivered what it announced, or announced nothing', () => {
    expect(listingGap('sessions', tally(3, 3))).toBeNull();
    expect(listingGap('sessions', tally(null, 0))).toBeNull();
  });

  it('names what is missing, over, and repeated', () => {
    expect(listingGap('sessions', tally(2500, 1200))).toBe(
      'the sessions listing is incomplete: it announced 2,500 records and delivered 1,200 distinct (1,300 missing)',
    );
    expect(listingGap('teams', tally(3, 5))).toBe(
      'the teams listing is incomplete: it announced 3 records and delivered 5 distinct (2 more than announced)',
    );
    // Overlapping pages: the count matches only because repeats took the places of records pushed out.
    expect(listingGap('teams', tally(4, 5, 1))).toBe(
      'the teams listing is incomplete: it announced 4 records and delivered 4 distinct (1 repeated)',
    );
    expect(listingGap('teams', tally(4, 4, 1))).toContain('(1 missing, 1 repeated)');
  });
});

describe('judging a download', () => {
  it('trusts a complete listing without malformed records', () => {
    expect(judgeListing(got([tally(3, 3), tally(0, 0)]), true)).toEqual({
      problems: [],
      incomplete: false,
      untrusted: false,
    });
    expect(anyListingGap(got([tally(3, 3)]))).toBe(false);
  });

  it('takes no deletion from an incomplete one', () => {
    const j = judgeListing(got([tally(3, 3), tally(3, 2)]), true);
    expect(j).toMatchObject({ incomplete: true, untrusted: true });
    expect(j.problems).toEqual([listingGap('l1', tally(3, 2))]);
    expect(anyListingGap(got([tally(3, 3), tally(3, 2)]))).toBe(true);
  });

  it('distrusts a complete one that carried records without a usable id, and says so', () => {
    expect(judgeListing(got([tally(3, 3)], 1), true)).toEqual({
      problems: [
        '1 malformed record without a usable id skipped (no deletions of it until upstream fixes them)',
      ],
      incomplete: false,
      untrusted: true,
    });
    expect(judgeListing(got([tally(3, 3)], 2), false).problems).toEqual([
      '2 malformed records without a usable id skipped',
    ]);
  });
});
