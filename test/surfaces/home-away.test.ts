// Observed: a home fixture at the school's own Sports Centre printed "(away)" on the attendance and match-day
// sheets and in `rostercal sessions`, while families saw "(home)": those outputs compared the venue owner's name
// with SCHOOL_NAME instead of asking the projection which owners are the school. Reproduced here with a school
// whose configured name differs from every venue owner's name (as every real school's may).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inferLocationOwnerIds, loadProjectionContext, projectSession } from '../../src/calendar/index.ts';
import { parseSchool } from '../../src/config.ts';
import { FeedService } from '../../src/feeds/feed-service.ts';
import { generateRoster } from '../../src/rosters/index.ts';
import { type Sandbox, SCHOOL_TIME_ZONE, startSandbox } from '../../src/sandbox/index.ts';
import { openStore, type Store, type Stored } from '../../src/store/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import { rostercal } from '../support/cli.ts';
import { weekAnchor, weekSandboxOptions } from '../support/clock.ts';
import { pdfText } from '../support/pdf.ts';

// `rostercal sessions` lists what has not ended yet from the real present: the school is built around this week
// (the same week shape whatever the day of the run), and the in-process parts are given its anchor as their clock.
const NOW = weekAnchor();
const SCHOOL = 'hillcrest';
// The demo's default name; the sandbox's venues belong to "Hillcrest College".
const NAME = 'Demo School (sandbox)';

let sb: Sandbox;
let store: Store;
let dataDir: string;
let home: Stored<'sessions'>[];
let away: Stored<'sessions'>[];

beforeAll(async () => {
  sb = await startSandbox(weekSandboxOptions({ scale: 'small', seed: 7 }, Date.parse(NOW)));
  const client = createUpstreamClient({
    baseUrl: sb.url,
    token: sb.token,
    rateLimit: { requestsPerSecond: 1000, concurrency: 8 },
  });
  dataDir = mkdtempSync(join(tmpdir(), 'rostercal-home-away-'));
  store = await openStore({ dataDir });
  const school = parseSchool({
    id: SCHOOL,
    name: NAME,
    upstream: { url: sb.url, token: sb.token },
    timeZone: SCHOOL_TIME_ZONE,
  });
  const summary = await pullSchool({ store, client, school, kind: 'full', now: () => new Date(NOW) });
  expect(summary.status).toBe('succeeded');
  const sessions = await store.records.listSessions(SCHOOL, {});
  const owners = inferLocationOwnerIds(sessions, NAME);
  expect(owners.length).toBeGreaterThan(0);
  const upcomingFixtures = sessions.filter(
    (s) => s.scored && s.opponent && s.location?.owner && Date.parse(s.start) > Date.now() + 3_600_000,
  );
  home = upcomingFixtures.filter((s) => owners.includes(s.location!.owner!.id));
  away = upcomingFixtures.filter((s) => !owners.includes(s.location!.owner!.id));
  expect(home.length).toBeGreaterThan(0);
  expect(away.length).toBeGreaterThan(0);
  // The venue owner is not called what the school is called: a name comparison says "away" for every venue.
  expect(home[0]!.location!.owner!.name).not.toBe(NAME);
});

afterAll(async () => {
  await store?.close();
  await sb?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('home and away on the sheets and in `rostercal sessions`', () => {
  it('`rostercal sessions` says (home) for a fixture at the school’s own venue and (away) elsewhere', async () => {
    const env = {
      DATA_DIR: dataDir,
      SCHOOL_ID: SCHOOL,
      SCHOOL_NAME: NAME,
      SCHOOL_TZ: SCHOOL_TIME_ZONE,
      UPSTREAM_URL: sb.url,
      UPSTREAM_TOKEN: sb.token,
    };
    for (const [s, where] of [
      [home[0]!, '(home)'],
      [away[0]!, '(away)'],
    ] as const) {
      const team = s.teams[0]!.id;
      const child = rostercal(['sessions', '--team', String(team), '--days', '400', '--json'], env);
      expect(await child.exit, child.output()).toBe(0);
      const rows = JSON.parse(child.stdout()).sessions as { id: number; title: string }[];
      const row = rows.find((r) => r.id === s.id);
      expect(row, child.stdout()).toBeDefined();
      expect(row!.title).toContain(where);
      // Every row says what the feeds' and pushes' projection context says of it.
      const ctx = await loadProjectionContext(store, SCHOOL);
      for (const r of rows) {
        const stored = await store.records.get(SCHOOL, 'sessions', r.id);
        expect(r.title).toBe(projectSession(stored!, ctx, 'staff', { scope: 'team', id: team })!.title);
      }
    }
  });

  it('the team feed families subscribe to says (home) and (away) for the same fixtures', async () => {
    const feeds = new FeedService({ store, now: () => new Date(NOW) });
    // Families never see drafts.
    const published = (list: typeof home) => list.find((s) => s.status !== 'draft')!;
    for (const [s, where] of [
      [published(home), '(home)'],
      [published(away), '(away)'],
    ] as const) {
      const feed = await feeds.get(SCHOOL, 'team', s.teams[0]!.id);
      const ics = feed!.body.toString().replace(/\r\n[ \t]/g, '');
      const event = ics.split('BEGIN:VEVENT').find((e) => e.includes(`UID:session-${s.id}-`));
      expect(event, `session ${s.id} in the feed`).toBeDefined();
      expect(/^SUMMARY:(.*)$/m.exec(event!)![1]).toContain(where);
    }
  });

  it('the match-day and attendance sheets say (home) for a home fixture, read back with PDF.js', async () => {
    const s = home[0]!;
    for (const template of ['match-day-sheet', 'attendance-sheet']) {
      const roster = await generateRoster(store, {
        schoolId: SCHOOL,
        teamId: s.teams[0]!.id,
        sessionId: s.id,
        template,
        now: new Date(NOW),
      });
      const text = await pdfText(roster.pdf);
      expect(text, template).toContain('(home)');
      expect(text, template).not.toContain('(away)');
    }
  });
});
