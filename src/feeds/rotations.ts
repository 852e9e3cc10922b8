// The record of feed rotations kept beside the feed secret (DATA_DIR/feed-rotations.jsonl), so that a rotated
// URL never answers again whatever happens to the database: lost, restored from an older backup, moved to a new
// PostgreSQL. Tokens derive from (secret, school, scope, id, version); knowing the secret and each feed's current
// version is knowing every live URL. The store keeps the versions too, but a store can go back in time; this
// file only ever grows and is written before the store on every rotation.
//
// At start-up reconcileRotations() compares the two, per school:
// - the file knows a later version than the store (lost or older database): the store is brought forward (old
//   URLs revoked, the current one issued); URLs never rotated are issued again after the next pull;
// - the store knows a later version (a rotation made where this file is not): the file learns it;
// - the file is missing but the store says one was kept (the cursor `feeds.rotations` holds the file's id):
//   nobody can tell which URLs are current. The school's feeds answer 404 and /readyz says why until an operator
//   runs `rostercal feeds accept-store` (the store is current) or restores the file.
import { randomUUID } from 'node:crypto';
import { appendFileSync, closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Id } from '../domain/types.ts';
import { ensurePrivateDir, ensurePrivateFile, PRIVATE_FILE_MODE } from '../private-files.ts';
import type { FeedScope, FeedToken, SchoolId, Store } from '../store/types.ts';

export const ROTATIONS_FILE = 'feed-rotations.jsonl';
/** The store cursor (per school) naming the rotation file the store was reconciled with. */
export const ROTATIONS_CURSOR = 'feeds.rotations';

export interface Rotation {
  school: SchoolId;
  scope: FeedScope;
  id: Id;
  /** The version that is current after the rotation. */
  version: number;
  at: string;
}

const key = (school: SchoolId, scope: FeedScope, id: Id) => `${school}|${scope}|${id}`;

export class RotationJournal {
  readonly file: string;

  constructor(dataDir: string) {
    this.file = path.resolve(dataDir, ROTATIONS_FILE);
  }

  exists(): boolean {
    return existsSync(this.file);
  }

  /** The file's id and the current version of every feed ever rotated. Throws naming the file when damaged. */
  read(): { id: string; versions: Map<string, number> } {
    ensurePrivateFile(this.file);
    const lines = readFileSync(this.file, 'utf8').split('\n');
    let id: string | null = null;
    const versions = new Map<string, number>();
    lines.forEach((line, i) => {
      if (!line.trim()) return;
      let rec: Partial<Rotation> & { journal?: string };
      try {
        rec = JSON.parse(line);
      } catch {
        // A torn last line (power cut mid-append) carries no completed rotation: the store write came after it.
        if (i === lines.length - 1 || lines.slice(i + 1).every((l) => !l.trim())) return;
        throw new Error(`${this.file}: line ${i + 1} is not a rotation record`);
      }
      if (typeof rec.journal === 'string') {
        id ??= rec.journal;
        return;
      }
      if (typeof rec.school !== 'string' || typeof rec.scope !== 'string' || !Number.isInteger(rec.version))
        throw new Error(`${this.file}: line ${i + 1} is not a rotation record`);
      const k = key(rec.school, rec.scope as FeedScope, Number(rec.id));
      versions.set(k, Math.max(versions.get(k) ?? 0, rec.version as number));
    });
    if (!id) throw new Error(`${this.file}: no header line`);
    return { id, versions };
  }

  /** Creates the file (0600, in a 0700 directory) with a new id; fails if it exists. */
  create(): string {
    ensurePrivateDir(path.dirname(this.file));
    const id = randomUUID();
    const fd = openSync(this.file, 'wx', PRIVATE_FILE_MODE);
    try {
      writeSync(fd, `${JSON.stringify({ journal: id, created: new Date().toISOString() })}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return id;
  }

  /** Appends rotations durably (fsync) before the store is told: a crash in between is repaired at start. */
  append(rotations: Rotation[]): void {
    if (rotations.length === 0) return;
    appendFileSync(this.file, rotations.map((r) => `${JSON.stringify(r)}\n`).join(''), {
      mode: PRIVATE_FILE_MODE,
    });
    const fd = openSync(this.file, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  version(school: SchoolId, scope: FeedScope, id: Id): number {
    if (!this.exists()) return 0;
    return this.read().versions.get(key(school, scope, id)) ?? 0;
  }
}

export interface RotationState {
  /** Schools whose current URLs cannot be told: their feeds are not served. */
  unsure: Map<SchoolId, string>;
  /** Schools whose store had lost feed tokens the file vouches for: issue every feed's token after a pull. */
  reissue: Set<SchoolId>;
  /** Lines for the operator (what was repaired). */
  notes: string[];
}

/** What `issue` must do: save a live token of that version, revoking older ones. */
export type IssueVersion = (school: SchoolId, scope: FeedScope, id: Id, version: number) => Promise<void>;

/** Brings the store and the rotation file into agreement (see the top of this file). */
export async function reconcileRotations(
  store: Store,
  journal: RotationJournal,
  schools: SchoolId[],
  issue: IssueVersion,
): Promise<RotationState> {
  const state: RotationState = { unsure: new Map(), reissue: new Set(), notes: [] };
  const tokens = await store.listFeedTokens();
  const bySchool = new Map<SchoolId, FeedToken[]>();
  for (const t of tokens) bySchool.set(t.schoolId, [...(bySchool.get(t.schoolId) ?? []), t]);
  const markers = new Map<SchoolId, string | null>();
  for (const s of schools) markers.set(s, await store.getCursor(s, ROTATIONS_CURSOR));

  const existed = journal.exists();
  if (!existed) {
    const lost = schools.filter((s) => markers.get(s));
    if (lost.length) {
      for (const s of lost)
        state.unsure.set(
          s,
          `the feed rotation record (DATA_DIR/${ROTATIONS_FILE}) is missing, so rostercal cannot tell which feed URLs are current; no feed of this school is served until an operator restores the file or runs \`rostercal feeds accept-store\` (the database is current)`,
        );
      return state;
    }
    // First start with a rotation record: it begins with what the store knows.
    journal.create();
  }
  const { id, versions } = journal.read();
  const learned: Rotation[] = [];
  const now = new Date().toISOString();
  for (const school of schools) {
    if (state.unsure.has(school)) continue;
    const stored = new Map<string, { scope: FeedScope; id: Id; version: number }>();
    for (const t of bySchool.get(school) ?? []) {
      const k = key(school, t.scope, t.scopeId);
      if ((stored.get(k)?.version ?? 0) < t.version)
        stored.set(k, { scope: t.scope, id: t.scopeId, version: t.version });
    }
    let repaired = 0;
    for (const [k, version] of versions) {
      if (!k.startsWith(`${school}|`)) continue;
      const [, scope, scopeId] = k.split('|') as [string, FeedScope, string];
      if ((stored.get(k)?.version ?? 0) >= version) continue;
      await issue(school, scope, Number(scopeId), version);
      repaired++;
    }
    for (const [k, s] of stored) {
      if (s.version > 1 && (versions.get(k) ?? 1) < s.version)
        learned.push({ school, scope: s.scope, id: s.id, version: s.version, at: now });
    }
    if (repaired) {
      state.notes.push(
        `${school}: the database did not know ${repaired} feed rotation(s) recorded in ${journal.file}; the rotated URLs stay dead and the current ones work again`,
      );
    }
    // A store with no token beside a rotation record from an earlier start lost them (or the school is new, when
    // issuing early is harmless): issue every feed's token again once a pull has brought the school back, so URLs
    // that were never rotated keep working.
    if (stored.size === 0 && existed) state.reissue.add(school);
    if (markers.get(school) !== id) await store.setCursor(school, ROTATIONS_CURSOR, id);
  }
  journal.append(learned);
  return state;
}
