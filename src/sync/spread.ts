// Spreads schools' fires over their schedule's interval (issue 28, "Fifty schools on one replica"): with one cron
// expression for every school, a thousand schools would all pull in the same second. Each school's jobs are moved
// by an offset of its own, derived from its id alone: every replica sharing the store computes the same fire times
// without talking to the others (on PostgreSQL a fire's job id in the queue is made of them: store/fire-queue.ts
// fireId), and a school's fires stay where they were across restarts.
import { createHash } from 'node:crypto';

/** A stable fraction in [0, 1) for a school: a hash of its id, the same everywhere and always. */
export function spreadFraction(schoolId: string): number {
  return createHash('sha256').update(schoolId).digest().readUInt32BE(0) / 2 ** 32;
}

/** `*` or `0/N`-style steps: N when the field fires every N units from 0 and N divides `size` evenly. */
function stepOf(field: string, size: number): number | null {
  if (field === '*') return 1;
  const m = /^(?:\*|0)\/(\d+)$/.exec(field);
  if (!m) return null;
  const n = Number(m[1]);
  return n >= 1 && n < size && size % n === 0 ? n : null;
}

const isNumber = (field: string) => /^\d+$/.test(field);

/** Every value from `first` to `size`, `step` apart: `7,37`. */
function listFrom(first: number, step: number, size: number): string {
  const values: number[] = [];
  for (let v = first; v < size; v += step) values.push(v);
  return values.join(',');
}

// The school's own fires of a cron expression (5 fields, or 6 with seconds first), moved by the school's offset
// within the expression's interval, never changing how often it fires:
// - seconds every N (`*/30 * * * * *`): the school fires at its own second within each N (`7,37 * * * * *`);
// - every M minutes (`*/10 * * * *`, seconds absent or a number): at its own minute and second within each M;
// - every minute (`* * * * *`): at its own second;
// - at a given minute, hourly or rarer (`0 */6 * * *`, `30 2 * * *`): at its own minute and second of that hour.
// Anything else (lists, ranges, every second) is left as written: the operator chose those moments.
export function spreadCron(expression: string, schoolId: string): string {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) return expression;
  const [second, minute, ...rest] = fields.length === 6 ? fields : ['0', ...fields];
  const f = spreadFraction(schoolId);
  const everySeconds = stepOf(second!, 60);
  if (everySeconds !== null && everySeconds > 1)
    return [listFrom(Math.floor(f * everySeconds), everySeconds, 60), minute, ...rest].join(' ');
  if (!isNumber(second!)) return expression;
  const everyMinutes = stepOf(minute!, 60);
  if (everyMinutes !== null) {
    const offset = Math.floor(f * everyMinutes * 60);
    const minutes = everyMinutes === 1 ? '*' : listFrom(Math.floor(offset / 60), everyMinutes, 60);
    return [offset % 60, minutes, ...rest].join(' ');
  }
  if (isNumber(minute!) && Number(minute) < 60) {
    const offset = Math.floor(f * 3600);
    return [offset % 60, (Number(minute) + Math.floor(offset / 60)) % 60, ...rest].join(' ');
  }
  return expression;
}
