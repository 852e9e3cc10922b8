// Per-endpoint request accounting (upstream/stats.ts): one record per endpoint, snapshots that do not move with it,
// totals over every endpoint.
import { describe, expect, it } from 'vitest';
import { StatsRecorder } from '../../src/upstream/stats.ts';

describe('request accounting', () => {
  it('keeps one record per endpoint and sums them', () => {
    const s = new StatsRecorder();
    expect(s.totals()).toEqual({ requests: 0, retries: 0, throttled: 0, errors: 0 });
    s.for('GET /sessions').requests += 3;
    s.for('GET /sessions').retries += 1;
    s.for('GET /teams').requests += 2;
    s.for('GET /teams').throttled += 1;
    s.for('GET /teams').errors += 2;
    expect(s.for('GET /sessions')).toBe(s.for('GET /sessions'));
    expect(s.totals()).toEqual({ requests: 5, retries: 1, throttled: 1, errors: 2 });
    const snap = s.snapshot();
    expect(snap).toEqual({
      'GET /sessions': { requests: 3, retries: 1, throttled: 0, errors: 0 },
      'GET /teams': { requests: 2, retries: 0, throttled: 1, errors: 2 },
    });
    // A snapshot is a copy: later requests do not change it.
    s.for('GET /sessions').requests++;
    expect(snap['GET /sessions']!.requests).toBe(3);
  });
});
