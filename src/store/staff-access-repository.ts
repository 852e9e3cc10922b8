// Staff access: who is signed in as staff, and the audit log of what was done (SQL in staff-access.ts).
import type { Instant } from '../domain/types.ts';
import type { SqlContext } from './sql-context.ts';
import * as staffAccess from './staff-access.ts';
import type { AuditQuery, AuditRecord, StaffAccessRepository, StaffSession } from './types.ts';

export class SqlStaffAccess implements StaffAccessRepository {
  readonly #ctx: SqlContext;

  constructor(ctx: SqlContext) {
    this.#ctx = ctx;
  }

  createStaffSession(session: StaffSession): Promise<void> {
    return staffAccess.createStaffSession(this.#ctx.w, session);
  }
  getStaffSession(idHash: string): Promise<StaffSession | null> {
    return staffAccess.getStaffSession(this.#ctx.r, idHash);
  }
  touchStaffSession(idHash: string, at: Instant): Promise<void> {
    return staffAccess.touchStaffSession(this.#ctx.w, idHash, at);
  }
  revokeStaffSession(idHash: string, at: Instant): Promise<boolean> {
    return staffAccess.revokeStaffSession(this.#ctx.w, idHash, at);
  }
  revokeStaffSessionsOf(email: string, at: Instant): Promise<number> {
    return staffAccess.revokeStaffSessionsOf(this.#ctx.w, email, at);
  }
  listStaffSessions(at: Instant): Promise<StaffSession[]> {
    return staffAccess.listStaffSessions(this.#ctx.r, at);
  }
  pruneStaffSessions(before: Instant): Promise<number> {
    return staffAccess.pruneStaffSessions(this.#ctx.w, before);
  }
  appendAudit(record: Omit<AuditRecord, 'id'>): Promise<number> {
    return staffAccess.appendAudit(this.#ctx.w, record);
  }
  listAudit(query?: AuditQuery): Promise<AuditRecord[]> {
    return staffAccess.listAudit(this.#ctx.r, query);
  }
  pruneAudit(before: Instant): Promise<number> {
    return staffAccess.pruneAudit(this.#ctx.w, before);
  }
}
