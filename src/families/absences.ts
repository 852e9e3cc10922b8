// "Can't make it": a family reports, from its calendar page, that its child will miss a session, and may take it
// back until the session starts. The report is a pre-explained absence written upstream (POST/DELETE
// /pre-explained-absences) for the child and the session's times, its reason marked as the family's
// (domain/family-absence.ts). What the upstream accepted is written to the store at once (so the coach's sheet
// need not wait for the next pull, and an undo is not left standing until the next full pull).
//
// Exactly once, whatever the replicas (issue 40): the spec gives POST no idempotency key, so a report is first
// reserved in the store every replica shares, one per (school, child, session), with its audit record in the same
// transaction; only the request that took the reservation writes upstream, and every other one (a double tap, a
// reload, another replica) is answered from it. A store that cannot record the act means nothing is sent. The
// reservation also carries the per-child limit (standing reports made in the last 24 hours, counted under one lock)
// and the act's state: a write whose answer was lost is 'unknown' until the settle step (absence-settle.ts) reads
// the child's absences back by the mark; an undo removes every absence this link made for that child and session.
//
// A feed link becomes, for this one act, a capability to write: only a child's link, or a family link holding that
// child's link (still current), may act for the child; each act is audited under the link's id; acts are limited
// per child and per client address, both in the store. Each act has its own short budget (absence-upstream.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type { SchoolConfig } from '../config.ts';
import { familyReason, familyReportOf, linkIdOf } from '../domain/family-absence.ts';
import type { Id, PreExplainedAbsence } from '../domain/types.ts';
import type { Logger } from '../log.ts';
import { silentLogger } from '../log.ts';
import type { AbsenceAct, AbsenceActState, AuditAction, SchoolId, Store, Stored } from '../store/types.ts';
import { isStoreUnreachable } from '../store/unreachable.ts';
import type { UpstreamClient } from '../upstream/api.ts';
import { InvalidResponseError, NotFoundError } from '../upstream/errors.ts';
import { addressKey } from '../util/address-key.ts';
import {
  type Act,
  BEING_UNDONE,
  limitReached,
  notMade,
  notRecorded,
  type Outcome,
  refuse,
  tooMany,
} from './absence-outcomes.ts';
import { absenceReporting, recordRefusal } from './absence-state.ts';
import { absencesUpstream, FAMILY_REQUEST_TIMEOUT_MS, markedBy, writeOutcome } from './absence-upstream.ts';
import { absenceView } from './absence-view.ts';

export type { Outcome } from './absence-outcomes.ts';
export type { AbsenceView, ReportedAbsence } from './absence-view.ts';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** How often a repeat looks whether the report it repeats has been sent. */
const SENDING_POLL_MS = 100;
/** The time a report's own request may take to send it (two upstream calls and the store's steps). */
const SENDING_MS = 2 * FAMILY_REQUEST_TIMEOUT_MS + 500;

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

export type FamilyStore = Pick<Store, 'records' | 'access' | 'readOnly' | 'families'>;

export interface FamilyAbsencesOptions {
  store: FamilyStore;
  schools: readonly SchoolConfig[];
  /** The upstream client of a school's family acts: a short budget (absence-upstream.ts `familyClients`). */
  clientFor: (school: SchoolConfig) => UpstreamClient;
  now?: () => Date;
  log?: Logger;
}

/** An act as the audit log names it: the link by its id, the child and what happened. */
export function actorOf(link: Pick<ReportingLink, 'kind' | 'tokenHash'>): string {
  return `${link.kind} link ${linkIdOf(link.tokenHash)}`;
}

type Audit = (action: AuditAction, detail: string) => Promise<void>;
type ReportAsk = { studentId: Id; sessionId: Id; words: string; address: string };
type UndoAsk = { absenceId: Id; address: string };
/** An undo recorded ('undoing'), to be sent; `before`: the act's state it was moved from. */
type UndoReserved = Reserved & { before: AbsenceActState | null };
/** A report reserved in the store, to be sent. */
type Reserved = { school: SchoolConfig; act: AbsenceAct; audit: Audit };
type Child = { studentId: Id; label: string };
type Session = Stored<'sessions'>;

export class FamilyAbsences {
  readonly #store: FamilyStore;
  readonly #schools: Map<SchoolId, SchoolConfig>;
  readonly #clientFor: (school: SchoolConfig) => UpstreamClient;
  readonly #now: () => Date;
  readonly #log: Logger;

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

  /** Whether the school's setting offers families' reports (known without the store; it may still be hidden). */
  offered(schoolId: SchoolId): boolean {
    return this.#schools.get(schoolId)?.families.reportAbsences === true;
  }

  /** What the page of this link shows for these sessions; null when it offers nothing (off, or no child). */
  async view(link: ReportingLink, sessionIds: readonly Id[]) {
    if (!link.children.length || !(await this.available(link.schoolId))) return null;
    const now = this.#now();
    const acts = await this.#store.families
      .listAbsenceActs(
        link.schoolId,
        link.children.map((c) => c.studentId),
      )
      .catch((err: unknown) => {
        // Out of reach, the page says it cannot show reports; never an empty list that reads as "none".
        if (isStoreUnreachable(err)) throw err;
        this.#log.error({ err }, 'the reports under way could not be read');
        return [] as AbsenceAct[];
      });
    return absenceView({
      link: { children: link.children, linkId: linkIdOf(link.tokenHash) },
      sessionIds,
      sessions: await this.#sessionsOf(link, now),
      absences: await this.#reportedFor(link, now),
      acts,
    });
  }

  async report(link: ReportingLink, ask: ReportAsk): Promise<Outcome> {
    const reserved = await this.#beforeSending('report', link, () => this.#reserve(link, ask));
    return 'ok' in reserved ? reserved : this.#send(reserved.school, reserved.act, ask.words, reserved.audit);
  }

  /**
   * An act's checks and its record in the store, or why it was not made. Nothing is sent before the act is
   * recorded, so whatever throws until then, nothing was reported (or undone): said so, not "not known" (an
   * outside tester, the database gone as the act came in).
   */
  async #beforeSending<T>(
    kind: Act,
    link: ReportingLink,
    reserve: () => Promise<T | Outcome>,
  ): Promise<T | Outcome> {
    try {
      return await reserve();
    } catch (err) {
      this.#log.error(
        { err, schoolId: link.schoolId },
        `a family's ${kind} failed before it was recorded, so it was not sent`,
      );
      return notRecorded(kind);
    }
  }

  /** What comes before a report is sent: its checks, and its reservation in the store (or why it is not made). */
  async #reserve(link: ReportingLink, ask: ReportAsk): Promise<Reserved | Outcome> {
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
    if (!session) return this.#notReportable(link, school, child, ask, now);
    const audit: Audit = (action, detail) =>
      this.#audit(link, action, ask.address, session, `student ${child.studentId}: ${detail}`);
    const key = { schoolId: school.id, studentId: child.studentId, sessionId: session.id };
    // A repeat (a reload, a double tap, another replica) is answered from the report it repeats, for free.
    const standing = await this.#store.families.getAbsenceAct(key).catch(() => null);
    if (standing) return this.#answerFrom(standing, audit);
    const addressLimited = await this.#addressLimit(school, ask.address, now, 'report', audit);
    if (addressLimited) return addressLimited;
    const act: AbsenceAct = {
      ...key,
      linkId: linkIdOf(link.tokenHash),
      state: 'pending',
      absenceId: null,
      start: session.start,
      end: session.end,
      reservedAt: now.toISOString(),
      updatedAt: now.toISOString(),
    };
    const max = school.families.reportsPerChildPerDay;
    let reserved: Awaited<ReturnType<FamilyStore['families']['reserveAbsence']>>;
    try {
      reserved = await this.#store.families.reserveAbsence(
        act,
        { max, since: new Date(now.getTime() - DAY_MS).toISOString() },
        () =>
          this.#auditOrThrow(
            link,
            'absence-report',
            ask.address,
            session,
            `student ${child.studentId}: sending`,
          ),
      );
    } catch (err) {
      this.#log.error({ err, schoolId: school.id }, 'a report could not be recorded, so it was not sent');
      return notRecorded('report');
    }
    if (!reserved.taken) {
      if ('existing' in reserved) return this.#answerFrom(reserved.existing, audit);
      await audit('absence-refused', `report refused (per-child limit, ${max} a day)`);
      return limitReached(max, child.label);
    }
    return { school, act, audit };
  }

  /** Writes a reserved report upstream (unless it is there already) and records what came of it. */
  async #send(school: SchoolConfig, act: AbsenceAct, words: string, audit: Audit): Promise<Outcome> {
    const client = this.#clientFor(school);
    const ok = (kind: 'reported' | 'already-reported'): Outcome => ({
      ok: true,
      kind,
      sessionId: act.sessionId,
    });
    let made: PreExplainedAbsence | undefined;
    try {
      // Made already (before reservations were kept, or by a write whose reservation was since lost).
      made = markedBy(await absencesUpstream(client, act.studentId, act))[0];
    } catch (err) {
      return this.#notMade(school, act, 'report', err, audit);
    }
    if (made) {
      await this.#settle({ ...act, linkId: familyReportOf(made)!.linkId }, made);
      await audit('absence-report', `already reported (absence ${made.id})`);
      return ok('already-reported');
    }
    try {
      [made] = await client.createAbsences([
        {
          studentId: act.studentId,
          startDate: act.start,
          endDate: act.end,
          explained: true,
          reason: familyReason(act.linkId, words),
        },
      ]);
      if (!made)
        throw new InvalidResponseError('POST /pre-explained-absences', 200, 'the answer held no absence');
    } catch (err) {
      if (writeOutcome(err) === 'not-made') return this.#notMade(school, act, 'report', err, audit);
      const why = (err as Error).message;
      this.#log.warn(
        { schoolId: school.id, err },
        'a report was sent but its answer was lost: it is read back',
      );
      await this.#move({ ...act, state: 'unknown', updatedAt: this.#now().toISOString() }, ['pending']);
      await audit('absence-report', `sent, not confirmed (${why}): read back within a minute`);
      return { ok: true, kind: 'unconfirmed', sessionId: act.sessionId };
    }
    await this.#settle(act, made);
    await audit('absence-report', `reported (absence ${made.id})`);
    return ok('reported');
  }

  /** A report or undo that was refused or never reached the upstream: nothing changed there. */
  async #notMade(
    school: SchoolConfig,
    act: AbsenceAct,
    kind: Act,
    err: unknown,
    audit: Audit,
  ): Promise<Outcome> {
    const failed = notMade(kind, err);
    this.#log.warn({ schoolId: school.id, why: failed.why }, `a family's ${kind} was not made`);
    if (kind === 'report') await this.#release(act, ['pending']);
    if (failed.forbidden)
      await recordRefusal(this.#store, school.id, { at: this.#now().toISOString(), status: 403 }).catch((e) =>
        this.#log.error({ err: e }, 'the upstream refusal could not be recorded'),
      );
    await audit(
      kind === 'report' ? 'absence-report' : 'absence-undo',
      `failed, ${kind === 'report' ? 'nothing reported' : 'nothing changed'}: ${failed.why}`,
    );
    return failed.outcome;
  }

  async #answerFrom(standing: AbsenceAct, audit: Audit): Promise<Outcome> {
    let act = standing.state === 'pending' ? await this.#afterSending(standing) : standing;
    if (act.state === 'undoing') return BEING_UNDONE;
    if (act.state === 'pending' && !this.#sending(act)) {
      // Its request is over but left no outcome (the store refused to record it): sent or not is unknown. Never "on
      // its way": look for it by its mark; found, it is reported; else the settle step decides, and the page says so.
      const found = await this.#readBack(act);
      if (!found) {
        await audit('absence-report', 'already pending, its request over: not found yet, left to settle');
        return { ok: true, kind: 'unsettled', sessionId: act.sessionId };
      }
      act = found;
    }
    const kind =
      act.state === 'reported' ? 'already-reported' : act.state === 'pending' ? 'pending' : 'unconfirmed';
    await audit(
      'absence-report',
      act.state === 'reported' ? `already reported (absence ${act.absenceId})` : `already ${act.state}`,
    );
    return { ok: true, kind, sessionId: act.sessionId };
  }

  /** Whether the request that reserved this act may still be sending it (its upstream calls' time is not up). */
  #sending(act: AbsenceAct): boolean {
    return this.#now().getTime() - Date.parse(act.reservedAt) < SENDING_MS;
  }

  /** An act whose request ended without an outcome, as the upstream has it: reported when found by its mark. */
  async #readBack(act: AbsenceAct): Promise<AbsenceAct | null> {
    const school = this.#schools.get(act.schoolId);
    if (!school) return null;
    try {
      const made = markedBy(
        await absencesUpstream(this.#clientFor(school), act.studentId, act),
        act.linkId,
      )[0];
      if (!made) return null;
      await this.#settle(act, made);
      return { ...act, state: 'reported', absenceId: made.id };
    } catch (err) {
      this.#log.warn(
        { err, schoolId: act.schoolId },
        'an unsettled report could not be read back; it is settled later',
      );
      return null;
    }
  }

  /**
   * A report another request is sending (a double tap, mostly) as it stands once that request is done, within the
   * time its upstream calls may take: answered at once, the family would read "could not confirm" about a report
   * confirmed a moment later, on a page with no script to update itself. Released meanwhile (nothing was made),
   * or still sending when that time is up: as it stood.
   */
  async #afterSending(act: AbsenceAct): Promise<AbsenceAct> {
    const waitMs = SENDING_MS - Math.max(0, this.#now().getTime() - Date.parse(act.reservedAt));
    const until = performance.now() + Math.min(waitMs, SENDING_MS);
    let now = act;
    while (now.state === 'pending' && performance.now() < until) {
      await sleep(SENDING_POLL_MS);
      const read = await this.#store.families.getAbsenceAct(act).catch(() => now);
      if (!read) return act;
      now = read;
    }
    return now;
  }

  async undo(link: ReportingLink, ask: UndoAsk): Promise<Outcome> {
    const reserved = await this.#beforeSending('undo', link, () => this.#reserveUndo(link, ask));
    if ('ok' in reserved) return reserved;
    return this.#withdraw(reserved.school, reserved.act, reserved.before, ask.absenceId, reserved.audit);
  }

  /** What comes before an undo is sent: its checks, and the act moved to 'undoing' (or why it is not made). */
  async #reserveUndo(link: ReportingLink, ask: UndoAsk): Promise<UndoReserved | Outcome> {
    const school = this.#schools.get(link.schoolId);
    if (!school || !(await this.available(school.id)))
      return refuse(403, 'Undoing a reported absence is not available on this page.');
    const mine = linkIdOf(link.tokenHash);
    const found = await this.#undoable(link, ask.absenceId, mine);
    if (!found) {
      const gone = await this.#withdrawnBefore(link, ask, mine);
      if (gone) return gone;
      await this.refused(
        link,
        ask.address,
        `undo refused (absence ${ask.absenceId} not reported through this link)`,
      );
      return refuse(404, 'That absence was not reported through this page, so it cannot be undone here.');
    }
    const { child, range, act: before } = found;
    const now = this.#now();
    const session = before
      ? await this.#store.records.get(school.id, 'sessions', before.sessionId)
      : await this.#sessionAt(school.id, child.studentId, range);
    const audit: Audit = (action, detail) =>
      this.#audit(
        link,
        action,
        ask.address,
        session,
        `student ${child.studentId}: ${detail} (absence ${ask.absenceId})`,
      );
    if (Date.parse(range.start) <= now.getTime()) {
      await audit('absence-refused', 'undo refused (the session has started)');
      return refuse(409, 'That session has already started, so the absence stays: please tell the coach.');
    }
    const addressLimited = await this.#addressLimit(school, ask.address, now, 'undo', audit);
    if (addressLimited) return addressLimited;
    const undoing: AbsenceAct = {
      // An absence reported before reservations were kept (or whose session is gone: key 0) gets one now.
      ...(before ?? {
        schoolId: school.id,
        studentId: child.studentId,
        sessionId: session?.id ?? 0,
        linkId: mine,
        absenceId: ask.absenceId,
        start: range.start,
        end: range.end,
        reservedAt: now.toISOString(),
      }),
      state: 'undoing',
      updatedAt: now.toISOString(),
    };
    let moved: boolean;
    try {
      moved = await this.#store.families.moveAbsenceAct(undoing, [before?.state ?? null], () =>
        this.#auditOrThrow(
          link,
          'absence-undo',
          ask.address,
          session,
          `student ${child.studentId}: undoing (absence ${ask.absenceId})`,
        ),
      );
    } catch (err) {
      this.#log.error({ err, schoolId: school.id }, 'an undo could not be recorded, so it was not sent');
      return notRecorded('undo');
    }
    if (!moved) return BEING_UNDONE;
    return { school, act: undoing, before: before?.state ?? null, audit };
  }

  /** Deletes upstream every absence the act's link made for that child and session, and records what came of it. */
  async #withdraw(
    school: SchoolConfig,
    act: AbsenceAct,
    before: AbsenceActState | null,
    absenceId: Id,
    audit: Audit,
  ): Promise<Outcome> {
    const client = this.#clientFor(school);
    const restore = () =>
      before === null ? this.#release(act, ['undoing']) : this.#move({ ...act, state: before }, ['undoing']);
    const done = (kind: 'withdrawn' | 'already-withdrawn'): Outcome => ({
      ok: true,
      kind,
      sessionId: act.sessionId || null,
    });
    let current: PreExplainedAbsence[];
    try {
      current = await absencesUpstream(client, act.studentId, act);
    } catch (err) {
      await restore();
      return this.#notMade(school, act, 'undo', err, audit);
    }
    const target = current.find((a) => a.id === absenceId);
    if (target && familyReportOf(target)?.linkId !== act.linkId) {
      await restore();
      await audit('absence-refused', 'undo refused (the school has changed the absence)');
      return refuse(409, 'The school has changed this absence since: please ask the school office.');
    }
    const ids = markedBy(current, act.linkId).map((a) => a.id);
    if (ids.length === 0) {
      await this.#withdrawn(act, [absenceId]);
      await audit('absence-undo', 'already withdrawn upstream');
      return done('already-withdrawn');
    }
    try {
      await client.deleteAbsences(ids);
    } catch (err) {
      if (err instanceof NotFoundError && ids.length === 1) {
        await this.#withdrawn(act, [absenceId, ...ids]);
        await audit('absence-undo', 'already withdrawn upstream');
        return done('already-withdrawn');
      }
      if (writeOutcome(err) === 'not-made') {
        await restore();
        return this.#notMade(school, act, 'undo', err, audit);
      }
      this.#log.warn(
        { schoolId: school.id, err },
        'an undo was sent but its answer was lost: it is read back',
      );
      await audit(
        'absence-undo',
        `sent, not confirmed (${(err as Error).message}): read back within a minute`,
      );
      return { ok: true, kind: 'undo-unconfirmed', sessionId: act.sessionId || null };
    }
    await this.#withdrawn(act, [absenceId, ...ids]);
    await audit('absence-undo', ids.length > 1 ? `withdrawn (absences ${ids.join(', ')})` : 'withdrawn');
    return done('withdrawn');
  }

  /**
   * An absence this link reported that no longer stands (its Undo from another tab, say): "already undone", the
   * truth the family needs, not "not reported through this page", which read as if the child were still marked out,
   * nor "Undone", which read as if it undid the report that stands now. Audited like any undo.
   */
  async #withdrawnBefore(
    link: ReportingLink,
    ask: { absenceId: Id; address: string },
    mine: string,
  ): Promise<Outcome | null> {
    const stored = await this.#store.records.get(link.schoolId, 'absences', ask.absenceId, {
      includeDeleted: true,
    });
    if (!stored?.meta.deletedAt || familyReportOf(stored)?.linkId !== mine) return null;
    if (!link.children.some((c) => c.studentId === stored.studentId)) return null;
    const session = await this.#sessionAt(link.schoolId, stored.studentId, stored);
    await this.#audit(
      link,
      'absence-undo',
      ask.address,
      session,
      `student ${stored.studentId}: already withdrawn, nothing changed (absence ${ask.absenceId})`,
    );
    return { ok: true, kind: 'already-withdrawn', sessionId: session?.id ?? null };
  }

  /** The child, times and act of an absence this link reported (from the store's copy or its reservation). */
  async #undoable(link: ReportingLink, absenceId: Id, mine: string) {
    const stored = await this.#store.records.get(link.schoolId, 'absences', absenceId);
    const acts = await this.#store.families.listAbsenceActs(
      link.schoolId,
      link.children.map((c) => c.studentId),
    );
    const act = acts.find((a) => a.absenceId === absenceId && a.linkId === mine) ?? null;
    const studentId = stored?.studentId ?? act?.studentId;
    const child = link.children.find((c) => c.studentId === studentId);
    // One answer for "no such absence" and "not yours": the page reveals nothing it did not show.
    if (!child) return null;
    if (stored && familyReportOf(stored)?.linkId !== mine) return null;
    const range = stored ?? act;
    return range ? { child, range, act: act ?? acts.find((a) => a.absenceId === absenceId) ?? null } : null;
  }

  /** Settles an act as reported by the upstream's absence `made`: the act, and the store's copy of it. */
  async #settle(act: AbsenceAct, made: PreExplainedAbsence): Promise<void> {
    const at = this.#now().toISOString();
    await this.#move({ ...act, state: 'reported', absenceId: made.id, updatedAt: at }, [
      'pending',
      'unknown',
      // Found late (absence-settle.ts): it counts against the child's limit from now.
      'not-made',
    ]);
    await this.#keep(act.schoolId, made, at);
  }

  /** The act is over: its absences are gone upstream, so from the store too. */
  async #withdrawn(act: AbsenceAct, absenceIds: Id[]): Promise<void> {
    try {
      await this.#store.records.markDeleted(act.schoolId, 'absences', absenceIds, this.#now().toISOString());
    } catch (err) {
      this.#log.error(
        { err, schoolId: act.schoolId },
        'an undone absence could not be marked gone; the next full pull does',
      );
    }
    await this.#release(act, ['undoing']);
  }

  async #move(act: AbsenceAct, from: (AbsenceActState | null)[]): Promise<void> {
    await this.#store.families.moveAbsenceAct(act, from).catch((err: unknown) => {
      // It stays as it was ('pending' or 'undoing'): the settle step reads it back.
      this.#log.error(
        { err, schoolId: act.schoolId },
        'a report’s state could not be recorded; it is settled later',
      );
    });
  }

  async #release(act: AbsenceAct, from: AbsenceActState[]): Promise<void> {
    await this.#store.families.releaseAbsenceAct(act, from).catch((err: unknown) => {
      this.#log.error(
        { err, schoolId: act.schoolId },
        'a report’s reservation could not be ended; it is settled later',
      );
    });
  }

  /** A report for a session this link cannot report for: why, audited. */
  async #notReportable(
    link: ReportingLink,
    school: SchoolConfig,
    child: Child,
    ask: { sessionId: Id; address: string },
    now: Date,
  ): Promise<Outcome> {
    const known = link.shown.has(ask.sessionId)
      ? await this.#store.records.get(school.id, 'sessions', ask.sessionId)
      : null;
    const why =
      known && Date.parse(known.start) <= now.getTime()
        ? 'started'
        : known?.cancelled
          ? 'cancelled'
          : known?.bye
            ? 'is a bye'
            : 'not on the page';
    await this.refused(
      link,
      ask.address,
      `student ${child.studentId}: report refused (session ${ask.sessionId} ${why})`,
    );
    if (why === 'started')
      return refuse(409, 'That session has already started: please tell the coach directly.');
    if (why === 'cancelled') return refuse(409, 'That session is cancelled: there is nothing to miss.');
    // The page shows a bye as "no game" without the form; a report on one (an old page, a crafted form) is told so.
    if (why === 'is a bye')
      return refuse(
        409,
        'That is a bye: there is no game that week, so there is nothing to attend or to miss.',
      );
    return refuse(400, `That session is not on ${child.label}\u2019s calendar.`);
  }

  /** Per child, their sessions that can still be reported (upcoming, not cancelled), by id. */
  async #sessionsOf(link: ReportingLink, now: Date): Promise<Map<Id, Map<Id, Session>>> {
    const out = new Map<Id, Map<Id, Session>>();
    const school = this.#schools.get(link.schoolId);
    const days = school?.syncWindow.daysAhead ?? 365;
    for (const child of link.children) {
      const list = await this.#store.records.listSessions(link.schoolId, {
        studentId: child.studentId,
        from: now.toISOString(),
        to: new Date(now.getTime() + days * DAY_MS).toISOString(),
      });
      const byId = new Map<Id, Session>();
      // A bye is no game: there is nothing to miss.
      for (const s of list)
        if (!s.cancelled && !s.bye && !s.meta.deletedAt && Date.parse(s.start) > now.getTime())
          byId.set(s.id, s);
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
    a: { start: string; end: string },
  ): Promise<Session | null> {
    const list = await this.#store.records.listSessions(schoolId, { studentId, from: a.start, to: a.end });
    return list.find((s) => s.start === a.start && s.end === a.end) ?? list[0] ?? null;
  }

  /** What the upstream accepted is the store's at once (the next pull would bring the same record). */
  async #keep(schoolId: SchoolId, a: PreExplainedAbsence, at: string): Promise<void> {
    try {
      await this.#store.records.upsert(schoolId, 'absences', [a], at);
    } catch (err) {
      // The upstream holds it: the next pull brings it in; the family's report stands.
      this.#log.error({ err, schoolId }, 'a reported absence could not be stored; the next pull brings it');
    }
  }

  /**
   * At most `actsPerAddressPerHour` acts from one client address in an hour, counted in the store (so across
   * replicas); a store that cannot count it means the act is not made.
   */
  async #addressLimit(
    school: SchoolConfig,
    address: string,
    now: Date,
    kind: Act,
    audit: Audit,
  ): Promise<Outcome | null> {
    let taken: Awaited<ReturnType<FamilyStore['families']['takeAddressAct']>>;
    try {
      taken = await this.#store.families.takeAddressAct(school.id, addressKey(address), {
        at: now.toISOString(),
        since: new Date(now.getTime() - HOUR_MS).toISOString(),
        max: school.families.actsPerAddressPerHour,
      });
    } catch (err) {
      this.#log.error({ err, schoolId: school.id }, 'an act could not be counted, so it was not made');
      return notRecorded(kind);
    }
    if (taken.ok) return null;
    await audit('absence-refused', `${kind} refused (per-address limit)`);
    return tooMany(Math.max(1, Math.ceil((Date.parse(taken.oldest) + HOUR_MS - now.getTime()) / 1000)));
  }

  /** The settle step's part: acts whose outcome is not known yet, read back (absence-settle.ts). */
  get settleDeps() {
    return {
      store: this.#store,
      schools: this.#schools,
      clientFor: this.#clientFor,
      now: this.#now,
      log: this.#log,
      settle: (act: AbsenceAct, made: PreExplainedAbsence) => this.#settle(act, made),
      withdrawn: (act: AbsenceAct, ids: Id[]) => this.#withdrawn(act, ids),
    };
  }

  /** A refused act with no session of this link's to name (audited all the same: probing leaves a trace). */
  async refused(link: ReportingLink, address: string, detail: string): Promise<void> {
    // Every family act's record begins with the children it concerns, so staff read whose it was (/admin/audit).
    const ids = link.children.map((c) => c.studentId);
    const about =
      /^students? \d/.test(detail) || !ids.length
        ? ''
        : `student${ids.length > 1 ? 's' : ''} ${ids.join(', ')}: `;
    await this.#audit(link, 'absence-refused', address, null, `${about}${detail}`);
  }

  #auditOrThrow(
    link: ReportingLink,
    action: AuditAction,
    address: string,
    session: Session | null,
    detail: string,
  ): Promise<number> {
    return this.#store.access.appendAudit({
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
  }

  async #audit(
    link: ReportingLink,
    action: AuditAction,
    address: string,
    session: Session | null,
    detail: string,
  ): Promise<void> {
    try {
      await this.#auditOrThrow(link, action, address, session, detail);
    } catch (err) {
      this.#log.error({ err, schoolId: link.schoolId, action }, 'an absence act could not be audited');
    }
  }
}
