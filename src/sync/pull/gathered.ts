// What a resource's download hands to its write: everything the write needs, and nothing the store already holds.
import type { Id } from '../../domain/types.ts';
import type { ResourceMap } from '../../store/types.ts';
import type { Presence } from '../resources.ts';
import type { RecordSpool } from '../spool.ts';

export interface ListingTally {
  /** `numRecords` of the listing's last page read (null: no page arrived). */
  announced: number | null;
  /** Records the pages carried, malformed ones included. */
  received: number;
  ids: Set<Id>;
  /** Records that came a second time (pages that overlap: the records pushed out are missing instead). */
  repeated: number;
}

/**
 * What a single read said of a record a complete full listing left out (`gone`: 404; `unknown`: no answer;
 * `unasked`: the reads already showed the listing leaving out records that exist, so it was not trusted).
 */
export type Confirmation = Presence | 'gone' | 'unknown' | 'unasked';

export interface Gathered {
  /** New or changed records, made ready for the store (unchanged ones are only counted and remembered). */
  records: RecordSpool;
  /** Ids the listing returned (including malformed records whose id is known). */
  seen: Set<Id>;
  /**
   * A full listing: every record the store held live when the download began is in `seen`, so nothing can be
   * missing. Always false for an incremental one.
   */
  allSeen: boolean;
  /** Records whose hash matched the store's when they arrived. */
  unchanged: number;
  /** Malformed records without a usable id: the listing cannot prove anything is gone. */
  unknownSkipped: number;
  /** Ids of malformed records: seen, but their stored records were left as they were. */
  malformed: Set<Id>;
  /** Custom-field metadata new or changed since the store's (it comes with sessions). */
  customFields: Map<string, ResourceMap['customFields']>;
  /** Custom fields that came as the store holds them: only counted. */
  customFieldsUnchanged: number;
  /** Per listing: what it announced against what it delivered (see listingGap). */
  tallies: { label: string; tally: ListingTally }[];
  /** What single reads said of the records a complete full listing left out (confirmMissing). */
  confirmations: Map<Id, Confirmation>;
  /**
   * The upstream's time when the listing was taken: the earliest `Date` of its pages (ms), or null when none
   * said. Every change it could have missed is stamped later, so the resource's cursor is taken from it.
   */
  listedAt: number | null;
  /** The cursor the listing was asked with (`updatedAfter`), for an incremental read. */
  askedAfter: string | null;
  /** This server's clock before the listing's first request: with no `Date` on it, when it was taken. */
  askedAt: number;
}

/** A resource's download as it ended: what it gathered or why it failed, and what it noted on the way. */
export interface Fetched {
  began: number;
  pages: number;
  /** Malformed records the listing carried. */
  skipped: number;
  errors: string[];
  result: { ok: true; download: Gathered } | { ok: false; error: unknown };
}
