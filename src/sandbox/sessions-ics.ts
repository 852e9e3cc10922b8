// `GET /sessions?format=ics`: an RFC 5545 calendar of the filtered sessions (fixed window, 200 per page).
// Written by hand: it is small, and the sandbox should not share the feed code it is the upstream of.
import type { SSession } from './model.ts';
import type { SandboxState } from './state.ts';

function escapeText(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/;/g, '\\;').replace(/,/g, '\\,').replace(/\r?\n/g, '\\n');
}

/** Folds a content line at 75 octets without splitting a UTF-8 sequence. */
function fold(line: string): string {
  const bytes = Buffer.from(line, 'utf8');
  if (bytes.length <= 75) return line;
  const parts: string[] = [];
  let start = 0;
  let limit = 75;
  while (start < bytes.length) {
    let end = Math.min(start + limit, bytes.length);
    while (end < bytes.length && ((bytes[end] as number) & 0xc0) === 0x80) end--;
    parts.push(bytes.subarray(start, end).toString('utf8'));
    start = end;
    limit = 74; // continuation lines start with a space
  }
  return parts.join('\r\n ');
}

function stamp(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace(/[-:]/g, '')}Z`;
}

function customFieldLines(st: SandboxState, s: SSession): string[] {
  const lines: string[] = [];
  const fields = new Map(st.school.customFields.map((f) => [f.key, f]));
  const render = (key: string, value: string | number[]): string | null => {
    const f = fields.get(key);
    if (!f) return null;
    let text: string;
    if (Array.isArray(value)) {
      const names =
        f.dataType === 'staff'
          ? value.map((id) => st.users.get(id)).map((u) => (u ? `${u.firstName} ${u.lastName}` : ''))
          : value.map((id) => st.students.get(id)).map((p) => (p ? `${p.firstName} ${p.lastName}` : ''));
      text = names.filter(Boolean).join(', ');
    } else text = value;
    return `${f.label}: ${text}`;
  };
  for (const [key, value] of Object.entries(s.customFieldsData)) {
    const line = render(key, value);
    if (line) lines.push(line);
  }
  for (const teamId of s.teamIds) {
    for (const [key, value] of Object.entries(s.teamCustomFieldsData[teamId] ?? {})) {
      if (key in s.customFieldsData) continue;
      const line = render(key, value);
      if (line) lines.push(line);
    }
  }
  return lines;
}

export function renderIcs(
  st: SandboxState,
  sessions: readonly SSession[],
  includeCustomFields: boolean,
): string {
  const now = st.now();
  const out: string[] = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Extracurricular Data Service//Sandbox//EN',
    'CALSCALE:GREGORIAN',
    `X-WR-CALNAME:${escapeText(st.school.organisation.name)}`,
    `X-WR-TIMEZONE:${st.school.timeZone}`,
  ];
  for (const s of sessions) {
    const loc = s.locationId === null ? undefined : st.locations.get(s.locationId);
    const description: string[] = [];
    if (s.studentParentNotes) description.push(s.studentParentNotes);
    if (s.scored && s.result)
      description.push(`Result: ${s.result} ${s.organisationScore ?? ''}-${s.opponentScore ?? ''}`);
    if (includeCustomFields) description.push(...customFieldLines(st, s));
    out.push('BEGIN:VEVENT');
    out.push(`UID:session-${s.id}@sandbox.extracurricular.invalid`);
    out.push(`DTSTAMP:${stamp(now)}`);
    out.push(`DTSTART:${stamp(s.start)}`);
    out.push(`DTEND:${stamp(s.end)}`);
    out.push(`LAST-MODIFIED:${stamp(s.updatedAt)}`);
    out.push(`SUMMARY:${escapeText(s.title)}`);
    if (description.length > 0) out.push(`DESCRIPTION:${escapeText(description.join('\n'))}`);
    if (loc) {
      out.push(`LOCATION:${escapeText(loc.address ? `${loc.name}, ${loc.address}` : loc.name)}`);
      if (loc.latitude !== null && loc.longitude !== null) out.push(`GEO:${loc.latitude};${loc.longitude}`);
    }
    out.push(`STATUS:${s.cancelled ? 'CANCELLED' : s.status === 'confirmed' ? 'CONFIRMED' : 'TENTATIVE'}`);
    out.push('END:VEVENT');
  }
  out.push('END:VCALENDAR');
  return `${out.map(fold).join('\r\n')}\r\n`;
}
