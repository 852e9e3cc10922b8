// The rules src/store/staff-access.ts keeps for staff sessions and the audit log (reached as store.access), on SQLite
// and PostgreSQL: where a session's life ends exactly, what a request may put in a row (bounded: the admin page
// shows it), how an audit query is bounded and kept to one school. Who may see what by role is decided in
// identity/ and web/, not here. The plain round trips are in staff-access-repository.test.ts.
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { AuditQuery, AuditRecord, StaffSession } from '../../src/store/types.ts';
import { describeOnEachStore, newSchool, T0, T1, T2 } from './each-store.ts';

const signIn = (over: Partial<StaffSession> = {}): StaffSession => ({
  idHash: randomUUID().replace(/-/g, ''),
  email: `coach-${randomUUID().slice(0, 8)}@school.example`,
  issuer: 'https://idp.example.org',
  subject: randomUUID(),
  displayName: null,
  createdAt: T0,
  lastSeenAt: T0,
  expiresAt: T2,
  revokedAt: null,
  clientAddress: null,
  userAgent: null,
  ...over,
});

const printed = (schoolId: string, over: Partial<AuditRecord> = {}): Omit<AuditRecord, 'id'> => ({
  schoolId,
  at: T1,
  detail: null,
  action: 'roster',
  clientAddress: null,
  actor: 'coach@school.example',
  staffSession: null,
  teamId: 7,
  sessionId: 3001,
  template: 'attendance-sheet',
  ...over,
});

describeOnEachStore('staff access rules (store.access)', (store) => {
  it('a session is live until the instant it expires, not at it; a revoked one is not listed', async () => {
    const ends = signIn({ expiresAt: T1 });
    const revoked = signIn();
    for (const s of [ends, revoked]) await store().access.createStaffSession(s);
    await store().access.revokeStaffSession(revoked.idHash, T0);
    const live = async (at: string) =>
      (await store().access.listStaffSessions(at))
        .map((s) => s.idHash)
        .filter((h) => h === ends.idHash || h === revoked.idHash);
    expect(await live('2026-11-02T07:59:59.999Z')).toEqual([ends.idHash]);
    expect(await live(T1)).toEqual([]);
    // A revoked session stays revoked at its first instant: a second revocation changes nothing.
    expect(await store().access.revokeStaffSessionsOf(revoked.email, T2)).toBe(0);
    expect((await store().access.getStaffSession(revoked.idHash))?.revokedAt).toBe(T0);
  });

  it('prunes a session that ended before the cut-off, not one that ends at it', async () => {
    const atCut = signIn({ expiresAt: '2003-01-01T00:00:00.000Z', createdAt: '2002-01-01T00:00:00.000Z' });
    const before = signIn({ expiresAt: '2002-12-31T23:59:59.999Z', createdAt: '2002-01-01T00:00:00.000Z' });
    for (const s of [atCut, before]) await store().access.createStaffSession(s);
    await store().access.pruneStaffSessions('2003-01-01T00:00:00.000Z');
    expect(await store().access.getStaffSession(before.idHash)).toBeNull();
    expect(await store().access.getStaffSession(atCut.idHash)).not.toBeNull();
  });

  it('bounds what a request puts in a session or record: address 100, user agent 300, detail 500 characters', async () => {
    const s = signIn({ clientAddress: `2001:db8::${'a'.repeat(200)}`, userAgent: 'U'.repeat(1000) });
    await store().access.createStaffSession(s);
    const got = await store().access.getStaffSession(s.idHash);
    expect(got?.clientAddress).toBe(s.clientAddress?.slice(0, 100));
    expect(got?.userAgent).toBe('U'.repeat(300));

    const school = newSchool();
    await store().access.appendAudit(
      printed(school, { clientAddress: '9'.repeat(150), detail: `why: ${'x'.repeat(900)}` }),
    );
    const [rec] = await store().access.listAudit({ schoolId: school });
    expect(rec?.clientAddress).toBe('9'.repeat(100));
    expect(rec?.detail).toHaveLength(500);
    expect(rec?.detail?.startsWith('why: x')).toBe(true);
  });

  it('an audit query sees one school, a half-open time window, and at least one record', async () => {
    const [mine, theirs] = [newSchool(), newSchool()];
    const early = await store().access.appendAudit(printed(mine, { at: T0 }));
    const mid = await store().access.appendAudit(printed(mine, { at: T1 }));
    await store().access.appendAudit(printed(mine, { at: T2 }));
    await store().access.appendAudit(printed(theirs, { at: T1 }));
    const ids = async (q: AuditQuery) => (await store().access.listAudit(q)).map((r) => r.id);
    expect(await ids({ schoolId: mine, since: T0, until: T2 })).toEqual([mid, early]);
    expect((await store().access.listAudit({ schoolId: theirs })).map((r) => r.schoolId)).toEqual([theirs]);
    // A limit below one still answers one record (the newest), never none and never all.
    expect(await ids({ schoolId: mine, limit: 0, until: T2 })).toEqual([mid]);
    expect(await ids({ schoolId: mine, limit: -5, until: T2 })).toEqual([mid]);
  });

  it('prunes audit records older than the cut-off, keeping the one made at it', async () => {
    const school = newSchool();
    await store().access.appendAudit(printed(school, { at: '2001-06-30T23:59:59.999Z' }));
    const atCut = await store().access.appendAudit(printed(school, { at: '2001-07-01T00:00:00.000Z' }));
    await store().access.pruneAudit('2001-07-01T00:00:00.000Z');
    expect((await store().access.listAudit({ schoolId: school })).map((r) => r.id)).toEqual([atCut]);
  });
});
