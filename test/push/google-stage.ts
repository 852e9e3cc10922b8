// What a test of one push stage against a real provider needs: the fake Google over HTTP, the real Google provider
// for a team target on it, a real SQLite store, and the stage context (clock, notes and outcomes collected).
import { type PushTargetConfig, parseTargets } from '../../src/config/push-targets.ts';
import type { CalendarRef, PushProvider } from '../../src/push/provider.ts';
import { createProvider } from '../../src/push/providers.ts';
import type { CalendarOutcome } from '../../src/push/summary.ts';
import { type FakeGoogle, startFakeGoogle } from '../fakes/google-calendar.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';
import { SCHOOL, spec, TARGET } from './stage-calendars.ts';

export const NOW = '2026-11-23T12:00:00.000Z';

export interface GoogleStage {
  fake: FakeGoogle;
  ts: TestStore;
  provider: PushProvider;
  /** A real calendar in the fake, as the ensure stage would have found or made it. */
  remoteCalendar(key: string): Promise<CalendarRef>;
  /** A stage context; `notes` and `reached` collect what the stage said. */
  context(dryRun?: boolean): {
    ctx: {
      store: TestStore['store'];
      schoolId: string;
      targetId: string;
      provider: PushProvider;
      dryRun: boolean;
      clock: () => Date;
      pauseMinutes: number;
      note: (m: string) => void;
      reached: (o: Readonly<CalendarOutcome>) => void;
    };
    notes: string[];
    reached: CalendarOutcome[];
  };
  close(): Promise<void>;
}

/**
 * A Google target for teams on the fake, as a school's settings would give it (`over`: more of its settings,
 * `google`: more of its Google settings).
 */
export function googleTeamTarget(
  fake: FakeGoogle,
  over: Record<string, unknown> = {},
  google: Record<string, unknown> = {},
): PushTargetConfig {
  return parseTargets(
    [
      {
        id: TARGET,
        provider: 'google',
        scope: 'team',
        google: {
          rootUrl: fake.url,
          auth: { accessToken: fake.token },
          backoff: { baseMs: 2, capMs: 20, maxRetries: 2 },
          ...google,
        },
        ...over,
      },
    ],
    'schools[0].targets',
  )[0]!;
}

export async function startGoogleStage(): Promise<GoogleStage> {
  const [fake, ts] = await Promise.all([startFakeGoogle(), openTestStore('sqlite')]);
  await ts.store.records.upsertSchool({ id: SCHOOL, name: 'Hill', timeZone: 'Europe/London' });
  const provider = await createProvider(SCHOOL, googleTeamTarget(fake));
  return {
    fake,
    ts,
    provider,
    async remoteCalendar(key) {
      const r = (await provider.ensureCalendars([spec(key)], { dryRun: false })).get(key);
      if (!r?.ok) throw new Error(`the fake did not make ${key}`);
      return { key, remoteCalendarId: r.remoteCalendarId, owner: null };
    },
    context(dryRun = false) {
      const notes: string[] = [];
      const reached: CalendarOutcome[] = [];
      const ctx = {
        store: ts.store,
        schoolId: SCHOOL,
        targetId: TARGET,
        provider,
        dryRun,
        clock: () => new Date(NOW),
        pauseMinutes: 30,
        note: (m: string) => notes.push(m),
        reached: (o: Readonly<CalendarOutcome>) => reached.push({ ...o }),
      };
      return { ctx, notes, reached };
    },
    async close() {
      await fake.close();
      await ts.cleanup();
    },
  };
}
