// The jobs of replicas sharing a PostgreSQL store, on pg-boss (the one module that imports it): the scheduled fires,
// and each push target's turns. Its tables go into the store's own schema (the role's current schema; pg-boss's
// names: job, queue, version, …): the README's least-privilege role owns that schema and cannot create another
// (`permission denied for database` when pg-boss tried `rostercal_jobs`). A fire is queued under an id made of its
// job and fire time, so every replica that fires it asks for the same job and exactly one insert wins; whichever
// replica then fetches it runs it. A push takes its target's turn from a queue of the target's own whose policy lets
// one job be active at a time; a pull takes its school's turn from the school's own queue, which holds at most one
// job, waiting or taken. SQLite has no queue: one process, no election.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { OWNER_SILENT_MS } from './liveness.ts';

const QUEUE = 'fires';

/** A fire as queued: which job of which school, at which moment of its schedule. */
export interface QueuedFire {
  schoolId: string;
  job: string;
  fireTime: string;
}

/** A fire fetched to run: settle it with FireQueue.finish, keep it claimed with FireQueue.touch. */
export interface TakenFire extends QueuedFire {
  id: string;
  retryCount: number;
}

export interface FireOutcome {
  status: string;
  error?: string | null;
}

export interface FireQueue {
  /** Starts pg-boss (its schema at the first start): before the first fire, which must not wait for it. */
  start(): Promise<void>;
  /** Queues the fire; its job's id, or null when the fire was already queued (by another replica). */
  enqueue(fire: QueuedFire): Promise<string | null>;
  /** Up to `limit` queued fires, oldest first, each now this replica's (SKIP LOCKED: no two replicas get one). */
  take(limit: number): Promise<TakenFire[]>;
  /** Tells the queue this replica still runs them (every touchEveryMs, or the queue fails them). */
  touch(fires: TakenFire[]): Promise<void>;
  finish(fire: TakenFire, outcome: FireOutcome): Promise<void>;
  /** A queued fire's outcome once some replica finished it; null while it waits or runs. */
  outcome(id: string): Promise<FireOutcome | null>;
  /** Between a runner's beats on the fires it runs. */
  readonly touchEveryMs: number;
  close(): Promise<void>;
}

/** A turn held until released: no other process sharing the store holds it meanwhile (a push target's, a school's). */
export interface Turn {
  /** The turn's job in the queue: its holder's lease token, so that one who knows the holder dead can end it. */
  readonly id: string;
  release(): Promise<void>;
}

/** A push target's turn: no other process sharing the store pushes that target meanwhile. */
export type PushTurn = Turn;

export interface PushTurns {
  /**
   * Waits for the target's turn across every process sharing the store, and takes it; `waiting` is called once if
   * another process holds it. A holder that dies gives it up when its beats stop (`PUSH_HEARTBEAT_S`).
   */
  takeTurn(target: string, waiting: () => void): Promise<PushTurn>;
}

export interface PullTurns {
  /**
   * The school's pull turn if no process sharing the store holds it, else null (at once: the caller decides whether
   * to ask again). A holder that dies gives it up when its beats stop (`PULL_HEARTBEAT_S`).
   */
  tryPullTurn(schoolId: string): Promise<Turn | null>;
  /**
   * Ends the school's turn `id` now, as its lapse would once its holder's beats had stopped: for a holder known to be
   * dead (our own liveness: on its host, kill(pid, 0); elsewhere, its beat silent for OWNER_SILENT_MS), which
   * pg-boss cannot tell. A no-op for a turn already ended, so never one another process has taken since.
   */
  endPullTurn(schoolId: string, id: string): Promise<void>;
}

/** The queue PostgreSQL stores hand the scheduler, the pulls and the pushes. */
export type JobQueue = FireQueue & PushTurns & PullTurns;

/** The job of a fire: one id per (school, job, fire time), alike on every replica (a name-based UUID). */
export function fireId(fire: QueuedFire): string {
  const h = createHash('sha1').update(`${fire.schoolId}\n${fire.job}\n${fire.fireTime}`).digest('hex');
  // Version 5 and the RFC 4122 variant, so PostgreSQL's uuid type takes it as any other.
  const variant = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** pg-boss's smallest heartbeat: a dead runner's fire is failed ~10–12 s after its last beat. */
const HEARTBEAT_S = 10;

/**
 * pg-boss's own pool, beside the store's (10, store/index.ts). What it needs is calls in flight: every replica
 * sends every fire of every school, the one that wins it also fetches, completes and beats it, and pg-boss's
 * supervise and monitor run every 2 s; with 50 schools that is ~5 fires and ~15 calls a second, each taking as
 * long as the host lets PostgreSQL answer. 3 ran dry at load 22 ("timeout exceeded when trying to connect" on
 * send, fetch and complete: 23 of 531 fires let pass, 31 late); 10, as the store's, gave 0 of 550 late. pg opens
 * them only when asked and closes them after 10 s idle, but the bound counts against PostgreSQL's
 * max_connections: a replica may hold 10 (store) + 10 (queue) + 2 per render thread (docs/sizing.md).
 */
export const QUEUE_POOL_MAX = 10;

/**
 * How long a push's turn outlives its holder's last beat: as long as a pull lease outlives its owner's
 * (OWNER_SILENT_MS), so a stalled loop or a database hiccup never lets a second process push the target beside it.
 */
const PUSH_HEARTBEAT_S = OWNER_SILENT_MS / 1000;
/** Between a waiting push's asks for its target's turn (pg-boss tells no one when a job ends). */
const TURN_POLL_MS = 1_000;

/**
 * How long a pull's turn outlives its holder's last beat: pg-boss's least. A replica killed mid-pull must have its
 * school taken over within one fire interval (30 s by default): 10 s of silence, then the monitor's 2 s, then the
 * next ask. (A loop stalled longer loses its turn: its writes are refused by the fence, and it ends interrupted.)
 */
export const PULL_HEARTBEAT_S = 10;

/** A key's own queue (`push/<target>`, `pull/<school>`), its name hashed if the key has characters pg-boss refuses. */
export function turnQueueName(kind: 'push' | 'pull', key: string): string {
  return /^[\w.\-/]+$/.test(key)
    ? `${kind}/${key}`
    : `${kind}/${createHash('sha1').update(key).digest('hex').slice(0, 20)}`;
}

/**
 * A queue call that found no connection: said as the store failing, naming the queue's pool, so the fire's log
 * line, its job status and /readyz say why it was let pass (pg says only "timeout exceeded when trying to connect").
 */
function queueFailure(err: unknown, timeoutMs: number): unknown {
  if (!(err instanceof Error) || !/timeout/i.test(err.message)) return err;
  return new Error(
    `the job queue got no PostgreSQL connection within ${timeoutMs / 1000} s (its pool of ${QUEUE_POOL_MAX} all busy, or the database did not answer): ${err.message}`,
    { cause: err },
  );
}

class PgJobQueue implements JobQueue {
  readonly touchEveryMs = (HEARTBEAT_S * 1000) / 2;
  readonly #url: string;
  #started: Promise<PgBoss> | null = null;

  /** How long a call waits for a connection: the store's own bound, so a dry pool fails a fire before the next. */
  readonly #connectTimeoutMs: number;

  constructor(connectionString: string, connectTimeoutMs: number) {
    this.#url = connectionString;
    this.#connectTimeoutMs = connectTimeoutMs;
  }

  /** Push targets' and schools' queues made by this process (pg-boss's createQueue is idempotent, but a round trip). */
  readonly #turnQueues = new Map<string, Promise<void>>();

  /** A call to pg-boss, its failure to get a connection named as the queue's. */
  async #call<T>(f: (boss: PgBoss) => Promise<T>): Promise<T> {
    const boss = await this.#boss$();
    try {
      return await f(boss);
    } catch (err) {
      throw queueFailure(err, this.#connectTimeoutMs);
    }
  }

  async #open(): Promise<PgBoss> {
    const client = new pg.Client({ connectionString: this.#url });
    await client.connect();
    let schema: string;
    try {
      schema = (await client.query<{ s: string }>('select current_schema() as s')).rows[0]!.s;
    } finally {
      await client.end();
    }
    // Loaded at the queue's first use, not with the store: a command that never queues (`rostercal sync`,
    // `status`, …) spent ~0.2 CPU s of its start loading pg-boss on PostgreSQL (issue 46).
    const { PgBoss } = await import('pg-boss');
    const boss = new PgBoss({
      connectionString: this.#url,
      schema,
      // It exists (the store's); creating it, even "if not exists", asks for a right the role need not have.
      createSchema: false,
      max: QUEUE_POOL_MAX,
      // pg-boss's default is 10 s, a whole fire interval: a send waiting that long made node-cron count the next
      // fire an overlap instead of this one a failure of the store.
      connectionTimeoutMillis: this.#connectTimeoutMs,
      // The monitor fails a fire whose runner stopped beating: every 2 s, so whoever waits on a dead replica's fire
      // has its outcome ~12 s after its last beat, not a minute later (pg-boss's default).
      superviseIntervalSeconds: 2,
      monitorIntervalSeconds: 2,
      // Fires come by node-cron, not by pg-boss's own cron.
      schedule: false,
    });
    // pg-boss reports its own trouble (a lost connection) as events; unheard, 'error' would end the process.
    boss.on('error', () => {});
    await boss.start();
    return boss;
  }

  #boss$(): Promise<PgBoss> {
    this.#started ??= (async () => {
      const boss = await this.#open();
      await boss.createQueue(QUEUE, {
        // A fire not taken in a minute is stale: the next fire of its job stands for it.
        retentionSeconds: 60,
        // Finished fires are kept an hour (a late replica's send of the same fire still finds it).
        deleteAfterSeconds: 3600,
        // Never run twice: a fire whose replica died is covered by the next fire (a full one by its request in
        // `pull_requests`, which the next pull of the school honours).
        retryLimit: 0,
        heartbeatSeconds: HEARTBEAT_S,
        expireInSeconds: 6 * 3600,
      });
      return boss;
    })();
    return this.#started;
  }

  async start(): Promise<void> {
    await this.#boss$();
  }

  enqueue(fire: QueuedFire): Promise<string | null> {
    return this.#call((boss) => boss.send(QUEUE, { ...fire }, { id: fireId(fire) }));
  }

  async take(limit: number): Promise<TakenFire[]> {
    const jobs = await this.#call((boss) => boss.fetch<QueuedFire>(QUEUE, { batchSize: limit }));
    return jobs.map((j) => ({
      schoolId: j.data.schoolId,
      job: j.data.job,
      fireTime: j.data.fireTime,
      id: j.id,
      retryCount: j.retryCount,
    }));
  }

  async touch(fires: TakenFire[]): Promise<void> {
    if (!fires.length) return;
    await this.#call((boss) =>
      boss.touch(
        QUEUE,
        fires.map((f) => ({ id: f.id, retryCount: f.retryCount })),
      ),
    );
  }

  async finish(fire: TakenFire, outcome: FireOutcome): Promise<void> {
    await this.#call((boss) =>
      boss.complete(
        QUEUE,
        { id: fire.id, retryCount: fire.retryCount },
        { status: outcome.status, error: outcome.error ?? null },
      ),
    );
  }

  async outcome(id: string): Promise<FireOutcome | null> {
    const [job] = await this.#call((boss) => boss.findJobs<QueuedFire>(QUEUE, { id }));
    // Not taken within its retention: it was deleted, and the next fire of its job stands for it.
    if (!job) return { status: 'skipped', error: 'no replica took the fire within a minute' };
    if (job.state === 'completed') return job.output as FireOutcome;
    if (job.state === 'failed' || job.state === 'cancelled')
      return { status: 'failed', error: `the fire's job ${job.state} (its replica stopped beating)` };
    return null;
  }

  /** The key's queue, made once per process with these options. */
  async #turnQueue(name: string, options: Parameters<PgBoss['createQueue']>[1]): Promise<string> {
    let made = this.#turnQueues.get(name);
    if (!made) {
      made = this.#call((boss) => boss.createQueue(name, options));
      made.catch(() => this.#turnQueues.delete(name));
      this.#turnQueues.set(name, made);
    }
    await made;
    return name;
  }

  /** A job fetched from a turn's queue, held: beaten every third of its heartbeat until released. */
  #hold(name: string, job: { id: string; retryCount: number }, heartbeatS: number): Turn {
    const held = [{ id: job.id, retryCount: job.retryCount }];
    const beat = setInterval(
      () => void this.#call((boss) => boss.touch(name, held)).catch(() => {}),
      (heartbeatS * 1000) / 3,
    );
    beat.unref();
    return {
      id: job.id,
      release: async () => {
        clearInterval(beat);
        await this.#call((boss) => boss.complete(name, job.id));
      },
    };
  }

  /**
   * Every ask sends one job to the target's queue and takes one: any of them is a turn, so one taken from under
   * another asker (pg-boss fetches the oldest, not one by id) only means this ask goes first, and its own job stays
   * for the next asker. One is active at a time (the `singleton` policy); the holder beats until it releases it.
   */
  async takeTurn(target: string, waiting: () => void): Promise<PushTurn> {
    const name = await this.#turnQueue(turnQueueName('push', target), {
      policy: 'singleton',
      // A turn is never run twice: a holder that died has let go of it, and the next push of the target runs.
      retryLimit: 0,
      heartbeatSeconds: PUSH_HEARTBEAT_S,
      // Asks wait behind pushes of minutes; one left by a process that died waiting is someone's turn later.
      retentionSeconds: 6 * 3600,
      deleteAfterSeconds: 3600,
      expireInSeconds: 6 * 3600,
    });
    await this.#call((boss) => boss.send(name, {}));
    for (let told = false; ; told = true) {
      const [job] = await this.#call((boss) => boss.fetch(name));
      if (job) return this.#hold(name, job, PUSH_HEARTBEAT_S);
      if (!told) waiting();
      await sleep(TURN_POLL_MS, undefined, { ref: false });
    }
  }

  /**
   * The school's queue holds at most one job, waiting or taken (the `exclusive` policy): an ask sends one (refused
   * while one is there) and fetches one. A job fetched is the turn, whoever sent it; none fetched means another
   * process holds the turn, and nothing this ask sent is left behind (had its job been sent, only another ask could
   * have taken it). A job left by an asker that died before fetching it is the next ask's turn.
   */
  async tryPullTurn(schoolId: string): Promise<Turn | null> {
    const name = await this.#turnQueue(turnQueueName('pull', schoolId), {
      policy: 'exclusive',
      // A turn is never run twice: a holder that died has let go of it, and the school's next pull runs.
      retryLimit: 0,
      heartbeatSeconds: PULL_HEARTBEAT_S,
      retentionSeconds: 6 * 3600,
      // Nobody reads an ended turn, and a school's pulls end one every 10-s fire: kept a minute, not an hour.
      deleteAfterSeconds: 60,
      expireInSeconds: 6 * 3600,
    });
    await this.#call((boss) => boss.send(name, {}));
    const [job] = await this.#call((boss) => boss.fetch(name));
    return job ? this.#hold(name, job, PULL_HEARTBEAT_S) : null;
  }

  async endPullTurn(schoolId: string, id: string): Promise<void> {
    const name = turnQueueName('pull', schoolId);
    // pg-boss fails only a job not yet ended: a turn completed or lapsed since stays as it is.
    await this.#call((boss) => boss.fail(name, id, { message: 'its holder is gone (rostercal liveness)' }));
  }

  async close(): Promise<void> {
    const boss = await this.#started?.catch(() => null);
    await boss?.stop({ graceful: false, timeout: 2_000 });
  }
}

/** `connectTimeoutMs`: how long a call may wait for a connection (the store's connect_timeout; 0: no bound). */
export function openJobQueue(connectionString: string, connectTimeoutMs: number): JobQueue {
  return new PgJobQueue(connectionString, connectTimeoutMs);
}
