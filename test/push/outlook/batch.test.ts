// push/outlook/batch.ts (GraphBatcher), driven by the real clients against the fake Graph over TLS: requests are
// packed up to batchSize a $batch with never more than 4 in flight per mailbox (dependsOn chains); a throttled
// sub-response waits its Retry-After and goes again; a chain cut short by its failed predecessor (424) goes again;
// a round trip Graph refuses answers every item with the refusal at once, one that failed is sent again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SubResponse } from '../../../src/push/outlook/batch.ts';
import type { OutlookClients } from '../../../src/push/outlook/clients.ts';
import { OutlookClients as Clients } from '../../../src/push/outlook/clients.ts';
import type { FakeGraph } from '../../fakes/graph.ts';
import { ANN, BO, outlookOnFake, settingsOn } from './on-fake.ts';

let fake: FakeGraph;
let c: OutlookClients;
beforeAll(async () => {
  ({ fake, clients: c } = await outlookOnFake({}, { knobs: { batchItemLatencyMs: 5 } }));
});
afterAll(() => fake?.close());

const list = (clients: OutlookClients, mailbox: string): Promise<SubResponse> =>
  clients.call(mailbox, { method: 'GET', url: `${clients.user(mailbox)}/calendars` });

describe('Graph $batch scheduling', () => {
  it('packs 20 a round trip, at most 4 requests in flight per mailbox, mailboxes side by side', async () => {
    fake.resetStats();
    const answers = await Promise.all([
      ...Array.from({ length: 45 }, () => list(c, ANN)),
      ...Array.from({ length: 5 }, () => list(c, BO)),
    ]);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(fake.stats.batchItems).toBe(50);
    expect(fake.stats.batches).toBe(3);
    expect(fake.stats.maxConcurrencyPerMailbox[ANN]).toBe(4);
    expect(fake.stats.concurrencyRejections).toBe(0);
  });

  it('a throttled sub-response waits its Retry-After, then goes again', async () => {
    fake.knobs.faults = [{ match: /^GET \/users\/bo@/, status: 429, retryAfterSeconds: 0.4, limit: 1 }];
    const before = c.stats();
    const started = Date.now();
    try {
      const [throttled, other] = await Promise.all([list(c, BO), list(c, ANN)]);
      expect([throttled.status, other.status]).toEqual([200, 200]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      expect(c.stats().throttled - before.throttled).toBe(1);
    } finally {
      fake.knobs.faults = [];
    }
  });

  it('a request cut short by its failed predecessor (424) goes again; the failed one is handed back', async () => {
    const chained = new Clients(settingsOn(fake, { maxConcurrentPerMailbox: 1 }));
    fake.knobs.faults = [{ match: /^GET \/users\/ann@/, status: 500, limit: 1 }];
    fake.resetStats();
    try {
      const answers = await Promise.all([list(chained, ANN), list(chained, ANN), list(chained, ANN)]);
      expect(answers.map((a) => a.status)).toEqual([500, 200, 200]);
      expect([fake.stats.batches, fake.stats.batchItems]).toEqual([2, 5]);
      expect(chained.stats().retries).toBe(0);
    } finally {
      fake.knobs.faults = [];
    }
  });

  it('a round trip refused (401) answers each item with it, asked once; one that failed (500) is sent again', async () => {
    fake.knobs.faults = [{ match: /^POST \/v1\.0\/\$batch$/, status: 401, limit: 1 }];
    fake.resetStats();
    const refused = await Promise.all([list(c, ANN), list(c, BO)]);
    expect(refused.map((r) => [r.status, r.body.error.code])).toEqual([
      [401, 'InvalidAuthenticationToken'],
      [401, 'InvalidAuthenticationToken'],
    ]);
    expect(fake.stats.requests).toBe(1);
    fake.knobs.faults = [{ match: /^POST \/v1\.0\/\$batch$/, status: 500, limit: 1 }];
    fake.resetStats();
    expect((await Promise.all([list(c, ANN), list(c, BO)])).map((r) => r.status)).toEqual([200, 200]);
    // Each item waits its own jittered backoff: they may go again together or apart.
    expect(fake.stats.requests).toBeGreaterThanOrEqual(2);
    fake.knobs.faults = [];
  });
});
