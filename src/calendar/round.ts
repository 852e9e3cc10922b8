// A session's round, said once. Upstream round names usually already say what they are ("Round 11"): the
// wording "Round: {round}" made "Round: Round 11" on every family and coach surface (an outside tester). The one
// decision lives here so feeds, pushes, pages and roster PDFs say it the same way.
import { type EventTemplates, fill } from './templates.ts';

/** "Round" and a number first: the name is already a round's (not "Round Robin", which is the name of a stage). */
const NUMBERED_ROUND = /^round\s+(?=\d)/i;

/** The line an event's description gives the round: the name alone when it says "Round 11", else the wording's. */
export function roundLine(roundName: string, t: EventTemplates): string {
  const name = roundName.trim();
  return NUMBERED_ROUND.test(name) ? name : fill(t.description.round, { round: name });
}

/** The value beside a "Round" label (a roster's header): "11" for "Round 11", so the row reads "Round 11" once. */
export function roundValue(roundName: string): string {
  return roundName.trim().replace(NUMBERED_ROUND, '');
}
