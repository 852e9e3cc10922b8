// What a filter of the audit log may name, asked alike by `rostercal audit` and /admin/audit: a value that can
// match nothing (a typo, a name where an address belongs) is told as such, with what the filter takes, instead of
// an empty log ("no audit records", exit 0; "nothing recorded") that reads as "nobody did anything".
import type { AuditAction, AuditQuery, AuditRecord, SchoolId, Store } from '../store/types.ts';
import { matchStaffByEmail } from './roles.ts';

type FilterStore = Pick<Store, 'access' | 'records'>;

/** Which records the asker may see (an admin of one school of several sees that school's and those of none). */
export type Visible = (r: AuditRecord) => boolean;

/** An e-mail address as identity providers give them: something, one @, a domain with a dot. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** What --person and the page's Person field take, in one sentence both can show. */
export const PERSON_TAKES =
  'a person is the e-mail address of a member of staff (such as coach@school.example.org), "admin token", or another "who" the log shows (such as "command line (root)" or "child link 5eed1e55")';

/** Every action the log records, as a filter offers it (a Record: a new action cannot be left out). */
export const ACTION_LABELS: Record<AuditAction, string> = {
  roster: 'roster downloaded',
  'roster-refused': 'roster refused',
  'session-roster': 'session page opened',
  'session-medical-contacts': 'medical or contact details viewed',
  'my-teams': 'My teams opened (who is out)',
  'feed-rotate': 'calendar link replaced',
  'feeds-accept-store': 'feed secret accepted',
  'sign-in': 'signed in',
  'sign-in-refused': 'sign-in refused',
  'sign-out': 'signed out',
  'sessions-ended': 'sessions ended',
  'absence-report': 'absence reported by a family',
  'absence-undo': 'absence withdrawn by a family',
  'absence-refused': 'family absence refused',
};

export function isAuditAction(v: string): v is AuditAction {
  return Object.hasOwn(ACTION_LABELS, v);
}

/** null when an action filter names an action the log records; else what is wrong (each caller says where to look). */
export function actionProblem(action: string): string | null {
  return isAuditAction(action) ? null : `"${action}" is not an action the audit log records`;
}

/**
 * The "who" the log writes for what is done without a staff sign-in (identity/command-line-audit.ts, a family's
 * calendar link): not an e-mail address, but a person the log may name once it has a record.
 */
const RECORDED_WHO = /^(?:command line \(.+\)|(?:child|family) link \S+)$/i;

/** Whether the log holds a record the asker may see that the query matches (a removed template's, say). */
async function logNames(store: FilterStore, query: AuditQuery, visible: Visible): Promise<boolean> {
  // Newest 200 are enough to find one the asker may see: every record visible is the common case (limit 1).
  return (await store.access.listAudit({ ...query, limit: 200 })).some(visible);
}

/**
 * null when a person filter can match; else what is wrong. Matched as the log stores actors (case-insensitive):
 * a staff member's address (known to a school's staff list, or named by a record: a refused sign-in's), "admin
 * token", or another actor the log records.
 */
export async function personProblem(
  store: FilterStore,
  schools: readonly SchoolId[],
  person: string,
  visible: Visible,
): Promise<string | null> {
  const wanted = person.trim();
  if (wanted.toLowerCase() === 'admin token') return null;
  if (await logNames(store, { actor: wanted }, visible)) return null;
  if (RECORDED_WHO.test(wanted)) return `no audit record names "${wanted}" yet`;
  if (!EMAIL.test(wanted)) return `"${wanted}" is not an e-mail address: ${PERSON_TAKES}`;
  for (const id of schools)
    if (matchStaffByEmail(await store.records.list(id, 'staff'), wanted).kind !== 'unknown') return null;
  return `no staff member has the e-mail address "${wanted}", and no audit record names it`;
}

/** null when a team filter can match: a team of one of the schools, or one the log names (a team since gone). */
export async function teamProblem(
  store: FilterStore,
  schools: readonly SchoolId[],
  teamId: number,
  visible: Visible,
): Promise<string | null> {
  for (const id of schools) if (await store.records.get(id, 'teams', teamId)) return null;
  if (await logNames(store, { teamId }, visible)) return null;
  return `no team has the id ${teamId}, and no audit record names it`;
}

/**
 * null when a template filter can match: a template rostercal has (shipped or the school's), or one the log holds
 * (a school's own template removed since).
 */
export async function templateProblem(
  store: FilterStore,
  names: readonly string[],
  name: string,
  visible: Visible,
): Promise<string | null> {
  if (names.includes(name)) return null;
  if (await logNames(store, { template: name }, visible)) return null;
  return `no roster template "${name}" (${names.join(', ')}), and no audit record names one`;
}
