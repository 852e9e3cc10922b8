// The chaos knobs: a token-bucket rate limit (rate + burst → 429 with Retry-After), a 5xx error rate,
// latency, and deterministic malformed records.
import { Rng, unitHash } from './prng.ts';

export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly rate: number;
  private readonly capacity: number;

  constructor(rate: number, burst: number) {
    this.rate = rate;
    this.capacity = Math.max(1, burst);
    this.tokens = this.capacity;
    this.last = performance.now();
  }

  /** Takes a token; returns 0 when allowed, else the seconds to wait before one is available. */
  take(): number {
    const t = performance.now();
    this.tokens = Math.min(this.capacity, this.tokens + ((t - this.last) / 1000) * this.rate);
    this.last = t;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - this.tokens) / this.rate));
  }
}

/** Decides, in request order, which requests fail with a 5xx: the same seed gives the same sequence. */
export class FaultInjector {
  private readonly rng: Rng;
  private readonly rate: number;
  private n = 0;
  constructor(seed: number, rate: number) {
    this.rng = new Rng(seed ^ 0x5eed5);
    this.rate = rate;
  }

  /** The status to fail with, or 0. */
  next(): number {
    if (this.rate <= 0) return 0;
    const fail = this.rng.next() < this.rate;
    if (!fail) return 0;
    const statuses = [500, 502, 503];
    return statuses[this.n++ % statuses.length] as number;
  }
}

const KEY_FIELD: Record<string, string> = {
  sessions: 'startDateTime',
  teams: 'name',
  students: 'lastName',
  'student-teams': 'student',
  'attendance-records': 'student',
  users: 'email',
  incidents: 'dateTime',
  locations: 'name',
  departments: 'name',
  'year-groups': 'name',
  activities: 'name',
  'activity-selections': 'student',
  'pre-explained-absences': 'startDate',
};

/** Whether the record `id` of `resource` is served malformed (stable for a seed and rate). */
export function isMalformed(seed: number, rate: number, resource: string, id: number): boolean {
  return rate > 0 && unitHash(`${seed}|${resource}|${id}`) < rate;
}

/** Breaks a wire record in one of three ways a robust client must survive: garbage id, missing field, wrong type. */
export function malform(
  seed: number,
  resource: string,
  record: Record<string, unknown>,
): Record<string, unknown> {
  const id = Number(record.id);
  const kind = Math.floor(unitHash(`${seed}|kind|${resource}|${id}`) * 3);
  const out = { ...record };
  const key = KEY_FIELD[resource] ?? 'name';
  if (kind === 0) out.id = `#${id}?garbage`;
  else if (kind === 1) delete out[key];
  else out[key] = typeof out[key] === 'string' ? { unexpected: true } : 'not-the-right-type';
  return out;
}
