// Each upstream client's memory of the upstream's clock (sync/pull/clock-memory.ts): one per client, kept across
// pulls of the same client, never shared between two.
import { describe, expect, it } from 'vitest';
import { clockMemoryOf } from '../../../src/sync/pull/clock-memory.ts';
import { testClient } from '../helpers.ts';

describe('the clock memory of a client', () => {
  it('is the same for one client and apart for another', () => {
    const a = testClient({ url: 'http://127.0.0.1:9', token: 't' });
    const b = testClient({ url: 'http://127.0.0.1:9', token: 't' });
    const m = clockMemoryOf(a);
    m.note({ date: 2_000, sentAt: 0, receivedAt: 1_000 });
    expect(clockMemoryOf(a)).toBe(m);
    expect(clockMemoryOf(a).upstreamAt(1_000)).toBe(2_000);
    expect(clockMemoryOf(b)).not.toBe(m);
    expect(clockMemoryOf(b).upstreamAt(1_000)).toBeNull();
  });
});
