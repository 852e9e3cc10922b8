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

  it('resumes one waiter a turn: pieces of long work sharing the loop never hold one turn together', async () => {
    // A pull's statements, its page parsing and its record preparation each yield when their slice is spent; all
    // resumed in the same turn, that turn held the sum of their slices (~110 ms of CPU in a district pull).
    let turn = 0;
    let counting = true;
    const count = () => {
      turn++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const resumedAt: number[] = [];
    const work = async () => {
      for (let i = 0; i < 5; i++) {
        await yieldToEventLoop();
        resumedAt.push(turn);
      }
    };
    try {
      await Promise.all([work(), work(), work(), work()]);
    } finally {
      counting = false;
    }
    expect(resumedAt).toHaveLength(20);
    expect(new Set(resumedAt).size).toBe(20);
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
