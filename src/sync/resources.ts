// What the pull reads for each resource kind: the listings that make up the whole set, whether upstream can
// filter them by `updatedAfter`, and whether their ids are counted within the sync window.
import type { Id, Team } from '../domain/types.ts';
import type { SyncWindow } from '../jobs/window.ts';
import type { ResourceKind, ResourceMap } from '../store/types.ts';
import type { Page, TeamListParams, UpstreamClient } from '../upstream/api.ts';

export interface ListingContext {
  client: UpstreamClient;
  window: SyncWindow;
  /** Set for incremental listings. */
  updatedAfter?: string;
}

type AnyRecord = ResourceMap[ResourceKind];

export interface Listing {
  /** Shown in progress and summaries: `teams (hidden)`. */
  label: string;
  pages(ctx: ListingContext): AsyncIterable<Page<AnyRecord>>;
  /** Facts the listing itself tells (a student from `current=false` has left). */
  adjust?(record: AnyRecord): AnyRecord;
}

/**
 * What a single read says of a record a complete full listing left out: still `present`, or there but
 * `elsewhere` (a session moved out of the sync window). A record that is gone makes the read answer 404.
 */
export type Presence = 'present' | 'elsewhere';

export interface ResourceSpec {
  kind: ResourceKind;
  /** Upstream filters it by `updatedAfter`: incremental runs ask only for what changed. */
  incremental: boolean;
  /** Ids counted for deletion within the sync window only. */
  windowed: boolean;
  listings: Listing[];
  /**
   * The API's single read of one record (`GET /sessions/{id}`, `GET /teams/{id}`), asked of each record a
   * complete full listing left out: a 404 confirms it is gone. Kinds without one wait for a second listing.
   */
  confirm?(ctx: ListingContext, id: Id): Promise<Presence>;
}

const teamIncludes: TeamListParams = { includeStudents: true, includeStaff: true, includePositions: true };

function teamListing(hidden: boolean): Listing {
  return {
    label: hidden ? 'teams (hidden)' : 'teams',
    pages: ({ client, updatedAfter }) =>
      client.teams({ ...teamIncludes, hidden, ...(updatedAfter ? { updatedAfter } : {}) }),
    adjust: (r) => ({ ...(r as Team), hidden }),
  };
}

/** In dependency-free order; sessions last so a run's reference data is fresh when its sessions land. */
export const RESOURCES: ResourceSpec[] = [
  {
    kind: 'departments',
    incremental: false,
    windowed: false,
    listings: [{ label: 'departments', pages: ({ client }) => client.departments() }],
  },
  {
    kind: 'yearGroups',
    incremental: false,
    windowed: false,
    listings: [{ label: 'year groups', pages: ({ client }) => client.yearGroups() }],
  },
  {
    kind: 'activities',
    incremental: false,
    windowed: false,
    listings: [{ label: 'activities', pages: ({ client }) => client.activities() }],
  },
  {
    kind: 'locations',
    incremental: false,
    windowed: false,
    listings: [
      { label: 'locations', pages: ({ client }) => client.locations({ archived: false }) },
      { label: 'locations (archived)', pages: ({ client }) => client.locations({ archived: true }) },
    ],
  },
  {
    kind: 'staff',
    incremental: false,
    windowed: false,
    listings: [{ label: 'staff', pages: ({ client }) => client.users() }],
  },
  {
    kind: 'students',
    incremental: false,
    windowed: false,
    listings: [
      {
        label: 'students',
        pages: ({ client }) => client.students({ current: true }),
        adjust: (r) => ({ ...(r as ResourceMap['students']), current: true }),
      },
      {
        label: 'students (left)',
        pages: ({ client }) => client.students({ current: false }),
        adjust: (r) => ({ ...(r as ResourceMap['students']), current: false }),
      },
    ],
  },
  {
    kind: 'studentTeams',
    incremental: false,
    windowed: false,
    listings: [{ label: 'student teams', pages: ({ client }) => client.studentTeams() }],
  },
  {
    kind: 'teams',
    incremental: true,
    windowed: false,
    listings: [teamListing(false), teamListing(true)],
    confirm: async ({ client }, id) => {
      await client.team(id);
      return 'present';
    },
  },
  {
    kind: 'absences',
    incremental: true,
    windowed: true,
    listings: [
      {
        label: 'absences',
        pages: ({ client, window, updatedAfter }) =>
          client.preExplainedAbsences({
            startDateTime: window.from,
            endDateTime: window.to,
            ...(updatedAfter ? { updatedAfter } : {}),
          }),
      },
    ],
  },
  {
    kind: 'sessions',
    incremental: true,
    windowed: true,
    listings: [
      {
        label: 'sessions',
        pages: ({ client, window, updatedAfter }) =>
          client.sessions({
            startDateTime: window.from,
            endDateTime: window.to,
            includeTeams: true,
            includeStaff: true,
            // Fixtures' round names ("Round 9", "Grand Final") are part of what families read.
            includeRoundName: true,
            includeCustomFieldsMetadata: true,
            ...(updatedAfter ? { updatedAfter } : {}),
          }),
      },
    ],
    confirm: async ({ client, window }, id) => {
      const { session } = await client.session(id);
      // Intersecting the window as the store counts it (see liveIds): otherwise it moved out of what is synced.
      const start = Date.parse(session.start);
      const end = Date.parse(session.end);
      const from = Date.parse(window.from);
      return start < Date.parse(window.to) && (end > from || start >= from) ? 'present' : 'elsewhere';
    },
  },
];
