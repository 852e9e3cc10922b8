// One event of a rendered feed as a calendar of its own: what a parent downloads to add a single session to their
// calendar. Cut from the feed's bytes, not rendered again, so the event is the feed's to the byte (the same UID,
// SEQUENCE and text, made by the same projection) and can never say more than the feed does. The calendar keeps
// only what an import needs (VERSION, PRODID, CALSCALE, the zone and its VTIMEZONE): a subscription's name,
// colour and refresh interval would make some apps offer a new calendar instead of adding the event.

const KEPT = /^(VERSION|PRODID|CALSCALE|X-WR-TIMEZONE)[:;]/;

/** Content lines with their folded continuations joined back to the line they continue (kept verbatim). */
function contentLines(ics: string): string[] {
  const lines: string[] = [];
  for (const line of ics.replace(/\r\n$/, '').split('\r\n')) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && lines.length)
      lines[lines.length - 1] += `\r\n${line}`;
    else lines.push(line);
  }
  return lines;
}

/** The value of a (possibly folded) content line, unfolded. */
function lineValue(line: string): string {
  const unfolded = line.replace(/\r\n[ \t]/g, '');
  return unfolded.slice(unfolded.indexOf(':') + 1);
}

/** The calendar holding only the event with this UID, or null when the feed has no such event. */
export function singleEventIcs(ics: string, uid: string): string | null {
  const lines = contentLines(ics);
  if (lines[0] !== 'BEGIN:VCALENDAR' || lines[lines.length - 1] !== 'END:VCALENDAR') return null;
  const head: string[] = [];
  const zones: string[] = [];
  let event: string[] | null = null;
  let component: string[] | null = null;
  let depth = 0;
  for (const line of lines.slice(1, -1)) {
    if (depth === 0 && !line.startsWith('BEGIN:')) {
      if (KEPT.test(line)) head.push(line);
      continue;
    }
    if (depth === 0) component = [];
    component?.push(line);
    if (line.startsWith('BEGIN:')) depth++;
    else if (line.startsWith('END:')) depth--;
    if (depth === 0 && component) {
      if (component[0] === 'BEGIN:VTIMEZONE') zones.push(...component);
      else if (
        component[0] === 'BEGIN:VEVENT' &&
        component.some((l) => l.startsWith('UID:') && lineValue(l) === uid)
      )
        event = component;
      component = null;
    }
  }
  if (!event) return null;
  return `${['BEGIN:VCALENDAR', ...head, ...zones, ...event, 'END:VCALENDAR'].join('\r\n')}\r\n`;
}
