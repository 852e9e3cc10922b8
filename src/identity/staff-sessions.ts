// Staff sessions: a random 256-bit id in an HttpOnly, SameSite=Lax cookie (Secure on https); the store keeps only
// its sha256, so every replica sees a sign-out or an admin's "end all sessions" at once.
// Idle timeout counts from the last request seen; the absolute lifetime from sign-in.
import { createHash, randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { StaffSession, Store } from '../store/types.ts';
import { cookieOf } from './cookies.ts';

export interface SessionSettings {
  /** Idle timeout; default 8 hours. */
  idleMs: number;
  /** Absolute lifetime from sign-in; default 24 hours. */
  maxMs: number;
  /** Secure cookie (publicUrl is https). */
  secure: boolean;
}

export const DEFAULT_SESSION_SETTINGS = { idleMs: 8 * 3_600_000, maxMs: 24 * 3_600_000 };

/** lastSeenAt is written at most this often: a page load is not a database write each time. */
const TOUCH_EVERY_MS = 60_000;

export function cookieName(secure: boolean): string {
  // __Host-: the browser refuses it unless Secure, Path=/ and no Domain — no subdomain can plant or read it.
  return secure ? '__Host-rostercal_session' : 'rostercal_session';
}

export function hashSessionId(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}

/** The CSRF token of a session: derived from its secret id, so it needs no storage and dies with the session. */
export function csrfTokenFor(id: string): string {
  return createHash('sha256').update(`rostercal csrf v1\0${id}`, 'utf8').digest('base64url');
}

export type SessionState = 'live' | 'revoked' | 'expired' | 'idle';

export function sessionState(s: StaffSession, now: number, idleMs: number): SessionState {
  if (s.revokedAt !== null) return 'revoked';
  if (Date.parse(s.expiresAt) <= now) return 'expired';
  if (Date.parse(s.lastSeenAt) + idleMs <= now) return 'idle';
  return 'live';
}

export interface CurrentSession {
  session: StaffSession;
  /** The id's hash (the store key). */
  hash: string;
  csrf: string;
}

export interface Identity {
  email: string;
  issuer: string;
  subject: string;
  displayName: string | null;
}

export class StaffSessions {
  readonly #store: Pick<Store, 'access'>;
  readonly #settings: SessionSettings;
  readonly #now: () => number;
  readonly cookie: string;

  constructor(store: Pick<Store, 'access'>, settings: SessionSettings, now: () => number = Date.now) {
    this.#store = store;
    this.#settings = settings;
    this.#now = now;
    this.cookie = cookieName(settings.secure);
  }

  get settings(): SessionSettings {
    return this.#settings;
  }

  async start(req: Request, res: Response, who: Identity): Promise<CurrentSession> {
    const id = randomBytes(32).toString('base64url');
    const now = this.#now();
    const session: StaffSession = {
      idHash: hashSessionId(id),
      email: who.email.toLowerCase(),
      issuer: who.issuer,
      subject: who.subject,
      displayName: who.displayName,
      createdAt: new Date(now).toISOString(),
      lastSeenAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.#settings.maxMs).toISOString(),
      revokedAt: null,
      clientAddress: req.ip ?? null,
      userAgent: req.get('user-agent') ?? null,
    };
    await this.#store.access.createStaffSession(session);
    res.cookie(this.cookie, id, {
      httpOnly: true,
      secure: this.#settings.secure,
      sameSite: 'lax',
      path: '/',
      maxAge: this.#settings.maxMs,
    });
    return { session, hash: session.idHash, csrf: csrfTokenFor(id) };
  }

  /** The request's live session, or null (no cookie, unknown, signed out, expired, idle). */
  async current(req: Request): Promise<CurrentSession | null> {
    const id = cookieOf(req, this.cookie);
    if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return null;
    const hash = hashSessionId(id);
    const session = await this.#store.access.getStaffSession(hash);
    if (!session) return null;
    const now = this.#now();
    if (sessionState(session, now, this.#settings.idleMs) !== 'live') return null;
    if (now - Date.parse(session.lastSeenAt) > TOUCH_EVERY_MS) {
      await this.#store.access.touchStaffSession(hash, new Date(now).toISOString());
    }
    return { session, hash, csrf: csrfTokenFor(id) };
  }

  /** Ends the request's session in the store (every replica) and clears the cookie. */
  async end(req: Request, res: Response): Promise<StaffSession | null> {
    const id = cookieOf(req, this.cookie);
    this.clearCookie(res);
    if (!id) return null;
    const hash = hashSessionId(id);
    const session = await this.#store.access.getStaffSession(hash);
    await this.#store.access.revokeStaffSession(hash, new Date(this.#now()).toISOString());
    return session;
  }

  clearCookie(res: Response): void {
    res.clearCookie(this.cookie, {
      httpOnly: true,
      secure: this.#settings.secure,
      sameSite: 'lax',
      path: '/',
    });
  }
}
