// SQL for staff sessions and the audit log (staff-access-repository.ts delegates here).
// Instants are canonical ISO strings, so text comparison is time comparison in both dialects.
import type { Kysely, Transaction } from 'kysely';
import type { Instant } from '../domain/types.ts';
import { storedInstant } from './instants.ts';
import type { AuditLogTable, DB, StaffSessionsTable } from './schema.ts';
import type { AuditAction, AuditQuery, AuditRecord, StaffSession } from './types.ts';

type Executor = Kysely<DB> | Transaction<DB>;

function toSession(r: StaffSessionsTable): StaffSession {
  return {
    idHash: r.id_hash,
    email: r.email,
    issuer: r.issuer,
    subject: r.subject,
    displayName: r.display_name,
    createdAt: r.created_at,
    lastSeenAt: r.last_seen_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
    clientAddress: r.client_address,
    userAgent: r.user_agent,
  };
}

export async function createStaffSession(w: Executor, s: StaffSession): Promise<void> {
  await w
    .insertInto('staff_sessions')
    .values({
      id_hash: s.idHash,
      email: s.email.toLowerCase(),
      issuer: s.issuer,
      subject: s.subject,
      display_name: s.displayName,
      created_at: storedInstant(s.createdAt, 'createdAt'),
      last_seen_at: storedInstant(s.lastSeenAt, 'lastSeenAt'),
      expires_at: storedInstant(s.expiresAt, 'expiresAt'),
      revoked_at: s.revokedAt === null ? null : storedInstant(s.revokedAt, 'revokedAt'),
      // Bounded: these come from the request and are shown on the admin page.
      client_address: s.clientAddress?.slice(0, 100) ?? null,
      user_agent: s.userAgent?.slice(0, 300) ?? null,
    })
    .execute();
}

export async function getStaffSession(r: Executor, idHash: string): Promise<StaffSession | null> {
  const row = await r
    .selectFrom('staff_sessions')
    .selectAll()
    .where('id_hash', '=', idHash)
    .executeTakeFirst();
  return row ? toSession(row) : null;
}

export async function touchStaffSession(w: Executor, idHash: string, at: Instant): Promise<void> {
  const now = storedInstant(at, 'touch');
  await w
    .updateTable('staff_sessions')
    .set({ last_seen_at: now })
    .where('id_hash', '=', idHash)
    .where('last_seen_at', '<', now)
    .execute();
}

export async function revokeStaffSession(w: Executor, idHash: string, at: Instant): Promise<boolean> {
  const res = await w
    .updateTable('staff_sessions')
    .set({ revoked_at: storedInstant(at, 'revoke') })
    .where('id_hash', '=', idHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function revokeStaffSessionsOf(w: Executor, email: string, at: Instant): Promise<number> {
  const res = await w
    .updateTable('staff_sessions')
    .set({ revoked_at: storedInstant(at, 'revoke') })
    .where('email', '=', email.trim().toLowerCase())
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

export async function listStaffSessions(r: Executor, at: Instant): Promise<StaffSession[]> {
  const rows = await r
    .selectFrom('staff_sessions')
    .selectAll()
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', storedInstant(at, 'at'))
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map(toSession);
}

export async function pruneStaffSessions(w: Executor, before: Instant): Promise<number> {
  const cut = storedInstant(before, 'before');
  const res = await w
    .deleteFrom('staff_sessions')
    .where((eb) => eb.or([eb('expires_at', '<', cut), eb('revoked_at', '<', cut)]))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

function toAudit(r: Omit<AuditLogTable, 'id'> & { id: number }): AuditRecord {
  return {
    id: Number(r.id),
    at: r.at,
    action: r.action as AuditAction,
    actor: r.actor,
    schoolId: r.school_id,
    teamId: r.team_id === null ? null : Number(r.team_id),
    sessionId: r.session_id === null ? null : Number(r.session_id),
    template: r.template,
    clientAddress: r.client_address,
    staffSession: r.staff_session,
    detail: r.detail,
  };
}

export async function appendAudit(w: Executor, rec: Omit<AuditRecord, 'id'>): Promise<number> {
  const row = await w
    .insertInto('audit_log')
    .values({
      at: storedInstant(rec.at, 'at'),
      action: rec.action,
      actor: rec.actor,
      actor_key: rec.actor.toLowerCase(),
      school_id: rec.schoolId,
      team_id: rec.teamId,
      session_id: rec.sessionId,
      template: rec.template,
      client_address: rec.clientAddress?.slice(0, 100) ?? null,
      staff_session: rec.staffSession,
      detail: rec.detail?.slice(0, 500) ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

export async function listAudit(r: Executor, q: AuditQuery = {}): Promise<AuditRecord[]> {
  let query = r.selectFrom('audit_log').selectAll();
  if (q.since !== undefined) query = query.where('at', '>=', storedInstant(q.since, 'since'));
  if (q.until !== undefined) query = query.where('at', '<', storedInstant(q.until, 'until'));
  if (q.actor !== undefined) query = query.where('actor_key', '=', q.actor.trim().toLowerCase());
  if (q.schoolId !== undefined) query = query.where('school_id', '=', q.schoolId);
  if (q.teamId !== undefined) query = query.where('team_id', '=', q.teamId);
  if (q.template !== undefined) query = query.where('template', '=', q.template);
  if (q.action !== undefined) query = query.where('action', '=', q.action);
  if (q.beforeId !== undefined) query = query.where('id', '<', q.beforeId);
  const rows = await query
    .orderBy('id', 'desc')
    .limit(Math.max(1, Math.min(q.limit ?? 200, 10_000)))
    .execute();
  return rows.map(toAudit);
}

export async function pruneAudit(w: Executor, before: Instant): Promise<number> {
  const res = await w
    .deleteFrom('audit_log')
    .where('at', '<', storedInstant(before, 'before'))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
