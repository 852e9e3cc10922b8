// What happened at past sessions: attendance rolls and incidents.

import { hourMinute } from '../../util/time-zone.ts';
import type { ActivitySpec } from '../fixed-facts.ts';
import type { SAttendanceRecord, School, SIncident, SSession } from '../model.ts';
import type { Rng } from '../prng.ts';
import { DAY, HOUR, MINUTE } from '../time.ts';
import type { Basis } from './basis.ts';

export function makeAttendanceFlags(): School['attendanceFlags'] {
  return [
    { id: 1, name: 'Late' },
    { id: 2, name: 'Left early' },
    { id: 3, name: 'Injured' },
    { id: 4, name: 'Uniform' },
  ];
}

/** Rolls marked for most past team sessions of the last 90 days. */
export function makeAttendance(
  basis: Basis,
  attRng: Rng,
  sessions: readonly SSession[],
): SAttendanceRecord[] {
  const { nowMs } = basis;
  const records: SAttendanceRecord[] = [];
  let rollId = 20001;
  for (const s of sessions) {
    if (s.end >= nowMs || s.end < nowMs - 90 * DAY || s.teamIds.length === 0 || s.cancelled || s.bye)
      continue;
    if (!attRng.chance(0.8)) continue;
    const marker = s.staffIds[0] ?? null;
    const timeMarked = s.start + attRng.int(5, 30) * MINUTE;
    const edited = attRng.chance(0.1);
    const timeEdited = edited ? timeMarked + attRng.int(1, 48) * HOUR : null;
    const rid = rollId++;
    for (const studentId of s.rosterIds) {
      const absent = attRng.chance(0.08);
      const flags: number[] = [];
      if (!absent && attRng.chance(0.05)) flags.push(1);
      if (!absent && attRng.chance(0.02)) flags.push(2);
      if (attRng.chance(0.01)) flags.push(3);
      records.push({
        id: 300001 + records.length,
        sessionId: s.id,
        studentId,
        teamId: s.teamIds[0] ?? null,
        absent,
        explained: absent && attRng.chance(0.6),
        comment:
          absent && attRng.chance(0.3)
            ? 'Parent emailed in advance'
            : flags.length > 0 && attRng.chance(0.5)
              ? 'Arrived after warm-up'
              : null,
        addedToRoll: attRng.chance(0.03),
        flagIds: flags,
        rollId: rid,
        markedByUserId: marker,
        timeMarked,
        editedByUserId: edited ? marker : null,
        timeEdited,
        updatedByUserId: marker,
        updatedAt: Math.min(nowMs - MINUTE, timeEdited ?? timeMarked),
      });
    }
  }
  return records;
}

export function makeIncidentTemplate(): School['incidentTemplate'] {
  return {
    id: 1,
    field: [
      {
        label: 'Description',
        fieldType: 'text' as const,
        required: true,
        limit: 2000,
        showLimit: true,
        externalField: null,
      },
      {
        label: 'Body part',
        fieldType: 'dropdown' as const,
        required: false,
        options: ['Head', 'Shoulder', 'Arm', 'Hand', 'Knee', 'Ankle', 'Other'],
        externalField: 'injury_site',
      },
      { label: 'Time of injury', fieldType: 'time' as const, required: false, externalField: null },
      {
        label: 'Concussion check',
        fieldType: 'concussion-check' as const,
        required: false,
        externalField: null,
      },
      { label: 'Body chart', fieldType: 'body-chart' as const, required: false, externalField: null },
      { label: 'Photo', fieldType: 'photo' as const, required: false, externalField: null },
    ],
  };
}

/** Injuries, mostly at past sport sessions; a few concussions with a return-to-play date. */
export function makeIncidents(
  basis: Basis,
  incRng: Rng,
  sessions: readonly SSession[],
  specOf: Map<number, ActivitySpec>,
): SIncident[] {
  const { nowMs, tz } = basis;
  const incidents: SIncident[] = [];
  const pastSport = sessions.filter(
    (s) =>
      s.end < nowMs && s.rosterIds.length > 0 && !s.cancelled && specOf.get(s.activityId)?.kind === 'sport',
  );
  const incidentCount = Math.max(6, Math.round(basis.spec.students / 20));
  for (let i = 0; i < incidentCount && pastSport.length > 0; i++) {
    const s = incRng.pick(pastSport);
    const studentId = incRng.pick(s.rosterIds);
    const concussionStatus = incRng.weighted([
      ['none', 70],
      ['potential', 20],
      ['confirmed', 10],
    ] as const);
    const at = s.start + incRng.int(10, 80) * MINUTE;
    const part = incRng.pick(['Head', 'Knee', 'Ankle', 'Hand', 'Shoulder']);
    incidents.push({
      id: 9001 + i,
      location: incRng.pick([
        'Main Oval — north end',
        'Court 2 baseline',
        'Change rooms',
        'Away ground',
        'Pool deck',
      ]),
      studentId,
      fields: incRng.chance(0.1)
        ? null
        : {
            Description: {
              value: `Collision during play; ${part.toLowerCase()} knock. Ice applied.`,
              fieldType: 'text',
            },
            'Body part': { value: concussionStatus === 'none' ? part : 'Head', fieldType: 'dropdown' },
            'Time of injury': { value: hourMinute(at, tz), fieldType: 'time' },
          },
      dateTime: at,
      concussionStatus,
      returnToPlay:
        concussionStatus === 'confirmed'
          ? { date: at + incRng.int(12, 21) * DAY, reason: 'Graduated return-to-play protocol' }
          : concussionStatus === 'potential' && incRng.chance(0.5)
            ? { date: at + 7 * DAY, reason: null }
            : null,
      activityId: s.activityId,
      sessionId: incRng.chance(0.9) ? s.id : null,
      staffUserId: s.staffIds[0] ?? 201,
      archived: at < nowMs - 60 * DAY && incRng.chance(0.5),
      updatedAt: Math.min(nowMs - MINUTE, at + incRng.int(1, 72) * HOUR),
    });
  }
  return incidents;
}
