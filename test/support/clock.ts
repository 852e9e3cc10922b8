// The instant the tests' schools are built around, unless a test is about the present: a term-time Friday morning
// in Sydney (the sandbox school's zone), weeks from a holiday and from a daylight-saving change. A school built
// around the real date would change from run to run, and meet the summer break or a clock change on some days.
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/index.ts';

export const TEST_NOW = '2026-11-20T00:00:00.000Z';

const DAY = 86_400_000;

/**
 * The Monday of the week of `at`, 00:00 UTC (10–11 am in Sydney, never near a daylight-saving hour). For tests whose
 * product runs in a child process on the real clock: a school built around it has the same week shape whatever the
 * day or hour of the run, and stays inside the product's windows (60 days back, 365 ahead) for ever, which a fixed
 * date like TEST_NOW does not.
 */
export function weekAnchor(at: number = Date.now()): string {
  const day = Math.floor(at / DAY) * DAY;
  const sinceMonday = (new Date(day).getUTCDay() + 6) % 7;
  return new Date(day - sinceMonday * DAY).toISOString();
}

/**
 * A sandbox whose school is built around this week's anchor, with its clock then set to the real time: the product
 * in a child process stamps its cursors on the real clock, so the sandbox's writes must be stamped on it too (with a
 * clock days behind, an incremental pull would never see a write made after it).
 */
export async function startWeekSandbox(opts: Omit<SandboxOptions, 'now'> = {}): Promise<Sandbox> {
  const sandbox = await startSandbox({ ...opts, now: weekAnchor() });
  sandbox.setNow(new Date().toISOString());
  return sandbox;
}
