// Staff sessions and the audit log, on SQLite and PostgreSQL (once part of store/contract.ts, run for both there too).
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AuditRecord, StaffSession } from '../../src/store/types.ts';
import { describeOnEachStore } from './each-store.ts';

const T0 = '2026-11-01T08:00:00.000Z';
const T1 = '2026-11-01T09:00:00.000Z';
const T2 = '2026-11-01T20:00:00.000Z';

function session(email: string, over: Partial<StaffSession> = {}): StaffSession {
  return {
    idHash: randomUUID().replace(/-/g, ''),
    email,
    issuer: 'https://idp.example.org',
    subject: `sub-${email}`,
    displayName: 'Ada Coach',
    createdAt: T0,
    lastSeenAt: T0,
    expiresAt: T2,
    revokedAt: null,
    clientAddress: '203.0.113.9',
    userAgent: 'Mozilla/5.0',
    ...over,
  };
}

describeOnEachStore('SqlStaffAccess (store.access)', (store) => {
  describe('staff sessions', () => {
    it('creates, finds by hash, touches and revokes one session', async () => {
      const s = session(`ada-${randomUUID().slice(0, 6)}@school.example`);
      await store().access.createStaffSession(s);
      expect(await store().access.getStaffSession(s.idHash)).toEqual(s);
      expect(await store().access.getStaffSession('0'.repeat(32))).toBeNull();
      await store().access.touchStaffSession(s.idHash, T1);
      expect((await store().access.getStaffSession(s.idHash))?.lastSeenAt).toBe(T1);
      // Never moves back (two replicas touching out of order).
      await store().access.touchStaffSession(s.idHash, T0);
      expect((await store().access.getStaffSession(s.idHash))?.lastSeenAt).toBe(T1);
      expect(await store().access.revokeStaffSession(s.idHash, T1)).toBe(true);
      expect(await store().access.revokeStaffSession(s.idHash, T2)).toBe(false);
      expect((await store().access.getStaffSession(s.idHash))?.revokedAt).toBe(T1);
    });

    it('lower-cases e-mails, ends every session of one person, lists live ones', async () => {
      const tag = randomUUID().slice(0, 6);
      const a1 = session(`Bo-${tag}@School.example`);
      const a2 = session(`bo-${tag}@school.example`, { createdAt: T1, lastSeenAt: T1 });
      const other = session(`cy-${tag}@school.example`);
      const expired = session(`dee-${tag}@school.example`, { expiresAt: T1 });
      for (const s of [a1, a2, other, expired]) await store().access.createStaffSession(s);
      expect((await store().access.getStaffSession(a1.idHash))?.email).toBe(`bo-${tag}@school.example`);

      const live = (await store().access.listStaffSessions(T1)).filter((s) => s.email.includes(tag));
      expect(new Set(live.map((s) => s.idHash))).toEqual(new Set([a1.idHash, a2.idHash, other.idHash]));
      expect(live[0]!.idHash).toBe(a2.idHash);

      expect(await store().access.revokeStaffSessionsOf(` BO-${tag}@school.EXAMPLE `, T1)).toBe(2);
      const after = (await store().access.listStaffSessions(T1)).filter((s) => s.email.includes(tag));
      expect(after.map((s) => s.idHash)).toEqual([other.idHash]);
    });

    it('prunes sessions that ended before a cut-off, keeps live ones', async () => {
      const tag = randomUUID().slice(0, 6);
      const old = session(`old-${tag}@x.example`, {
        createdAt: '2001-01-01T00:00:00.000Z',
        lastSeenAt: '2001-01-01T00:00:00.000Z',
        expiresAt: '2001-01-02T00:00:00.000Z',
      });
      const revoked = session(`rev-${tag}@x.example`, { revokedAt: '2001-01-01T00:00:00.000Z' });
      const live = session(`live-${tag}@x.example`);
      for (const s of [old, revoked, live]) await store().access.createStaffSession(s);
      expect(await store().access.pruneStaffSessions('2002-01-01T00:00:00.000Z')).toBeGreaterThanOrEqual(2);
      expect(await store().access.getStaffSession(old.idHash)).toBeNull();
      expect(await store().access.getStaffSession(revoked.idHash)).toBeNull();
      expect(await store().access.getStaffSession(live.idHash)).not.toBeNull();
    });
  });

  describe('audit log', () => {
    const rec = (schoolId: string, over: Partial<AuditRecord> = {}): Omit<AuditRecord, 'id'> => ({
      at: T0,
      action: 'roster',
      actor: 'Ada.Coach@School.example',
      schoolId,
      teamId: 12,
      sessionId: 3001,
      template: 'attendance-sheet',
      clientAddress: '203.0.113.9',
      staffSession: 'abcd1234',
      detail: null,
      ...over,
    });

    it('appends and lists newest first, with filters', async () => {
      const s = `school-${randomUUID().slice(0, 8)}`;
      const first = await store().access.appendAudit(rec(s));
      const second = await store().access.appendAudit(
        rec(s, { at: T1, actor: 'admin token', teamId: 13, template: 'medical-and-guardian-contacts' }),
      );
      const third = await store().access.appendAudit(
        rec(s, { at: T2, action: 'sign-in', teamId: null, sessionId: null, template: null }),
      );
      expect(second).toBeGreaterThan(first);
      const all = await store().access.listAudit({ schoolId: s });
      expect(all.map((r) => r.id)).toEqual([third, second, first]);
      expect(all[2]).toEqual({ id: first, ...rec(s) });

      const byPerson = await store().access.listAudit({ schoolId: s, actor: 'ada.coach@school.EXAMPLE' });
      expect(byPerson.map((r) => r.id)).toEqual([third, first]);
      expect((await store().access.listAudit({ schoolId: s, teamId: 13 })).map((r) => r.id)).toEqual([
        second,
      ]);
      expect(
        (await store().access.listAudit({ schoolId: s, template: 'medical-and-guardian-contacts' })).map(
          (r) => r.actor,
        ),
      ).toEqual(['admin token']);
      expect((await store().access.listAudit({ schoolId: s, since: T1 })).map((r) => r.id)).toEqual([
        third,
        second,
      ]);
      expect((await store().access.listAudit({ schoolId: s, action: 'sign-in' })).map((r) => r.id)).toEqual([
        third,
      ]);
      expect(
        (await store().access.listAudit({ schoolId: s, limit: 1, beforeId: third })).map((r) => r.id),
      ).toEqual([second]);
    });

    it('prunes records older than the retention cut-off', async () => {
      const s = `school-${randomUUID().slice(0, 8)}`;
      await store().access.appendAudit(rec(s, { at: '2001-01-01T00:00:00.000Z' }));
      const kept = await store().access.appendAudit(rec(s));
      expect(await store().access.pruneAudit('2002-01-01T00:00:00.000Z')).toBeGreaterThanOrEqual(1);
      expect((await store().access.listAudit({ schoolId: s })).map((r) => r.id)).toEqual([kept]);
    });
  });
});
