// The in-process order of pulls per school and pushes per target: one run of a key at a time, in the order asked
// for, a failure not stopping the next, and a run asked for while one of its group waits joining that one.
import { expect, it } from 'vitest';
import { SerialQueues } from '../../src/jobs/serial.ts';

/** A run that ends when the test says so. */
function held() {
  let end!: () => void;
  const ended = new Promise<void>((r) => {
    end = r;
  });
  return { ended, end };
}

it('runs one run of a key at a time, in order, other keys beside it; a failure does not stop the next', async () => {
  const q = new SerialQueues();
  const said: string[] = [];
  const first = held();
  const a1 = q.run('a', async () => {
    said.push('a1 begins');
    await first.ended;
    said.push('a1 ends');
    throw new Error('a1 failed');
  });
  const a2 = q.run('a', async () => {
    said.push('a2 runs');
    return 2;
  });
  const b1 = q.run('b', async () => {
    said.push('b1 runs');
    return 'b';
  });
  expect(await b1).toBe('b');
  expect(q.busy('a')).toBe(true);
  expect(q.busy('b')).toBe(false);
  first.end();
  await expect(a1).rejects.toThrow('a1 failed');
  expect(await a2).toBe(2);
  expect(said).toEqual(['a1 begins', 'b1 runs', 'a1 ends', 'a2 runs']);
  expect(q.busy('a')).toBe(false);
});

it('a run asked for while one of its group waits its turn is that one; once begun, the next waits again', async () => {
  const q = new SerialQueues();
  const first = held();
  const began = held();
  let runs = 0;
  const push = async () => {
    runs++;
    if (runs === 1) {
      began.end();
      await first.ended;
    }
    return runs;
  };
  const p1 = q.run('t', push, 'reconcile');
  // Once p1 has begun (it no longer waits), the next asks wait behind it and join each other.
  await began.ended;
  const p2 = q.run('t', push, 'reconcile');
  const p3 = q.run('t', push, 'reconcile');
  const other = q.run('t', push, 'force');
  expect(p3).toBe(p2);
  first.end();
  expect(await Promise.all([p1, p2, p3, other])).toEqual([1, 2, 2, 3]);
});
