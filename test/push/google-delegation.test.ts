// Google per-staff calendars through domain-wide delegation: a service-account key, the JWT-bearer grant at a
// configurable token endpoint (the fake verifies the signature), one Google account per staff member.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTargets } from '../../src/config/push-targets.ts';
import { pushTarget } from '../../src/push/run.ts';
import { parseSessionTag } from '../../src/push/stable-ids.ts';
import { type FakeGoogle, startFakeGoogle } from '../fakes/google-calendar.ts';
import { type Bench, expectCalendarsEqual, expectedCalendars, startBench } from './harness.ts';

describe('Google push through domain-wide delegation', () => {
  let bench: Bench;
  let fake: FakeGoogle;
  let env: NodeJS.ProcessEnv;
  let staff: { id: number; email: string }[];
  const SA = 'rostercal@hill-project.iam.gserviceaccount.com';

  beforeAll(async () => {
    bench = await startBench({ seed: 5 });
    staff = (await bench.store.records.list('hill', 'staff'))
      .filter((s) => !s.frozen && s.email)
      .map((s) => ({ id: s.id, email: s.email!.toLowerCase() }));
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    fake = await startFakeGoogle({
      serviceAccounts: [
        { clientEmail: SA, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() },
      ],
      unknownUsers: [staff[0]!.email],
    });
    env = {
      SA_KEY: JSON.stringify({
        type: 'service_account',
        client_email: SA,
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        token_uri: fake.tokenUrl,
      }),
    };
  });
  afterAll(async () => {
    await fake?.close();
    await bench?.close();
  });

  const target = (id: string, mode: 'primary' | 'secondary', ids?: number[]) =>
    parseTargets(
      [
        {
          id,
          provider: 'google',
          scope: 'staff',
          ...(ids ? { ids } : {}),
          google: {
            rootUrl: fake.url,
            auth: { key: 'env:SA_KEY' },
            calendars: { mode, name: 'School activities' },
            writesPerSecond: 2000,
            // One request per write here; the team tests cover batches.
            batchSize: 1,
            backoff: { baseMs: 2, capMs: 20 },
          },
        },
      ],
      'targets',
      env,
    )[0]!;

  it('creates a calendar in each staff member’s own account; an unknown account is reported and skipped', async () => {
    const t = target('coaches', 'secondary');
    const s = await pushTarget({ store: bench.store, school: bench.school, now: bench.now, target: t });
    const skipped = s.calendars.filter((c) => c.state === 'skipped');
    expect(skipped.map((c) => c.key)).toEqual([`staff:${staff[0]!.id}`]);
    expect(skipped[0]?.note).toMatch(/invalid_grant/);
    expect(s.errors.join('\n')).not.toMatch(/BEGIN PRIVATE KEY/);

    const good = staff.slice(1);
    const remote = new Map<string, { sessionId: number; title: string }[]>();
    for (const st of good) {
      const cals = fake.calendars().filter((c) => c.owner === st.email && c.summary === 'School activities');
      expect(cals, st.email).toHaveLength(1);
      remote.set(
        `staff:${st.id}`,
        fake.liveEvents(cals[0]!.id).map((e) => ({
          sessionId: parseSessionTag(e.extendedProperties?.private?.rostercalSession)!.sessionId,
          title: e.summary ?? '',
        })),
      );
    }
    expect(fake.grantedPrincipals().sort()).toEqual(good.map((x) => x.email).sort());
    expectCalendarsEqual(
      remote,
      await expectedCalendars(
        bench,
        'hill',
        t,
        good.map((x) => x.id),
      ),
    );
    const rerun = await pushTarget({ store: bench.store, school: bench.school, now: bench.now, target: t });
    expect(rerun.totals).toMatchObject({ created: 0, updated: 0, deleted: 0 });
  });

  it('writes into a staff member’s primary calendar', async () => {
    const who = staff[1]!;
    const t = target('primary', 'primary', [who.id]);
    const s = await pushTarget({ store: bench.store, school: bench.school, now: bench.now, target: t });
    expect(s.status).toBe('succeeded');
    const primary = fake.calendar(who.email)!;
    const want = await expectedCalendars(bench, 'hill', t, [who.id]);
    expect(
      fake.liveEvents(primary.id).filter((e) => e.extendedProperties?.private?.rostercal === 'hill:primary'),
    ).toHaveLength(want.get(`staff:${who.id}`)!.size);
  });
});
