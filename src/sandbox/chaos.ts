// The chaos knobs: a 5xx error rate and deterministic malformed records. (The rate limit is a token bucket,
// src/util/token-bucket.ts; latency is a wait in server.ts.)
import { Rng, unitHash } from './prng.ts';

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
