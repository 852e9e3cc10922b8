// The instant the tests' schools are built around, unless a test is about the present: a term-time Friday morning
// in Sydney (the sandbox school's zone), weeks from a holiday and from a daylight-saving change. A school built
// around the real date would change from run to run, and meet the summer break or a clock change on some days.
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/index.ts';

export const TEST_NOW = '2026-11-20T00:00:00.000Z';

const DAY = 86_400_000;

/** What a test may set of a week sandbox: the rest (its instant, its calendar) is the week's. */
export type WeekSandboxOptions = Omit<SandboxOptions, 'now' | 'holidays'>;

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
 * The options of a sandbox whose school is built around the week of `at` (startWeekSandbox's; also for a test that
 * starts such a sandbox itself). Its school has no holidays: the sandbox's keeps the New South Wales ones by default
 * (school-calendar.ts), and on the real clock the summer break (from the Saturday after term four ends, mid-December,
 * to early February) and each term holiday would leave a school built around the real week with no session in it
 * or the next, so every test that needs an upcoming session would fail on those dates of the year, not on others.
 * In term every day, its weeks all have the same shape. Tests about holidays build their school around a fixed date.
 */
export function weekSandboxOptions(opts: WeekSandboxOptions = {}, at: number = Date.now()): SandboxOptions {
  return { ...opts, now: weekAnchor(at), holidays: false };
}

/**
 * A sandbox whose school is built around this week's anchor, with its clock then set to the real time: the product
 * in a child process stamps its cursors on the real clock, so the sandbox's writes must be stamped on it too (with a
 * clock days behind, an incremental pull would never see a write made after it).
 */
export async function startWeekSandbox(opts: WeekSandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await startSandbox(weekSandboxOptions(opts));
  sandbox.setNow(new Date().toISOString());
  return sandbox;
}
