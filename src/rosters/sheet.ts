// What a roster says, independent of how it is drawn: header facts, columns and one row per student, in order.
import { roundValue, type SessionDecision, sessionTimeRange, whyOut } from '../calendar/index.ts';
import type { CustomFieldMeta, Id, PreExplainedAbsence, Session, Team, TeamMember } from '../domain/types.ts';
import { ACTION_MARK, conditionLines, MEDICAL_MARK } from './medical.ts';
import {
  type ColumnField,
  columnDefaults,
  type HeaderFact,
  type RosterTemplate,
  type SortKey,
} from './template.ts';

export interface RosterSchool {
  id: string;
  name: string;
  timeZone: string;
}

/** Everything a roster is made from, read from the store. */
export interface RosterData {
  school: RosterSchool;
  team: Team;
  session: Session | null;
  /**
   * What calendar/ decided the session is, as every output says it: its title as the feeds word it ("Cancelled:
   * U15 Football vs St Mary's (home)"), its times on the school's clock, cancelled and why. Default: the raw title.
   */
  decision?: SessionDecision | null;
  /** Absences that overlap the session, per student (empty without a session). */
  absences: Map<Id, PreExplainedAbsence[]>;
  customFields: CustomFieldMeta[];
  /** Address of the session's location when the session itself does not carry one. */
  locationAddress?: string | null;
  /**
   * What the team's families are told of the session besides time and place (meet time, uniform, transport), as
   * their calendars say it (calendar/ `familyFacts`); empty without a session.
   */
  toldFamilies?: { label: string; value: string }[];
  generatedAt: Date;
}

export type Cell =
  | { kind: 'text'; text: string; bold?: boolean }
  | { kind: 'tick'; checked: boolean }
  | { kind: 'blank' };

export interface SheetColumn {
  field: ColumnField;
  label: string;
  /** Fixed width in points, or null for a flex column. */
  width: number | null;
  flex: number;
  align: 'left' | 'center' | 'right';
}

export interface SheetRow {
  studentId: Id | null;
  cells: Cell[];
  /** The student is expected to be away (pre-explained absence or marked absent today). */
  marked: boolean;
}

export interface Sheet {
  title: string;
  /** Team name, and the session's date for session sheets: the second heading line. */
  subtitle: string;
  /** A warning across the top of every page (a sheet for a cancelled session), or null. */
  banner: string | null;
  facts: { label: string; value: string }[];
  columns: SheetColumn[];
  rows: SheetRow[];
  footer: string | null;
  /** Smallest text size anywhere on the sheet (0: the renderer's own floor); text wraps rather than go below. */
  minTextSize: number;
  after: RosterTemplate['after'];
  school: RosterSchool;
  generatedAt: Date;
  /** Opponent and our team, for the result block. */
  sides: { ours: string; theirs: string };
  locale: string;
  /** Metadata for the PDF. */
  meta: { title: string; author: string; subject: string; keywords: string };
}

/** Sheets read in an emergency (medical conditions, guardian phones) print nothing smaller than this. */
const SENSITIVE_MIN_SIZE = 9;

function sensitive(template: RosterTemplate): boolean {
  return template.columns.some((c) => c.field === 'medical' || c.field === 'guardianContact');
}

function footerText(template: RosterTemplate, marked: boolean): string | null {
  const legend = template.columns.some((c) => c.field === 'medical')
    ? `${ACTION_MARK} = needs action`
    : marked
      ? `${MEDICAL_MARK} = medical condition (see the medical sheet)`
      : null;
  if (!legend) return template.footer ?? null;
  return template.footer ? `${template.footer} ${legend}` : legend;
}

export interface SheetOptions {
  /**
   * Whoever receives the sheet may see sensitive rosters (their role, and a school that keeps medical data): only
   * then does a template's `medicalMarker` mark the students with a medical condition. Default false.
   */
  mayShowMedical?: boolean;
}

/** The column the medical mark goes beside: the first that names the student. */
const NAME_FIELDS: ReadonlySet<ColumnField> = new Set([
  'preferredName',
  'legalName',
  'lastName',
  'firstName',
]);

const centred: ReadonlySet<ColumnField> = new Set([
  'number',
  'jersey',
  'captain',
  'boarder',
  'present',
  'absent',
]);

function fullName(first: string, last: string): string {
  return [first, last].filter((s) => s?.trim()).join(' ');
}

type DateFormats = {
  day: Intl.DateTimeFormat;
  time: Intl.DateTimeFormat;
  ymd: Intl.DateTimeFormat;
};
// Intl formatters are costly to build (about a millisecond each): one set per locale and zone per process.
const formats = new Map<string, DateFormats>();

function dateFmt(locale: string, timeZone: string): DateFormats {
  const key = `${locale}|${timeZone}`;
  let f = formats.get(key);
  if (!f) {
    f = makeFormats(locale, timeZone);
    formats.set(key, f);
  }
  return f;
}

function makeFormats(locale: string, timeZone: string): DateFormats {
  return {
    day: new Intl.DateTimeFormat(locale, {
      timeZone,
      weekday: 'short',
      day: 'numeric',
      month: 'short',
      year: 'numeric',
    }),
    time: new Intl.DateTimeFormat(locale, { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }),
    ymd: new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }),
  };
}

/** When the sheet was made, in the school's time zone: "22 Nov 2026, 09:30 (Australia/Sydney)". */
const generatedFormats = new Map<string, Intl.DateTimeFormat>();

export function generatedLabel(at: Date, timeZone: string, locale: string): string {
  const key = `${locale}|${timeZone}`;
  const f = generatedFormats.get(key) ?? makeGeneratedFormat(locale, timeZone);
  generatedFormats.set(key, f);
  return `${f.format(at)} (${timeZone})`;
}

function makeGeneratedFormat(locale: string, timeZone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat(locale, {
    timeZone,
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
}

/** The custom field holding the meeting time: a `time` field whose label or key speaks of meeting or departing. */
export function meetingTimeField(fields: CustomFieldMeta[]): CustomFieldMeta | null {
  const times = fields.filter((f) => f.dataType === 'time' && f.showToUserTypes.includes('staff'));
  const re = /meet|assembl|depart|arriv|gather|bus|report/i;
  return times.find((f) => re.test(f.label) || re.test(f.key)) ?? null;
}

function customValue(data: RosterData, key: string): string | Id[] | null {
  const s = data.session;
  if (!s) return null;
  const teamEntry = s.teams.find((t) => t.id === data.team.id);
  const v = teamEntry?.customFieldsData[key] ?? s.customFieldsData[key];
  if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0)) return null;
  return v;
}

function resolvePeople(data: RosterData, ids: Id[], dataType: CustomFieldMeta['dataType']): string {
  return ids
    .map((id) => {
      if (dataType === 'staff') {
        const p = data.team.staff.find((x) => x.id === id) ?? data.session?.staff.find((x) => x.id === id);
        return p ? fullName(p.firstName, p.lastName) : `#${id}`;
      }
      const m = data.team.students.find((x) => x.studentId === id);
      return m ? fullName(m.firstName, m.lastName) : `#${id}`;
    })
    .join(', ');
}

function factValue(fact: HeaderFact, data: RosterData, f: DateFormats): string | null {
  const { team, session } = data;
  switch (fact) {
    case 'school':
      return data.school.name;
    case 'activity':
      return team.activity.name;
    case 'team':
      return team.name;
    case 'category':
      return [team.category?.name, team.subcategory?.name].filter(Boolean).join(' · ') || null;
    case 'coaches': {
      const staff = session && session.staff.length > 0 ? session.staff : team.staff;
      return staff.map((s) => fullName(s.firstName, s.lastName)).join(', ') || null;
    }
    case 'players':
      return String(team.students.length);
    case 'session':
      return (session && (data.decision?.title ?? session.title)) || null;
    case 'date':
      return session ? f.day.format(new Date(session.start)) : null;
    case 'time':
      return session
        ? (data.decision?.time ?? sessionTimeRange(session.start, session.end, data.school.timeZone))
        : null;
    case 'location': {
      const loc = session?.location;
      if (!loc) return null;
      const owner = loc.owner?.name && loc.owner.name !== loc.name ? ` (${loc.owner.name})` : '';
      return `${loc.name}${owner}`;
    }
    case 'address':
      return session?.location?.address || data.locationAddress || null;
    case 'opponent':
      if (!session) return null;
      if (session.bye) return 'Bye';
      return session.opponent || null;
    case 'meetingTime': {
      const field = meetingTimeField(data.customFields);
      const v = field ? customValue(data, field.key) : null;
      // Left blank for the coach to fill in when the service has no meeting time.
      return typeof v === 'string' ? v : '__________';
    }
    case 'round':
      return session?.roundName?.trim() ? roundValue(session.roundName) : null;
    case 'toldFamilies':
      // Several lines, one per fact: facts() spreads them.
      return null;
  }
}

const factLabels: Record<HeaderFact, string> = {
  school: 'School',
  activity: 'Activity',
  team: 'Team',
  category: 'Category',
  coaches: 'Coaches',
  players: 'Students',
  session: 'Session',
  date: 'Date',
  time: 'Time',
  location: 'Venue',
  address: 'Address',
  opponent: 'Opponent',
  meetingTime: 'Meeting time',
  toldFamilies: 'Families told',
  round: 'Round',
};

function facts(template: RosterTemplate, data: RosterData, f: DateFormats) {
  const out: { label: string; value: string }[] = [];
  const told = template.header.includes('toldFamilies') ? (data.toldFamilies ?? []) : [];
  // The families' meet time, where they are told one, is the sheet's: not a second, blank line to fill in.
  const meetLabel = meetingTimeField(data.customFields)?.label;
  const toldMeet = told.some((t) => t.label === meetLabel);
  for (const item of template.header) {
    if (item === 'toldFamilies') {
      out.push(...told);
      continue;
    }
    if (item === 'meetingTime' && toldMeet) continue;
    if (typeof item === 'string') {
      const value = factValue(item, data, f);
      if (value) out.push({ label: factLabels[item], value });
      continue;
    }
    const meta = data.customFields.find((m) => m.key === item.customField);
    // Rosters are for staff: a field the service hides from staff stays hidden here too.
    if (meta && !meta.showToUserTypes.includes('staff')) continue;
    const v = customValue(data, item.customField);
    if (v === null) continue;
    const value = Array.isArray(v) ? resolvePeople(data, v, meta?.dataType ?? 'student') : v;
    out.push({ label: item.label ?? meta?.label ?? item.customField, value });
  }
  return out;
}

function compareJersey(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null || a === '') return 1;
  if (b === null || b === '') return -1;
  const na = Number(a);
  const nb = Number(b);
  const aNum = Number.isFinite(na);
  const bNum = Number.isFinite(nb);
  if (aNum && bNum) return na - nb;
  if (aNum) return -1;
  if (bNum) return 1;
  return a < b ? -1 : 1;
}

function sorter(keys: SortKey[], team: Team, locale: string) {
  const collator = new Intl.Collator(locale, { sensitivity: 'base', numeric: true });
  const positionIndex = new Map(team.positions.map((p, i) => [p.id, i]));
  const nullsLast = (a: number | null | undefined, b: number | null | undefined) =>
    (a ?? Number.POSITIVE_INFINITY) - (b ?? Number.POSITIVE_INFINITY) || 0;
  const by: Record<SortKey, (a: TeamMember, b: TeamMember) => number> = {
    teamOrder: (a, b) => nullsLast(a.sortOrder, b.sortOrder),
    jersey: (a, b) => compareJersey(a.jerseyNumber, b.jerseyNumber),
    lastName: (a, b) => collator.compare(a.lastName, b.lastName),
    firstName: (a, b) => collator.compare(a.firstName, b.firstName),
    yearGroup: (a, b) => collator.compare(a.yearGroup?.name ?? '\uffff', b.yearGroup?.name ?? '\uffff'),
    position: (a, b) =>
      nullsLast(
        a.positionId === null ? null : positionIndex.get(a.positionId),
        b.positionId === null ? null : positionIndex.get(b.positionId),
      ),
    captainFirst: (a, b) => Number(b.captain) - Number(a.captain),
  };
  return (a: TeamMember, b: TeamMember) => {
    for (const k of keys) {
      const c = by[k](a, b);
      if (c !== 0 && !Number.isNaN(c)) return c;
    }
    return a.studentId - b.studentId;
  };
}

function unreachable(value: never): never {
  throw new Error(`unhandled roster column ${String(value)}`);
}

/** A roster's columns: the template's, with each field's default label, width and alignment. */
function sheetColumns(template: RosterTemplate): SheetColumn[] {
  return template.columns.map((c) => {
    const d = columnDefaults[c.field];
    const width = c.width ?? (c.flex !== undefined ? null : (d.width ?? null));
    return {
      field: c.field,
      label: c.label ?? d.label,
      width,
      flex: width === null ? (c.flex ?? d.flex ?? 1) : 0,
      align: c.align ?? (centred.has(c.field) ? 'center' : 'left'),
    };
  });
}

/** One student's cell in one column. `i`: the row's place on the sheet. */
function memberCell(
  field: SheetColumn['field'],
  row: { m: TeamMember; i: number; absence: string; marked: boolean; positions: Map<Id, string> },
): Cell {
  const { m, i, absence, marked, positions } = row;
  switch (field) {
    case 'number':
      return { kind: 'text', text: String(i + 1) };
    case 'jersey':
      return { kind: 'text', text: m.jerseyNumber ?? '', bold: true };
    case 'preferredName':
      return { kind: 'text', text: fullName(m.firstName, m.lastName) };
    case 'legalName':
      return { kind: 'text', text: fullName(m.legalFirstName ?? m.firstName, m.lastName) };
    case 'firstName':
      return { kind: 'text', text: m.firstName };
    case 'lastName':
      return { kind: 'text', text: m.lastName };
    case 'yearGroup':
      return { kind: 'text', text: m.yearGroup?.name ?? '' };
    case 'position':
      return { kind: 'text', text: m.positionId === null ? '' : (positions.get(m.positionId) ?? '') };
    case 'captain':
      return { kind: 'text', text: m.captain ? 'Captain' : '', bold: true };
    case 'boarder':
      return { kind: 'text', text: m.boarder ? 'Boarder' : '' };
    case 'studentId':
      return { kind: 'text', text: m.smsId ?? '' };
    case 'absence':
      return { kind: 'text', text: absence };
    case 'present':
      return { kind: 'tick', checked: false };
    case 'absent':
      return { kind: 'tick', checked: marked };
    case 'signature':
    case 'notes':
      return { kind: 'blank' };
    case 'medical':
      return { kind: 'text', text: conditionLines(m.medicalConditions).join('\n') };
    case 'guardianContact':
      // A phone number alone on its line: read and dialled at a glance, never wrapped mid-number.
      return {
        kind: 'text',
        text: m.guardians
          .flatMap((g) => [
            [g.name, g.relationship ? `(${g.relationship})` : ''].filter(Boolean).join(' '),
            g.phone ?? '',
            g.email ?? '',
          ])
          .filter(Boolean)
          .join('\n'),
      };
    default:
      return unreachable(field);
  }
}

/** A row left blank for a name written by hand, numbered `n`, its ticks unticked. */
function blankRow(columns: SheetColumn[], n: number): SheetRow {
  return {
    studentId: null,
    marked: false,
    cells: columns.map((c): Cell => {
      if (c.field === 'number') return { kind: 'text', text: String(n) };
      if (c.field === 'present' || c.field === 'absent') return { kind: 'tick', checked: false };
      return { kind: 'blank' };
    }),
  };
}

/** Builds the sheet a template describes from the roster data. */
export function buildSheet(template: RosterTemplate, data: RosterData, opts: SheetOptions = {}): Sheet {
  const { team, session, school } = data;
  const markMedical = template.medicalMarker && opts.mayShowMedical === true;
  const f = dateFmt(template.locale, school.timeZone);
  const positions = new Map(team.positions.map((p) => [p.id, p.name]));
  // The service's "absent today" is as of the pull: it only speaks for a session on the day the sheet is made.
  const sessionIsToday =
    session !== null && f.ymd.format(new Date(session.start)) === f.ymd.format(data.generatedAt);
  const time = (iso: string) => f.time.format(new Date(iso));

  const columns = sheetColumns(template);

  const markColumn = markMedical ? columns.findIndex((c) => NAME_FIELDS.has(c.field)) : -1;
  let anyMarked = false;
  const members = team.students.slice().sort(sorter(template.sort, team, template.locale));
  const rows: SheetRow[] = members.map((m, i) => {
    const absence = session
      ? whyOut(m, data.absences.get(m.studentId) ?? [], session, { sessionIsToday, time })
      : '';
    const marked = absence !== '';
    const cells = columns.map((c) => memberCell(c.field, { m, i, absence, marked, positions }));
    const markCell = cells[markColumn];
    if (markCell?.kind === 'text' && m.medicalConditions.length > 0) {
      markCell.text = `${markCell.text} ${MEDICAL_MARK}`;
      anyMarked = true;
    }
    return { studentId: m.studentId, cells, marked };
  });
  for (let b = 0; b < template.blankRows; b++) rows.push(blankRow(columns, members.length + b + 1));

  const when = session ? f.day.format(new Date(session.start)) : '';
  const label = session ? data.decision?.title || session.title : '';
  const cancelled = data.decision?.cancelled ?? session?.cancelled ?? false;
  const reason = data.decision?.cancellationReason;
  const subtitle = session
    ? `${label.toLocaleLowerCase().includes(team.name.toLocaleLowerCase()) ? '' : `${team.name} · `}${label || team.activity.name} · ${when}`
    : `${team.name} · ${team.activity.name}`;
  const ours = team.name;
  const theirs = session?.opponent || 'Opponent';
  return {
    title: template.title,
    subtitle,
    banner: cancelled ? `CANCELLED: this session has been cancelled.${reason ? ` ${reason}` : ''}` : null,
    facts: facts(template, data, f),
    columns,
    rows,
    footer: footerText(template, anyMarked),
    minTextSize: sensitive(template) ? SENSITIVE_MIN_SIZE : 0,
    after: template.after,
    school,
    generatedAt: data.generatedAt,
    sides: { ours, theirs },
    locale: template.locale,
    meta: {
      title: `${cancelled ? 'CANCELLED: ' : ''}${template.title}: ${team.name}${session ? ` (${when})` : ''}`,
      author: school.name,
      subject: [team.activity.name, team.name, session ? label : null].filter(Boolean).join(' · '),
      keywords: ['roster', template.name].join(', '),
    },
  };
}
