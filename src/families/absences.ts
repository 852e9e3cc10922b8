// "Can't make it": a family reports, from its calendar page, that its child will miss a session, and may take it
// back until the session starts. The report is a pre-explained absence written upstream (POST/DELETE
// /pre-explained-absences) for the child and the session's times, its reason marked as the family's
// (domain/family-absence.ts). The upstream's answer is the truth: what it accepted is written to the store at once
// (so the coach's sheet need not wait for the next pull, and an undo is not left standing until the next full
// pull, the only one that sees deletions); what it refused, or never answered, leaves nothing behind.
//
// The spec gives POST no idempotency key, so a retried report (a double tap, a reload, an answer lost on the way
// back) is made harmless here: each (school, child, session) is written under a lock, and the upstream is read
// again under it before anything is created; an absence this page already reported for that child and session
// is the answer.
//
// A feed link becomes, for this one act, a capability to write: only a child's link, or a family link holding that
// child's link (still current), may act for the child; each act is audited under the link's id; acts are limited
// per link and child (counted in the audit log) and per client address (in this process).
import type { SchoolConfig } from '../config.ts';
import { familyReason, familyReportOf, linkIdOf } from '../domain/family-absence.ts';
import type { Id, PreExplainedAbsence } from '../domain/types.ts';
import type { Logger } from '../log.ts';
import { silentLogger } from '../log.ts';
import type { AuditAction, SchoolId, Store, Stored } from '../store/types.ts';
import type { UpstreamClient } from '../upstream/api.ts';
import { ForbiddenError, NotFoundError, UpstreamError } from '../upstream/errors.ts';
import { addressKey } from '../util/address-key.ts';
import { TokenBuckets } from '../util/token-bucket.ts';
import { absenceReporting, recordRefusal } from './absence-state.ts';

const DAY_MS = 86_400_000;

/** A link that may act for children: a child's own feed link, or a family link. */
export interface ReportingLink {
  schoolId: SchoolId;
  kind: 'child' | 'family';
  /** sha256 of the link's token: its first characters name the link (never the token). */
  tokenHash: string;
  /** The children it may act for: a child's link its child; a family link its children whose links still stand. */
  children: { studentId: Id; label: string }[];
  /**
   * The sessions its page lists (as the audience projection shows them): the only ones it may report for, so a
   * post reveals nothing of sessions a family does not see (drafts) and reaches no further than the page.
   */
  shown: ReadonlySet<Id>;
}

export interface ReportedAbsence {
  absenceId: Id;
  studentId: Id;
  label: string;
  /** Reported through this very link: it may undo it (until the session starts). */
  undoable: boolean;
}

/** What a page shows per session it lists: who may still report, and what was reported. */
export interface AbsenceView {
  offers: Map<Id, { studentId: Id; label: string }[]>;
  reported: Map<Id, ReportedAbsence[]>;
}

export type Outcome =
  | {
      ok: true;
      kind: 'reported' | 'already-reported' | 'withdrawn' | 'already-withdrawn';
      sessionId: Id | null;
    }
  | { ok: false; status: number; message: string; retryAfterS?: number };

export interface FamilyAbsencesOptions {
  store: Pick<Store, 'records' | 'access' | 'readOnly'>;
  schools: readonly SchoolConfig[];
  clientFor: (school: SchoolConfig) => UpstreamClient;
  now?: () => Date;
  log?: Logger;
}

/** An act as the audit log names it: the link by its id, the child and what happened. */
export function actorOf(link: Pick<ReportingLink, 'kind' | 'tokenHash'>): string {
  return `${link.kind} link ${linkIdOf(link.tokenHash)}`;
}

const UNREACHABLE =
  'The school\u2019s system could not be reached, so nothing was reported. Try again in a few minutes, or tell the coach directly.';

export class FamilyAbsences {
  readonly #store: Pick<Store, 'records' | 'access' | 'readOnly'>;
  readonly #schools: Map<SchoolId, SchoolConfig>;
  readonly #clientFor: (school: SchoolConfig) => UpstreamClient;
  readonly #now: () => Date;
  readonly #log: Logger;
  readonly #locks = new Map<string, Promise<unknown>>();
  readonly #perAddress = new Map<SchoolId, TokenBuckets>();

  constructor(opts: FamilyAbsencesOptions) {
    this.#store = opts.store;
    this.#schools = new Map(opts.schools.map((s) => [s.id, s]));
    this.#clientFor = opts.clientFor;
    this.#now = opts.now ?? (() => new Date());
    this.#log = (opts.log ?? silentLogger).child({ component: 'family-absences' });
  }

  /** Whether the school's families may report now (its setting, the upstream's last word, a writable store). */
  async available(schoolId: SchoolId): Promise<boolean> {
    const school = this.#schools.get(schoolId);
    return school ? (await absenceReporting(this.#store, school)).on : false;
  }

  /** What the page of this link shows for these sessions; null when it offers nothing (off, or no child). */
  async view(link: ReportingLink, sessionIds: readonly Id[]): Promise<AbsenceView | null> {
    if (!link.children.length || !(await this.available(link.schoolId))) return null;
    const now = this.#now();
    const sessions = await this.#sessionsOf(link, now);
    const reported = await this.#reportedFor(link, now);
    const view: AbsenceView = { offers: new Map(), reported: new Map() };
    const mine = linkIdOf(link.tokenHash);
    for (const id of sessionIds) {
      const offers: { studentId: Id; label: string }[] = [];
      const done: ReportedAbsence[] = [];
      for (const child of link.children) {
        const s = sessions.get(child.studentId)?.get(id);
        if (!s) continue;
        const hit = reported.find((a) => a.studentId === child.studentId && overlaps(a, s));
        if (hit)
          done.push({
            absenceId: hit.id,
            studentId: child.studentId,
            label: child.label,
            undoable: familyReportOf(hit)?.linkId === mine,
          });
        else offers.push(child);
      }
      if (offers.length) view.offers.set(id, offers);
      if (done.length) view.reported.set(id, done);
    }
    return view;
  }

  async report(
    link: ReportingLink,
    ask: { studentId: Id; sessionId: Id; words: string; address: string },
  ): Promise<Outcome> {
    const school = this.#schools.get(link.schoolId);
    const child = link.children.find((c) => c.studentId === ask.studentId);
    if (!school || !(await this.available(school.id)))
      return refuse(403, 'Reporting an absence is not available on this page.');
    if (!child) {
      await this.refused(link, ask.address, `report refused (student ${ask.studentId} is not on this link)`);
      return refuse(403, 'This link cannot report an absence for that child.');
    }
    const now = this.#now();
    const session = link.shown.has(ask.sessionId)
      ? (await this.#sessionsOf(link, now)).get(child.studentId)?.get(ask.sessionId)
      : undefined;
    if (!session) {
      const known = link.shown.has(ask.sessionId)
        ? await this.#store.records.get(school.id, 'sessions', ask.sessionId)
        : null;
      const why =
        known && Date.parse(known.start) <= now.getTime()
          ? 'started'
          : known?.cancelled
            ? 'cancelled'
            : 'not on the page';
      await this.refused(
        link,
        ask.address,
        `student ${child.studentId}: report refused (session ${ask.sessionId} ${why})`,
      );
      if (why === 'started')
        return refuse(409, 'That session has already started: please tell the coach directly.');
      if (why === 'cancelled') return refuse(409, 'That session is cancelled: there is nothing to miss.');
      return refuse(400, `That session is not on ${child.label}\u2019s calendar.`);
    }
    const audit = (action: AuditAction, detail: string) =>
      this.#audit(link, action, ask.address, session, `student ${child.studentId}: ${detail}`);

    const limited = await this.#childLimit(school, child, now);
    if (limited) {
      // A repeat of a report already made (a reload, a double tap) is answered as such, not as one too many.
      const made = (await this.#reportedFor(link, now)).find(
        (a) => a.studentId === child.studentId && overlaps(a, session),
      );
      if (made) {
        await audit('absence-report', `already reported (absence ${made.id})`);
        return { ok: true, kind: 'already-reported', sessionId: session.id };
      }
      await audit('absence-refused', `report refused (${limited.why})`);
      return limited.outcome;
    }
    const wait = this.#addressBuckets(school).take(addressKey(ask.address));
    if (wait > 0) {
      await audit('absence-refused', 'report refused (per-address limit)');
      return tooMany(wait);
    }

    return this.#locked(`${school.id}|${child.studentId}|${session.id}`, async () => {
      const client = this.#clientFor(school);
      try {
        const existing = (await this.#upstreamAbsences(client, child.studentId, session)).find(
          (a) => familyReportOf(a) !== null && overlaps(a, session),
        );
        if (existing) {
          await this.#keep(school.id, existing, now);
          await audit('absence-report', `already reported (absence ${existing.id})`);
          return { ok: true, kind: 'already-reported', sessionId: session.id };
        }
        const [made] = await client.createAbsences([
          {
            studentId: child.studentId,
            startDate: session.start,
            endDate: session.end,
            explained: true,
            reason: familyReason(linkIdOf(link.tokenHash), ask.words),
          },
        ]);
        if (!made) throw new UpstreamError('POST /pre-explained-absences', 200, 'the answer held no absence');
        await this.#keep(school.id, made, now);
        await audit('absence-report', `reported (absence ${made.id})`);
        return { ok: true, kind: 'reported', sessionId: session.id };
      } catch (err) {
        const failed = await this.#failed(school, err, now);
        await audit('absence-report', `failed, nothing recorded: ${failed.why}`);
        return failed.outcome;
      }
    });
  }

  async undo(link: ReportingLink, ask: { absenceId: Id; address: string }): Promise<Outcome> {
    const school = this.#schools.get(link.schoolId);
    if (!school || !(await this.available(school.id)))
      return refuse(403, 'Undoing a reported absence is not available on this page.');
    const stored = await this.#store.records.get(school.id, 'absences', ask.absenceId);
    const child = stored && link.children.find((c) => c.studentId === stored.studentId);
    const mark = stored && familyReportOf(stored);
    // One answer for "no such absence" and "not yours": the page reveals nothing it did not show.
    if (!stored || !child || mark?.linkId !== linkIdOf(link.tokenHash)) {
      await this.refused(
        link,
        ask.address,
        `undo refused (absence ${ask.absenceId} not reported through this link)`,
      );
      return refuse(404, 'That absence was not reported through this page, so it cannot be undone here.');
    }
    const now = this.#now();
    const session = await this.#sessionAt(school.id, child.studentId, stored);
    const audit = (action: AuditAction, detail: string) =>
      this.#audit(
        link,
        action,
        ask.address,
        session,
        `student ${child.studentId}: ${detail} (absence ${stored.id})`,
      );
    if (Date.parse(stored.start) <= now.getTime()) {
      await audit('absence-refused', 'undo refused (the session has started)');
      return refuse(409, 'That session has already started, so the absence stays: please tell the coach.');
    }
    const wait = this.#addressBuckets(school).take(addressKey(ask.address));
    if (wait > 0) {
      await audit('absence-refused', 'undo refused (per-address limit)');
      return tooMany(wait);
    }
    // Gone upstream already (withdrawn elsewhere, or an earlier try whose answer was lost): so it is here too.
    const gone = async (): Promise<Outcome> => {
      await this.#store.records.markDeleted(school.id, 'absences', [stored.id], now.toISOString());
      await audit('absence-undo', 'already withdrawn upstream');
      return { ok: true, kind: 'already-withdrawn', sessionId: session?.id ?? null };
    };
    return this.#locked(`${school.id}|${child.studentId}|${session?.id ?? stored.start}`, async () => {
      const client = this.#clientFor(school);
      try {
        const current = (await this.#upstreamAbsences(client, child.studentId, stored)).find(
          (a) => a.id === stored.id,
        );
        if (!current) return await gone();
        if (familyReportOf(current)?.linkId !== linkIdOf(link.tokenHash)) {
          await audit('absence-refused', 'undo refused (the school has changed the absence)');
          return refuse(409, 'The school has changed this absence since: please ask the school office.');
        }
        await client.deleteAbsences([stored.id]);
        await this.#store.records.markDeleted(school.id, 'absences', [stored.id], now.toISOString());
        await audit('absence-undo', 'withdrawn');
        return { ok: true, kind: 'withdrawn', sessionId: session?.id ?? null };
      } catch (err) {
        if (err instanceof NotFoundError) return await gone();
        const failed = await this.#failed(school, err, now);
        await audit('absence-undo', `failed, nothing changed: ${failed.why}`);
        return failed.outcome;
      }
    });
  }

  /** Per child, their sessions that can still be reported (upcoming, not cancelled), by id. */
  async #sessionsOf(link: ReportingLink, now: Date): Promise<Map<Id, Map<Id, Stored<'sessions'>>>> {
    const out = new Map<Id, Map<Id, Stored<'sessions'>>>();
    const school = this.#schools.get(link.schoolId);
    const days = school?.syncWindow.daysAhead ?? 365;
    for (const child of link.children) {
      const list = await this.#store.records.listSessions(link.schoolId, {
        studentId: child.studentId,
        from: now.toISOString(),
        to: new Date(now.getTime() + days * DAY_MS).toISOString(),
      });
      const byId = new Map<Id, Stored<'sessions'>>();
      for (const s of list)
        if (!s.cancelled && !s.meta.deletedAt && Date.parse(s.start) > now.getTime()) byId.set(s.id, s);
      out.set(child.studentId, byId);
    }
    return out;
  }

  /** The absences rostercal wrote for the link's children that have not begun. */
  async #reportedFor(link: ReportingLink, now: Date): Promise<Stored<'absences'>[]> {
    const list = await this.#store.records.listAbsences(link.schoolId, {
      studentIds: link.children.map((c) => c.studentId),
      from: now.toISOString(),
      to: new Date(now.getTime() + 400 * DAY_MS).toISOString(),
    });
    return list.filter((a) => !a.meta.deletedAt && familyReportOf(a) !== null);
  }

  /** The session an absence rostercal wrote stands for (same child, same times), if the store still has it. */
  async #sessionAt(
    schoolId: SchoolId,
    studentId: Id,
    a: PreExplainedAbsence,
  ): Promise<Stored<'sessions'> | null> {
    const list = await this.#store.records.listSessions(schoolId, { studentId, from: a.start, to: a.end });
    return list.find((s) => s.start === a.start && s.end === a.end) ?? list[0] ?? null;
  }

  async #upstreamAbsences(
    client: UpstreamClient,
    studentId: Id,
    range: { start: string; end: string },
  ): Promise<PreExplainedAbsence[]> {
    const out: PreExplainedAbsence[] = [];
    for await (const page of client.preExplainedAbsences({
      studentIds: [studentId],
      startDateTime: range.start,
      endDateTime: range.end,
    }))
      for (const a of page.records) if (a.studentId === studentId) out.push(a);
    return out;
  }

  /** What the upstream accepted is the store's at once (the next pull would bring the same record). */
  async #keep(schoolId: SchoolId, a: PreExplainedAbsence, now: Date): Promise<void> {
    try {
      await this.#store.records.upsert(schoolId, 'absences', [a], now.toISOString());
    } catch (err) {
      // The upstream holds it: the next pull brings it in; the family's report stands.
      this.#log.error({ err, schoolId }, 'a reported absence could not be stored; the next pull brings it');
    }
  }

  /**
   * At most `reportsPerChildPerDay` absences made for a child in 24 hours, whichever link reported them: a new
   * family link (anyone holding a child's link can make one) starts no fresh allowance, and a repeat that found
   * its absence already made, a refusal or a failed write uses none (counted in the audit log: across replicas).
   */
  async #childLimit(
    school: SchoolConfig,
    child: { studentId: Id; label: string },
    now: Date,
  ): Promise<{ outcome: Outcome; why: string } | null> {
    const max = school.families.reportsPerChildPerDay;
    const recent = await this.#store.access.listAudit({
      action: 'absence-report',
      schoolId: school.id,
      since: new Date(now.getTime() - DAY_MS).toISOString(),
      limit: 10_000,
    });
    const made = `student ${child.studentId}: reported (`;
    const count = recent.filter((r) => r.detail?.startsWith(made)).length;
    if (count < max) return null;
    return {
      why: `per-child limit, ${max} a day`,
      outcome: refuse(
        429,
        `${max} absences have been reported for ${child.label} in the last 24 hours, the most this calendar takes. Please tell the coach or the school office directly.`,
      ),
    };
  }

  #addressBuckets(school: SchoolConfig): TokenBuckets {
    let b = this.#perAddress.get(school.id);
    if (!b) {
      const n = school.families.actsPerAddressPerHour;
      b = new TokenBuckets({ capacity: n, refillPerSecond: n / 3600 });
      this.#perAddress.set(school.id, b);
    }
    return b;
  }

  /** A write the upstream refused or never answered: the family is told, a 403 hides the option everywhere. */
  async #failed(school: SchoolConfig, err: unknown, now: Date): Promise<{ outcome: Outcome; why: string }> {
    if (!(err instanceof UpstreamError)) throw err;
    this.#log.warn({ schoolId: school.id, endpoint: err.endpoint, status: err.status }, err.message);
    if (err instanceof ForbiddenError) {
      await recordRefusal(this.#store, school.id, { at: now.toISOString(), status: 403 }).catch((e) =>
        this.#log.error({ err: e }, 'the upstream refusal could not be recorded'),
      );
      return {
        why: `upstream 403 on ${err.endpoint}`,
        outcome: refuse(
          502,
          'The school\u2019s system does not let this calendar record absences, so nothing was reported. Please tell the coach or the school office directly.',
        ),
      };
    }
    if (err.status === null || err.retryable)
      return {
        why: `upstream ${err.status ?? 'unreachable'} on ${err.endpoint}`,
        outcome: refuse(err.status === null ? 503 : 502, UNREACHABLE),
      };
    return {
      why: `upstream ${err.status} on ${err.endpoint}`,
      outcome: refuse(
        502,
        `The school\u2019s system refused the report (it answered ${err.status}), so nothing was reported. Please tell the coach directly.`,
      ),
    };
  }

  /** A refused act with no session of this link's to name (audited all the same: probing leaves a trace). */
  async refused(link: ReportingLink, address: string, detail: string): Promise<void> {
    await this.#audit(link, 'absence-refused', address, null, detail);
  }

  async #audit(
    link: ReportingLink,
    action: AuditAction,
    address: string,
    session: Stored<'sessions'> | null,
    detail: string,
  ): Promise<void> {
    try {
      await this.#store.access.appendAudit({
        at: this.#now().toISOString(),
        action,
        actor: actorOf(link),
        schoolId: link.schoolId,
        teamId: session?.teams[0]?.id ?? null,
        sessionId: session?.id ?? null,
        template: null,
        clientAddress: address,
        staffSession: null,
        detail,
      });
    } catch (err) {
      this.#log.error({ err, schoolId: link.schoolId, action }, 'an absence act could not be audited');
    }
  }

  /** Runs fn after every earlier fn of the same key has settled (this process's writes of one child's session). */
  async #locked<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.#locks.get(key) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const settled = run.catch(() => {});
    this.#locks.set(key, settled);
    try {
      return await run;
    } finally {
      if (this.#locks.get(key) === settled) this.#locks.delete(key);
    }
  }
}

function overlaps(a: { start: string; end: string }, s: { start: string; end: string }): boolean {
  return Date.parse(a.start) < Date.parse(s.end) && Date.parse(s.start) < Date.parse(a.end);
}

function refuse(status: number, message: string): Outcome {
  return { ok: false, status, message };
}

function tooMany(waitS: number): Outcome {
  const minutes = Math.max(1, Math.ceil(waitS / 60));
  return {
    ok: false,
    status: 429,
    retryAfterS: waitS,
    message: `Too many absence reports from this connection. Please try again in ${minutes} minute${minutes === 1 ? '' : 's'}, or tell the coach directly.`,
  };
}
