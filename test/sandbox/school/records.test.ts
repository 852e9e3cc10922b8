// What happened at the generated school's past sessions (src/sandbox/school/records.ts), on the real generator's
// 'school' scale: attendance rolls only for past team sessions of the last 90 days that took place, each roll the
// session's roster, marked after it began and stamped before now; incidents at past sport sessions, of a student on
// their roster, during the session, concussions at the head and confirmed ones with a return to play.
import { describe, expect, it } from 'vitest';
import { generateSchool } from '../../../src/sandbox/generate.ts';
import { DAY, MINUTE } from '../../../src/sandbox/time.ts';
import { TEST_NOW } from '../../support/clock.ts';

const school = generateSchool(3, 'school', TEST_NOW);
const now = Date.parse(TEST_NOW);
const sessions = new Map(school.sessions.map((s) => [s.id, s]));

describe("the generated school's attendance", () => {
  const records = school.attendanceRecords;
  const rolls = Map.groupBy(records, (r) => r.rollId);

  it('is marked for most past team sessions of the last 90 days that took place, and no other', () => {
    expect(records.length).toBeGreaterThan(100);
    const marked = new Set(records.map((r) => r.sessionId));
    for (const id of marked) {
      const s = sessions.get(id)!;
      expect(s.end).toBeLessThan(now);
      expect(s.end).toBeGreaterThanOrEqual(now - 90 * DAY);
      expect(s.teamIds.length).toBeGreaterThan(0);
      expect(s.cancelled || s.bye).toBe(false);
    }
    const eligible = school.sessions.filter(
      (s) => s.end < now && s.end >= now - 90 * DAY && s.teamIds.length > 0 && !s.cancelled && !s.bye,
    );
    expect(marked.size / eligible.length).toBeGreaterThan(0.65);
    expect(marked.size / eligible.length).toBeLessThan(0.95);
  });

  it('takes each roll of its session’s whole roster, once, marked after it began and stamped before now', () => {
    expect(new Set(records.map((r) => r.id)).size).toBe(records.length);
    for (const roll of rolls.values()) {
      const s = sessions.get(roll[0]!.sessionId)!;
      expect(roll.every((r) => r.sessionId === s.id)).toBe(true);
      expect(roll.map((r) => r.studentId)).toEqual(s.rosterIds);
      for (const r of roll) {
        expect(r.teamId).toBe(s.teamIds[0]);
        expect(r.markedByUserId).toBe(s.staffIds[0] ?? null);
        expect(r.timeMarked).toBeGreaterThanOrEqual(s.start + 5 * MINUTE);
        expect(r.timeMarked).toBeLessThanOrEqual(s.start + 30 * MINUTE);
        if (r.timeEdited !== null)
          expect(r.timeEdited).toBeGreaterThan(r.timeMarked ?? Number.POSITIVE_INFINITY);
        expect(r.updatedAt).toBeLessThanOrEqual(now - MINUTE);
      }
    }
  });

  it('marks absences explained only when absent, and late or left early only when present', () => {
    const absent = records.filter((r) => r.absent);
    expect(absent.length / records.length).toBeGreaterThan(0.04);
    expect(absent.length / records.length).toBeLessThan(0.12);
    expect(records.some((r) => r.explained)).toBe(true);
    expect(records.filter((r) => r.explained).every((r) => r.absent)).toBe(true);
    expect(absent.every((r) => !r.flagIds.includes(1) && !r.flagIds.includes(2))).toBe(true);
    const flagIds = new Set(school.attendanceFlags.map((f) => f.id));
    expect(records.every((r) => r.flagIds.every((f) => flagIds.has(f)))).toBe(true);
  });
});

describe("the generated school's incidents", () => {
  const incidents = school.incidents;

  it('happen at past sport sessions, to a student on the roster, during the session', () => {
    expect(incidents.length).toBeGreaterThanOrEqual(6);
    expect(new Set(incidents.map((i) => i.id)).size).toBe(incidents.length);
    for (const i of incidents) {
      expect(i.dateTime).toBeLessThan(now);
      expect(i.updatedAt).toBeLessThanOrEqual(now - MINUTE);
      expect(i.updatedAt).toBeGreaterThan(i.dateTime);
      if (i.sessionId === null) continue;
      const s = sessions.get(i.sessionId)!;
      expect(s.activityId).toBe(i.activityId);
      expect(s.rosterIds).toContain(i.studentId);
      expect(i.dateTime).toBeGreaterThanOrEqual(s.start + 10 * MINUTE);
      expect(i.dateTime).toBeLessThanOrEqual(s.start + 80 * MINUTE);
      expect(i.staffUserId).toBe(s.staffIds[0] ?? 201);
    }
    expect(incidents.filter((i) => i.sessionId !== null).length / incidents.length).toBeGreaterThan(0.6);
  });

  it('puts a concussion at the head, and a confirmed one with a return to play 12 to 21 days on', () => {
    const withFields = incidents.filter((i) => i.fields !== null);
    expect(withFields.length).toBeGreaterThan(0);
    for (const i of withFields) {
      if (i.concussionStatus !== 'none') expect(i.fields!['Body part']?.value).toBe('Head');
      expect(i.fields!.Description?.value).toMatch(/knock\. Ice applied\.$/);
    }
    for (const i of incidents.filter((x) => x.concussionStatus === 'confirmed')) {
      expect(i.returnToPlay?.reason).toBe('Graduated return-to-play protocol');
      expect(i.returnToPlay!.date - i.dateTime).toBeGreaterThanOrEqual(12 * DAY);
      expect(i.returnToPlay!.date - i.dateTime).toBeLessThanOrEqual(21 * DAY);
    }
    expect(incidents.filter((i) => i.concussionStatus === 'none').every((i) => i.returnToPlay === null)).toBe(
      true,
    );
    const archived = incidents.filter((i) => i.archived);
    expect(archived.every((i) => i.dateTime < now - 60 * DAY)).toBe(true);
  });
});
