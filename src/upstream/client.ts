// The upstream client: every endpoint of the Extracurricular Data Service, typed with the spec's own parameter
// names, returning clean domain records. Transport concerns (auth, pacing, backoff, typed errors, stats) live in
// http.ts; validation in schemas.ts; shaping in normalise.ts; paging in paging.ts.
import { setTimeout as delay } from 'node:timers/promises';
import type { z } from 'zod';
import type { Id, PreExplainedAbsence } from '../domain/types.ts';
import { type RateLimit, RateLimiter } from '../util/rate-limiter.ts';
import type {
  AbsenceWrite,
  MalformedRecord,
  SessionListParams,
  SessionPatch,
  SessionWrite,
  UpstreamClient,
  UpstreamClientOptions,
  UserWriteResult,
} from './api.ts';
import { InvalidResponseError } from './errors.ts';
import { createTransport, DEFAULT_BACKOFF } from './http.ts';
import { toInstant, toWireDateTime } from './instant.ts';
import {
  indexCustomFields,
  issueReason,
  normaliseAbsence,
  normaliseActivity,
  normaliseActivitySelection,
  normaliseAttendanceRecord,
  normaliseDepartment,
  normaliseIncident,
  normaliseLocation,
  normaliseSession,
  normaliseStudent,
  normaliseStudentTeam,
  normaliseTeam,
  normaliseUser,
  normaliseUserWriteResult,
  normaliseYearGroup,
} from './normalise.ts';
import {
  type ListEndpoint,
  PAGES_AHEAD,
  paginate,
  parseRecord,
  type RecordContext,
  readCustomFieldsMetadata,
} from './paging.ts';
import { encodeQuery, type QueryValue } from './query.ts';
import {
  zAbsence,
  zActivity,
  zActivitySelection,
  zAttendanceRecord,
  zCreatedSessions,
  zDataArrayResponse,
  zDepartment,
  zIncident,
  zLocation,
  zSession,
  zSingleEnvelope,
  zStudent,
  zStudentTeam,
  zTeam,
  zUser,
  zUsersResponse,
  zUserWriteResult,
  zYearGroup,
} from './schemas.ts';
import { StatsRecorder } from './stats.ts';

const NO_CONTEXT: RecordContext = { customFields: null };

/** Each school's sync, unless its settings say otherwise: 20 request starts a second, 4 in flight. */
const DEFAULT_RATE_LIMIT: RateLimit = { requestsPerSecond: 20, concurrency: 4 };

const list = <S extends z.ZodType, T>(
  path: string,
  pageLength: number,
  schema: S,
  normalise: (raw: z.output<S>, ctx: RecordContext) => T,
): ListEndpoint<S, T> => ({ path, pageLength, schema, normalise });

/**
 * Sessions per page: a quarter of the spec's maximum (1,000). With teams and staff included a district's page of
 * 1,000 is ~3 MB, and its JSON.parse alone held serve's event loop for 33-40 ms (with the body's decoding and the
 * garbage it makes, 60-95 ms: bench:feeds); 250 keep each page's parse near 10 ms. An unchanged incremental pull
 * still reads one page.
 */
export const SESSIONS_PAGE_LENGTH = 250;

/** Page lengths: the spec's Limits table's maxima (the client asks for the most), but for sessions. */
export const ENDPOINTS = {
  sessions: list('/sessions', SESSIONS_PAGE_LENGTH, zSession, (r, ctx) =>
    normaliseSession(r, ctx.customFields),
  ),
  teams: list('/teams', 50, zTeam, normaliseTeam),
  studentTeams: list('/student-teams', 300, zStudentTeam, normaliseStudentTeam),
  attendanceRecords: list('/attendance-records', 300, zAttendanceRecord, normaliseAttendanceRecord),
  users: list('/users', 200, zUser, normaliseUser),
  incidents: list('/incidents', 200, zIncident, normaliseIncident),
  locations: list('/locations', 200, zLocation, normaliseLocation),
  departments: list('/departments', 200, zDepartment, normaliseDepartment),
  yearGroups: list('/year-groups', 200, zYearGroup, normaliseYearGroup),
  activities: list('/activities', 200, zActivity, normaliseActivity),
  activitySelections: list('/activity-selections', 200, zActivitySelection, normaliseActivitySelection),
  preExplainedAbsences: list('/pre-explained-absences', 200, zAbsence, normaliseAbsence),
} as const;

export const STUDENTS_MAX_PAGE_LENGTH = 200;

export function createUpstreamClient(opts: UpstreamClientOptions): UpstreamClient {
  const { transport, stats } = openTransport(opts);
  const onMalformed = opts.onMalformed ?? (() => {});
  const pagesAhead = opts.pagesAhead ?? PAGES_AHEAD;
  if (!(Number.isSafeInteger(pagesAhead) && pagesAhead >= 0)) {
    throw new RangeError('upstream client option "pagesAhead" must be a whole number ≥ 0');
  }
  const calls = clientCalls(transport, onMalformed, pagesAhead);
  return {
    ...listings(calls),
    ...singleReads(calls, transport),
    ...sessionWrites(calls),
    ...userWrites(calls),
    ...absenceWrites(calls),
    beginRun: () => transport.beginRun(),
    stats: () => stats.snapshot(),
    totals: () => stats.totals(),
  };
}

type Transport = ReturnType<typeof createTransport>;

/** The options checked, and the transport (auth, pacing, backoff, typed errors, stats) they describe. */
function openTransport(opts: UpstreamClientOptions): { transport: Transport; stats: StatsRecorder } {
  const baseUrl = checkBaseUrl(opts.baseUrl);
  if (typeof opts.token !== 'string' || opts.token.trim() === '') {
    throw new TypeError('upstream client option "token" must be a non-empty string');
  }
  const sleep = opts.sleep ?? ((ms: number) => delay(ms));
  const now = opts.now ?? Date.now;
  const stats = new StatsRecorder();
  const backoff = { ...DEFAULT_BACKOFF, ...definedOnly(opts.backoff ?? {}) };
  for (const key of ['baseMs', 'capMs', 'maxRetries', 'maxRetryAfterMs'] as const) {
    if (!(Number.isFinite(backoff[key]) && backoff[key] >= 0)) {
      throw new RangeError(`upstream client option "backoff.${key}" must be a number ≥ 0`);
    }
  }
  const timeoutMs = opts.timeoutMs ?? 30_000;
  if (!(timeoutMs > 0)) throw new RangeError('upstream client option "timeoutMs" must be > 0');
  const limiter = new RateLimiter(opts.rateLimit ?? DEFAULT_RATE_LIMIT, now, sleep);
  const transport = createTransport({
    baseUrl,
    token: opts.token,
    timeoutMs,
    backoff,
    limiter,
    stats,
    sleep,
    now,
    onRetry: opts.onRetry,
    userAgent: opts.userAgent ?? 'rostercal',
    ...(opts.outage ? { outage: opts.outage } : {}),
  });
  return { transport, stats };
}

/** What every endpoint is made of: paged reads, single reads, checked bodies and writes. */
function clientCalls(transport: Transport, onMalformed: (m: MalformedRecord) => void, pagesAhead: number) {
  const pages = <S extends z.ZodType, T>(ep: ListEndpoint<S, T>, params: object | undefined) =>
    paginate(transport, ep, asQuery(params), onMalformed, pagesAhead);

  const expect = <S extends z.ZodType>(schema: S, body: unknown, endpoint: string): z.output<S> => {
    const parsed = schema.safeParse(body);
    if (!parsed.success) throw new InvalidResponseError(endpoint, 200, issueReason(parsed.error.issues));
    return parsed.data;
  };

  /** A single-record read (`GET /sessions/{id}`, `GET /teams/{id}`): its envelope, checked. */
  const single = async (endpoint: string, path: string, params: object | undefined) => {
    const body = await transport.json({
      method: 'GET',
      endpoint,
      path,
      query: encodeQuery(asQuery(params)),
      read: true,
    });
    return expect(zSingleEnvelope, body, `GET ${path}`);
  };

  /** Write responses that carry records: each parsed on its own, the unreadable reported. */
  const writeRecords = <S extends z.ZodType, T>(
    items: unknown[],
    schema: S,
    normalise: (raw: z.output<S>, ctx: RecordContext) => T,
    endpoint: string,
  ): T[] => {
    const out: T[] = [];
    for (const raw of items) {
      const r = parseRecord(raw, schema, normalise, NO_CONTEXT, endpoint, onMalformed);
      if (r !== undefined) out.push(r);
    }
    return out;
  };

  const write = (method: 'POST' | 'PATCH' | 'DELETE', path: string, body: unknown) =>
    transport.json({ method, endpoint: `${method} ${path}`, path, query: '', body, read: false });

  return { onMalformed, pages, expect, single, writeRecords, write };
}

type Calls = ReturnType<typeof clientCalls>;

type ListingName =
  | 'sessions'
  | 'teams'
  | 'students'
  | 'studentTeams'
  | 'attendanceRecords'
  | 'users'
  | 'incidents'
  | 'locations'
  | 'departments'
  | 'yearGroups'
  | 'activities'
  | 'activitySelections'
  | 'preExplainedAbsences';

function listings({ pages }: Calls): Pick<UpstreamClient, ListingName> {
  return {
    sessions: (params?: SessionListParams) => pages(ENDPOINTS.sessions, params),
    teams: (params) => pages(ENDPOINTS.teams, params),
    students: (params) => {
      // `current` defaults to true upstream; the records themselves do not say which list they came from.
      const current = params?.current ?? true;
      return pages(
        list('/students', STUDENTS_MAX_PAGE_LENGTH, zStudent, (r) => normaliseStudent(r, current)),
        params,
      );
    },
    studentTeams: (params) => pages(ENDPOINTS.studentTeams, params),
    attendanceRecords: (params) => pages(ENDPOINTS.attendanceRecords, params),
    users: (params) => pages(ENDPOINTS.users, params),
    incidents: (params) => pages(ENDPOINTS.incidents, params),
    locations: (params) => pages(ENDPOINTS.locations, params),
    departments: (params) => pages(ENDPOINTS.departments, params),
    yearGroups: (params) => pages(ENDPOINTS.yearGroups, params),
    activities: (params) => pages(ENDPOINTS.activities, params),
    activitySelections: (params) => pages(ENDPOINTS.activitySelections, params),
    preExplainedAbsences: (params) => pages(ENDPOINTS.preExplainedAbsences, params),
  };
}

function singleReads(
  { single, onMalformed }: Calls,
  transport: Transport,
): Pick<UpstreamClient, 'session' | 'team' | 'sessionsIcs'> {
  return {
    async session(id, params) {
      const endpoint = 'GET /sessions/{id}';
      const path = `/sessions/${checkId(id, 'id')}`;
      const envelope = await single(endpoint, path, params);
      const fields = readCustomFieldsMetadata(envelope.customFieldsMetadata, endpoint, onMalformed);
      let reason = 'record cannot be read';
      const session = parseRecord(
        envelope.data,
        zSession,
        (r, ctx) => normaliseSession(r, ctx.customFields),
        { customFields: indexCustomFields(fields) },
        endpoint,
        (m: MalformedRecord) => {
          reason = m.reason;
          onMalformed(m);
        },
      );
      if (session === undefined) throw new InvalidResponseError(`GET ${path}`, 200, reason);
      return fields === undefined ? { session } : { session, customFieldsMetadata: fields };
    },

    async team(id, params) {
      const endpoint = 'GET /teams/{id}';
      const path = `/teams/${checkId(id, 'id')}`;
      const envelope = await single(endpoint, path, params);
      let reason = 'record cannot be read';
      const team = parseRecord(envelope.data, zTeam, normaliseTeam, NO_CONTEXT, endpoint, (m) => {
        reason = m.reason;
        onMalformed(m);
      });
      if (team === undefined) throw new InvalidResponseError(`GET ${path}`, 200, reason);
      return team;
    },

    sessionsIcs(params) {
      return transport.text({
        method: 'GET',
        endpoint: 'GET /sessions?format=ics',
        path: '/sessions',
        query: encodeQuery({ ...asQuery(params), format: 'ics' }),
        read: true,
      });
    },
  };
}

function sessionWrites({
  expect,
  write,
}: Calls): Pick<UpstreamClient, 'createSessions' | 'updateSessions' | 'deleteSessions'> {
  return {
    async createSessions(body) {
      const sent = { ...body, sessions: body.sessions.map((s, i) => sessionWire(s, `sessions[${i}]`)) };
      const res = expect(zCreatedSessions, await write('POST', '/sessions', sent), 'POST /sessions');
      return res.createdSessions.map((c) =>
        c.locationId == null ? { id: c.id } : { id: c.id, locationId: c.locationId },
      );
    },
    async updateSessions(body) {
      const sent = { ...body, sessions: body.sessions.map((s, i) => sessionWire(s, `sessions[${i}]`)) };
      await write('PATCH', '/sessions', sent);
    },
    async deleteSessions(body) {
      await write('DELETE', '/sessions', body);
    },
  };
}

function userWrites({
  expect,
  write,
  writeRecords,
}: Calls): Pick<UpstreamClient, 'createUsers' | 'updateUsers'> {
  return {
    async createUsers(body): Promise<UserWriteResult[]> {
      const res = expect(zUsersResponse, await write('POST', '/users', body), 'POST /users');
      return writeRecords(res.users, zUserWriteResult, normaliseUserWriteResult, 'POST /users');
    },
    async updateUsers(body): Promise<UserWriteResult[]> {
      const res = expect(zUsersResponse, await write('PATCH', '/users', body), 'PATCH /users');
      return writeRecords(res.users, zUserWriteResult, normaliseUserWriteResult, 'PATCH /users');
    },
  };
}

function absenceWrites({
  expect,
  write,
  writeRecords,
}: Calls): Pick<UpstreamClient, 'createAbsences' | 'updateAbsences' | 'deleteAbsences'> {
  const send = async (method: 'POST' | 'PATCH', absences: AbsenceWrite[]): Promise<PreExplainedAbsence[]> => {
    const endpoint = `${method} /pre-explained-absences`;
    const sent = {
      preExplainedAbsences: absences.map((a, i) => absenceWire(a, `preExplainedAbsences[${i}]`)),
    };
    const res = expect(zDataArrayResponse, await write(method, '/pre-explained-absences', sent), endpoint);
    return writeRecords(res.data, zAbsence, normaliseAbsence, endpoint);
  };
  return {
    createAbsences: (absences) => send('POST', absences),
    updateAbsences: (absences) => send('PATCH', absences),
    async deleteAbsences(ids) {
      await write('DELETE', '/pre-explained-absences', { ids });
    },
  };
}

function checkBaseUrl(value: unknown): string {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new TypeError('upstream client option "baseUrl" must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError('upstream client option "baseUrl" must be an absolute http(s) URL');
  }
  if (url.search !== '' || url.hash !== '') {
    throw new TypeError('upstream client option "baseUrl" must not carry a query or fragment');
  }
  return url.href.replace(/\/+$/, '');
}

function checkId(id: Id, field: string): string {
  if (!Number.isSafeInteger(id) || id < 0) throw new TypeError(`${field} must be a non-negative integer`);
  return String(id);
}

// The parameter interfaces hold only query-compatible values (numbers, strings, booleans, arrays of them); an
// interface has no index signature, hence the widening cast.
function asQuery(params: object | undefined): Record<string, QueryValue> {
  return (params ?? {}) as Record<string, QueryValue>;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Session writes carry UTC date-times in the `YYYY-MM-DD HH:mm:ss` form of the spec's examples. */
function sessionWire<T extends SessionWrite | SessionPatch>(s: T, field: string): T {
  const out = { ...s };
  if (s.startDateTime !== undefined)
    out.startDateTime = toWireDateTime(s.startDateTime, `${field}.startDateTime`);
  if (s.endDateTime !== undefined) out.endDateTime = toWireDateTime(s.endDateTime, `${field}.endDateTime`);
  return out;
}

/** Absence dates go out as ISO 8601 UTC instants, the convention for timestamps sent to the service. */
function absenceWire<T extends AbsenceWrite>(a: T, field: string): T {
  const startDate = toInstant(a.startDate);
  const endDate = toInstant(a.endDate);
  if (startDate === null) throw new TypeError(`${field}.startDate is not an ISO 8601 date-time`);
  if (endDate === null) throw new TypeError(`${field}.endDate is not an ISO 8601 date-time`);
  return { ...a, startDate, endDate };
}
