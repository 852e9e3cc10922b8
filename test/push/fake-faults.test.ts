// Random faults in the provider fakes (a FaultRule with a `rate`, the throttleRate knob) never fail one request
// more than three times in a row, so that chance alone cannot use up a write's retries (8 by default, 10 in the
// failure tests). Each fake is driven over HTTP exactly as a client that retries does: one request sent again,
// unchanged, until it gets a real answer. Before this bound a 30 % 5xx pattern failed one Google write 11 times
// running now and then, and failures/scheduled-push.test.ts read `failed` in CI.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultRule } from '../fakes/common.ts';
import { type FakeGoogle, startFakeGoogle } from '../fakes/google-calendar.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph.ts';
import { trustCertificate } from '../fakes/tls.ts';

/** Requests sent in each test: at 30 %, four faults in a row would come about once in 120 of them (at 50 %, 16). */
const REQUESTS = 400;

/**
 * Sends requests 0…REQUESTS-1, each again while `send` says it was answered with an injected fault; the longest
 * run of faults one request met, and how many faults in all.
 */
async function faultRuns(send: (i: number) => Promise<boolean>): Promise<{ longest: number; total: number }> {
  let longest = 0;
  let total = 0;
  for (let i = 0; i < REQUESTS; i++) {
    let run = 0;
    while (await send(i)) {
      run++;
      if (run > 30) throw new Error(`request ${i} never got a real answer`);
    }
    longest = Math.max(longest, run);
    total += run;
  }
  return { longest, total };
}

const event = (i: number) => ({
  id: `fault${String(i).padStart(5, '0')}`,
  summary: `e${i}`,
  start: { dateTime: '2026-12-01T16:00:00Z' },
  end: { dateTime: '2026-12-01T17:00:00Z' },
});

describe('fake Google Calendar: random faults', () => {
  let fake: FakeGoogle;
  let calendarId: string;
  const auth = () => ({ authorization: `Bearer ${fake.token}` });
  beforeAll(async () => {
    fake = await startFakeGoogle();
    const res = await fetch(`${fake.url}calendar/v3/calendars`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ summary: 'Faults' }),
    });
    calendarId = ((await res.json()) as { id: string }).id;
  });
  afterAll(() => fake.close());

  const insert = (i: number) =>
    fetch(`${fake.url}calendar/v3/calendars/${encodeURIComponent(calendarId)}/events`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify(event(i)),
    });

  it('a 503 rule on half the requests fails one request at most three times in a row', async () => {
    const rule: FaultRule = { status: 503, rate: 0.5 };
    fake.knobs.faults = [rule];
    try {
      const runs = await faultRuns(async (i) => (await insert(i)).status === 503);
      expect(runs.longest).toBeLessThanOrEqual(3);
      // Still a random 30 %: faults came, some of them twice in a row or more.
      expect(runs.longest).toBeGreaterThanOrEqual(2);
      expect(rule.hits).toBe(runs.total);
      expect(runs.total).toBeGreaterThan(REQUESTS * 0.5);
    } finally {
      fake.knobs.faults = [];
    }
  });

  it('in a batch, faults of the batch itself and of its part count as one run: at most three', async () => {
    // Every batch and every part 30 %: a try of the write fails about one time in two.
    fake.knobs.faults = [{ status: 503, rate: 0.3 }];
    const boundary = 'b0undary';
    const batch = (i: number) =>
      [
        `--${boundary}`,
        'Content-Type: application/http',
        'Content-ID: <item1>',
        '',
        `POST /calendar/v3/calendars/${encodeURIComponent(calendarId)}/events`,
        'Content-Type: application/json',
        '',
        JSON.stringify({ ...event(i), id: `${event(i).id}b` }),
        `--${boundary}--`,
        '',
      ].join('\r\n');
    try {
      const runs = await faultRuns(async (i) => {
        const res = await fetch(`${fake.url}batch/calendar/v3`, {
          method: 'POST',
          headers: { ...auth(), 'content-type': `multipart/mixed; boundary=${boundary}` },
          body: batch(i),
        });
        const text = await res.text();
        if (res.status === 503) return true;
        const part = /HTTP\/1\.1 (\d+)/.exec(text)?.[1];
        if (part === '503') return true;
        expect(part, text).toBe('200');
        return false;
      });
      expect(runs.longest).toBeLessThanOrEqual(3);
      expect(runs.total).toBeGreaterThan(REQUESTS * 0.5);
    } finally {
      fake.knobs.faults = [];
    }
  });

  it('30 % throttling (throttleRate) throttles one request at most three times in a row', async () => {
    fake.knobs.throttleRate = 0.3;
    try {
      const runs = await faultRuns(async () => {
        const res = await fetch(`${fake.url}calendar/v3/calendars/${encodeURIComponent(calendarId)}`, {
          headers: auth(),
        });
        await res.arrayBuffer();
        if (res.status === 429 || res.status === 403) return true;
        expect(res.status).toBe(200);
        return false;
      });
      expect(runs.longest).toBeLessThanOrEqual(3);
      expect(runs.total).toBeGreaterThan(REQUESTS * 0.2);
    } finally {
      fake.knobs.throttleRate = 0;
    }
  });
});

describe('fake Microsoft Graph: random faults', () => {
  let fake: FakeGraph;
  const headers = () => ({ authorization: `Bearer ${fake.token}`, 'content-type': 'application/json' });
  const path = '/users/coach@school.org/events';
  const body = (i: number, tag: string) => ({
    subject: `${tag}${i}`,
    start: { dateTime: '2026-12-02T10:00:00', timeZone: 'UTC' },
    end: { dateTime: '2026-12-02T11:00:00', timeZone: 'UTC' },
    transactionId: `${tag}-${i}`,
  });
  beforeAll(async () => {
    fake = await startFakeGraph({ mailboxes: ['coach@school.org'] });
    trustCertificate(fake.cert);
  });
  afterAll(() => fake.close());

  it('a 30 % 503 rule, and answers lost 30 % of the time after the write, fail one request at most three times in a row', async () => {
    fake.knobs.faults = [
      { match: /events$/, status: 503, rate: 0.3 },
      { match: /events$/, status: 504, rate: 0.3, when: 'after-apply' },
    ];
    try {
      const runs = await faultRuns(async (i) => {
        const res = await fetch(`${fake.url}/v1.0${path}`, {
          method: 'POST',
          headers: headers(),
          body: JSON.stringify(body(i, 'top')),
        });
        await res.arrayBuffer();
        if (res.status === 503 || res.status === 504) return true;
        expect(res.status).toBe(201);
        return false;
      });
      expect(runs.longest).toBeLessThanOrEqual(3);
      expect(runs.total).toBeGreaterThan(REQUESTS * 0.4);
    } finally {
      fake.knobs.faults = [];
    }
  });

  it('in a $batch, faults of the batch itself, of its item and throttling count as one run: at most three', async () => {
    fake.knobs.faults = [{ status: 503, rate: 0.3 }];
    fake.knobs.throttleRate = 0.3;
    try {
      const runs = await faultRuns(async (i) => {
        const res = await fetch(`${fake.url}/v1.0/$batch`, {
          method: 'POST',
          headers: headers(),
          body: JSON.stringify({
            requests: [
              {
                id: '1',
                method: 'POST',
                url: path,
                headers: { 'Content-Type': 'application/json' },
                body: body(i, 'batch'),
              },
            ],
          }),
        });
        const answer = (await res.json()) as { responses?: { status: number }[] };
        if (res.status === 503 || res.status === 429) return true;
        const item = answer.responses?.[0]?.status;
        if (item === 503 || item === 429) return true;
        expect(item, JSON.stringify(answer)).toBe(201);
        return false;
      });
      expect(runs.longest).toBeLessThanOrEqual(3);
      expect(runs.total).toBeGreaterThan(REQUESTS * 0.5);
    } finally {
      fake.knobs.faults = [];
      fake.knobs.throttleRate = 0;
    }
  });
});
