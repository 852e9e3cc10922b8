// SANDBOX_NOW: the instant `serve`'s clock starts at, for tests and demos against the sandbox, whose school is
// built around its own `--now`. Pages, families' acts, feeds and pulls then decide "today", "upcoming" and the
// 60-day window on the same clock as the school they show, whatever the real date of the run.
//
// A deployment must never freeze or shift its clock by accident (a stray variable would move every family's
// "today"), so the setting is refused unless every school is served by the sandbox: the demo school, or an
// upstream on this machine's loopback holding one of the sandbox's own tokens (its default, SANDBOX_TOKEN; config.ts
// adds the demo's own).

import { SANDBOX_TOKEN } from '../domain/sandbox-token.ts';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface ClockSchool {
  id: string;
  demo: boolean;
  upstream: { url: string; token: string };
}

export interface ClockProblem {
  path: string;
  message: string;
}

/** The sandbox's own upstream: loopback, with a token the sandbox hands out. */
function isSandbox(s: ClockSchool, demoToken: string): boolean {
  if (s.demo) return true;
  let host: string;
  try {
    host = new URL(s.upstream.url).hostname;
  } catch {
    return false;
  }
  return LOOPBACK.has(host) && (s.upstream.token === SANDBOX_TOKEN || s.upstream.token === demoToken);
}

// A zone is required: Date.parse reads a time without one in this process's zone, so the clock would start
// somewhere else on each machine. Date.parse also rolls 30 February into March and 24:00 into the next day.
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** An ISO 8601 instant with a zone whose date and time exist as written. */
function isInstant(raw: string): boolean {
  const m = INSTANT.exec(raw);
  if (!m || Number.isNaN(Date.parse(raw))) return false;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map((x) => Number(x ?? 0));
  const day = new Date(Date.UTC(y!, mo! - 1, d!));
  return day.getUTCMonth() === mo! - 1 && day.getUTCDate() === d && h! < 24 && mi! < 60 && sec! < 60;
}

/** SANDBOX_NOW as an ISO instant (null when unset), or the problem that refuses it. */
export function sandboxNow(
  env: NodeJS.ProcessEnv,
  schools: readonly ClockSchool[],
  demoToken: string,
): { now: string | null } | { problem: ClockProblem } {
  const raw = env.SANDBOX_NOW?.trim();
  if (!raw) return { now: null };
  if (!isInstant(raw))
    return {
      problem: {
        path: 'SANDBOX_NOW',
        message: `must be an ISO 8601 instant such as 2026-11-20T00:00:00Z, got "${raw}"`,
      },
    };
  const real = schools.filter((s) => !isSandbox(s, demoToken)).map((s) => s.id);
  if (real.length)
    return {
      problem: {
        path: 'SANDBOX_NOW',
        message: `sets serve's clock for tests and demos against the sandbox only, and ${real.join(', ')} ${real.length === 1 ? 'is' : 'are'} served by another upstream (not the demo school, nor a loopback address with a sandbox token): unset SANDBOX_NOW`,
      },
    };
  return { now: new Date(Date.parse(raw)).toISOString() };
}

/**
 * A clock that reads `startsAt` now and runs at the real pace from there, as the sandbox's does; the real clock when
 * null. One per process, made by the composition root.
 */
export function clockStartingAt(startsAt: string | null, real: () => number = Date.now): () => Date {
  if (startsAt === null) return () => new Date(real());
  const offset = Date.parse(startsAt) - real();
  return () => new Date(real() + offset);
}

/** What `status`, `/admin` and serve's start say of the clock when SANDBOX_NOW moves it; null on the real one. */
export function clockLine(startsAt: string | null | undefined): string | null {
  if (!startsAt) return null;
  return `clock: SANDBOX_NOW=${startsAt}: serve's "today" starts at that instant and runs on from it (tests and demos against the sandbox), not at the real date`;
}
