// push/outlook/clients.ts (OutlookClients) against the fake Graph over TLS: every HTTP round trip is counted, the
// SDK's own retries of a throttled $batch included; a round trip never answered fails at requestTimeoutMs and is
// tried again like a dropped connection; Graph's answers are read as the run acts on them (an unusable mailbox
// remembered, a nextLink made relative to the version root).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describe as describeAnswer,
  isItemGone,
  isMailboxProblem,
  OutlookClients,
  odataString,
} from '../../../src/push/outlook/clients.ts';
import type { FakeGraph } from '../../fakes/graph.ts';
import { ANN, graphFake, settingsOn, UNLICENSED } from './on-fake.ts';

let fake: FakeGraph;
beforeAll(async () => {
  fake = await graphFake();
});
afterAll(() => fake?.close());

const calendars = (c: OutlookClients, mailbox = ANN) =>
  c.call(mailbox, {
    method: 'GET',
    url: `${c.user(mailbox)}/calendars?$filter=${encodeURIComponent(`name eq ${odataString("Ann's")}`)}`,
  });

describe('Graph clients', () => {
  it("counts each round trip and throttling answer, the SDK's retry of a throttled $batch included", async () => {
    const c = new OutlookClients(settingsOn(fake));
    fake.knobs.faults = [
      { match: /^POST \/v1\.0\/\$batch$/, status: 429, retryAfterSeconds: 0.01, limit: 1 },
    ];
    try {
      expect((await calendars(c)).status).toBe(200);
      expect(c.stats()).toEqual({ requests: 2, retries: 1, throttled: 1 });
    } finally {
      fake.knobs.faults = [];
    }
  });

  it('a round trip never answered fails at requestTimeoutMs and goes again; always unanswered, it says so', async () => {
    const c = new OutlookClients(
      settingsOn(fake, { requestTimeoutMs: 1_000, backoff: { baseMs: 5, capMs: 10, maxRetries: 1 } }),
    );
    fake.knobs.faults = [{ match: /^POST \/v1\.0\/\$batch$/, stall: true, status: 500, limit: 1 }];
    try {
      const started = Date.now();
      expect((await calendars(c)).status).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
      fake.knobs.faults = [{ match: /^POST \/v1\.0\/\$batch$/, stall: true, status: 500 }];
      expect(await calendars(c)).toMatchObject({
        status: 0,
        body: { error: { message: 'no answer from Graph within 1000 ms' } },
      });
    } finally {
      fake.knobs.faults = [];
    }
  });

  it("an unusable mailbox is an account failure and remembered; a gone item is not; a nextLink's path is kept", async () => {
    const c = new OutlookClients(settingsOn(fake));
    const unlicensed = await calendars(c, UNLICENSED);
    expect([isMailboxProblem(unlicensed), isItemGone(unlicensed)]).toEqual([true, false]);
    expect(c.failure(unlicensed, UNLICENSED)).toEqual({
      ok: false,
      kind: 'account',
      reason: describeAnswer(unlicensed),
    });
    expect(c.badMailboxes.get(UNLICENSED)).toMatch(/^404 MailboxNotEnabledForRESTAPI: /);
    const gone = await c.call(ANN, { method: 'GET', url: `${c.user(ANN)}/events/AAkALgnothere` });
    expect([isMailboxProblem(gone), isItemGone(gone)]).toEqual([false, true]);
    expect(c.failure(gone, ANN)).toMatchObject({ kind: 'error' });
    expect(c.badMailboxes.has(ANN)).toBe(false);
    const path = '/users/ann%40hill.example/events?$skip=500&$top=500';
    expect(c.relative(`${fake.url}/v1.0${path}`)).toBe(path);
    expect(c.relative(`https://graph.microsoft.com/v1.0${path}`)).toBe(path);
    // Behind a proxy whose Graph root has a path of its own.
    const proxied = new OutlookClients(settingsOn(fake, { baseUrl: `${fake.url}/graph` }));
    expect(proxied.relative(`${fake.url}/graph/v1.0${path}`)).toBe(path);
  });
});
