// Which medical conditions need a coach to act (carry medication, check, follow a plan), so the sheet lists them
// first and marks them. The upstream service gives a condition only as a name and free-text notes (no severity or
// action field), so this is a keyword list over both, kept deliberately broad: a false "needs action" costs a
// glance, a missed one costs an emergency.
const ACTION =
  /anaphyla|epi-?pen|adrenalin|auto-?injector|diabet|insulin|glucose|hypo(glyc|s\b)|epilep|seizure|asthma|inhaler|reliever|cardiac|heart|action plan|emergency|severe|allerg/i;

export const ACTION_MARK = '!';

/**
 * Beside a student's name on attendance and match-day sheets: this child has a medical condition. It says nothing
 * of which (the medical sheet does), so a sheet left on a bench tells a passer-by little.
 */
export const MEDICAL_MARK = '✚';

export function needsAction(condition: string): boolean {
  return ACTION.test(condition);
}

/** One line per condition: those needing action first, marked, in their upstream order; then the rest. */
export function conditionLines(conditions: readonly string[]): string[] {
  const act = conditions.filter(needsAction);
  const rest = conditions.filter((c) => !needsAction(c));
  return [...act.map((c) => `${ACTION_MARK} ${c}`), ...rest];
}
