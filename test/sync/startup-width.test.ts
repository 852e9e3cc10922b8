// nextWidth: the start-up pulls' width follows serve's event loop and the machine's idle CPU.
import { describe, expect, it } from 'vitest';
import { DEFAULT_WIDTH, nextWidth, startupWidth } from '../../src/sync/startup-width.ts';

const b = { start: 6, min: 2, max: 10 };

describe('nextWidth', () => {
  it('widens by two while the loop mostly waits and the machine has idle CPU, up to the bound', () => {
    expect(nextWidth(6, { loop: 0.3, machineIdle: 0.6 }, b)).toBe(8);
    expect(nextWidth(9, { loop: 0.3, machineIdle: 0.6 }, b)).toBe(10);
    expect(nextWidth(10, { loop: 0.3, machineIdle: 0.6 }, b)).toBe(10);
  });

  it('holds when the machine has no CPU to spare, however idle the loop', () => {
    expect(nextWidth(6, { loop: 0.2, machineIdle: 0.05 }, b)).toBe(6);
  });

  it('holds when the loop is busy but has room', () => {
    expect(nextWidth(6, { loop: 0.8, machineIdle: 0.6 }, b)).toBe(6);
  });

  it('narrows by one when the loop is nearly always busy, down to the bound', () => {
    expect(nextWidth(6, { loop: 0.95, machineIdle: 0.6 }, b)).toBe(5);
    expect(nextWidth(2, { loop: 0.95, machineIdle: 0 }, b)).toBe(2);
  });
});

describe('startupWidth', () => {
  it('starts at its start and stays within its bounds while it reads this process and machine', async () => {
    const w = startupWidth({ start: 3, min: 2, max: 4 }, 20);
    try {
      expect(w.now()).toBe(3);
      const seen = new Set<number>();
      for (let i = 0; i < 10; i++) {
        await new Promise((r) => setTimeout(r, 25));
        seen.add(w.now());
      }
      for (const v of seen) expect(v >= 2 && v <= 4).toBe(true);
    } finally {
      w.stop();
    }
    expect(DEFAULT_WIDTH.start).toBe(6);
  });
});
