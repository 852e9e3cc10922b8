// Long work that shares the loop (util/event-loop.ts): a time slice yields once its budget is spent, so a timer or a
// request is heard in between; work written as a generator runs at once or paced.
import { describe, expect, it } from 'vitest';
import { runSteps, runStepsPaced, TimeSlice, yieldToEventLoop } from '../../src/util/event-loop.ts';

describe('sharing the event loop', () => {
  it('lets pending I/O run when it yields, where an awaited settled promise does not', async () => {
    let ran = false;
    setImmediate(() => {
      ran = true;
    });
    await Promise.resolve();
    expect(ran).toBe(false);
    await yieldToEventLoop();
    expect(ran).toBe(true);
  });

  it('yields from a slice only once its budget is spent', async () => {
    // A budget far above a loaded machine's pauses between two lines, so "not yet spent" holds on any run.
    const slice = new TimeSlice(1500);
    let turns = 0;
    let counting = true;
    const count = () => {
      turns++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    try {
      await slice.yield();
      const before = turns;
      expect(slice.spent).toBe(false);
      await slice.pause();
      expect(turns).toBe(before);
      await new Promise((resolve) => setTimeout(resolve, 1510));
      expect(slice.spent).toBe(true);
      const after = turns;
      await slice.pause();
      expect(turns).toBeGreaterThan(after);
      expect(slice.spent).toBe(false);
    } finally {
      counting = false;
    }
  });

  it('runs generator work to its end, at once or pausing at each step', async () => {
    function* work(): Generator<void, number> {
      let sum = 0;
      for (let i = 1; i <= 3; i++) {
        sum += i;
        yield;
      }
      return sum;
    }
    expect(runSteps(work())).toBe(6);
    let pauses = 0;
    expect(
      await runStepsPaced(work(), async () => {
        pauses++;
      }),
    ).toBe(6);
    expect(pauses).toBe(3);
  });
});
