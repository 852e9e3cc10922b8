// Google writes at the pace users get (writesPerSecond 5 unless a target says otherwise), per account: every
// other Google push test runs at 2,000 or 200 a second to keep the suite short (docs/test-overrides.md), so this
// is where the default itself is held. Each bound is a lower one: a loaded machine can only make writes later.
import { describe, expect, it } from 'vitest';
import { parseTargets } from '../../src/config/push-targets.ts';
import { GoogleClients } from '../../src/push/google/clients.ts';

const target = parseTargets(
  [
    {
      id: 'teams',
      provider: 'google',
      scope: 'team',
      google: { rootUrl: 'http://127.0.0.1:2/', auth: { accessToken: 'unused' } },
    },
  ],
  'schools[0].targets',
)[0]!;

describe('Google write pacing at the default', () => {
  it('is 5 writes a second, shared by every calendar of one account, each account with its own', async () => {
    if (target.provider !== 'google') throw new Error('a Google target was parsed as another provider');
    expect(target.google.writesPerSecond).toBe(5);
    const clients = new GoogleClients(target.google, false);
    const a = clients.pacer('coach@school.example');
    // The same account's calendars wait in one line.
    expect(clients.pacer('coach@school.example')).toBe(a);
    const starts: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < 6; i++) {
      await a.take();
      starts.push(performance.now() - t0);
    }
    // Slots 200 ms apart from the first: the i-th write starts no sooner than i × 200 ms after it (a write that
    // woke late does not push the line back, so two neighbours may be closer than 200 ms, never the line faster).
    for (let i = 1; i < starts.length; i++)
      expect(starts[i]! - starts[0]!, `write ${i + 1}`).toBeGreaterThanOrEqual(i * 200 - 2);
    // Another account has a line of its own.
    expect(clients.pacer('office@school.example')).not.toBe(a);
  });
});
