// What the pull's stage tests share: a resource's turn context (the one runResources builds) over a real store and
// a real upstream client, a logger whose lines the test reads, and a download as gather.ts hands it on.
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll } from 'vitest';
import type { SchoolConfig } from '../../../src/config.ts';
import type { Id } from '../../../src/domain/types.ts';
import { syncWindow } from '../../../src/jobs/window.ts';
import { createLogger } from '../../../src/log.ts';
import { type Sandbox, startSandbox } from '../../../src/sandbox/index.ts';
import type { ResourceKind, Store } from '../../../src/store/types.ts';
import type { Gathered } from '../../../src/sync/pull/gathered.ts';
import type { PullProgress, ResourceRunContext } from '../../../src/sync/pull/types.ts';
import { RESOURCES, type ResourceSpec } from '../../../src/sync/resources.ts';
import { RecordSpool } from '../../../src/sync/spool.ts';
import { SkewMeter } from '../../../src/upstream/clock.ts';
import { TEST_NOW } from '../../support/clock.ts';
import { openTestStore, type TestStore, testClient, testSchool } from '../helpers.ts';

/** An upstream nobody listens on: for stages that only touch the store. */
export const NO_UPSTREAM: Pick<Sandbox, 'url' | 'token'> = { url: 'http://127.0.0.1:9', token: 'unused' };

/** A real logger writing into lines the test reads. */
export function lineLogger() {
  const out = new PassThrough();
  const lines: { level: string; msg: string; [k: string]: unknown }[] = [];
  out.on('data', (b: Buffer) => {
    for (const l of b.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
  });
  return { log: createLogger({ level: 'info', destination: out }), lines };
}

export const spec = (kind: ResourceKind): ResourceSpec => RESOURCES.find((r) => r.kind === kind)!;

/** A school of its own (unique id) on `upstream`. */
export function stageSchool(
  id: string,
  upstream: Pick<Sandbox, 'url' | 'token'> = NO_UPSTREAM,
  patch: Record<string, unknown> = {},
): SchoolConfig {
  return testSchool(upstream, { id, ...patch });
}

/** The context of a resource's turn, as runResources builds it; `marks` and `cursors` read like its start. */
export async function stageContext(
  store: Pick<Store, 'records' | 'transaction'>,
  school: SchoolConfig,
  opts: {
    upstream?: Pick<Sandbox, 'url' | 'token'>;
    startedAt?: Date;
    kinds?: ResourceKind[];
  } = {},
) {
  const startedAt = opts.startedAt ?? new Date();
  const { log, lines } = lineLogger();
  const progress: PullProgress[] = [];
  const kinds = opts.kinds ?? RESOURCES.map((r) => r.kind);
  const { cursors, missing } = await store.records.pullState(school.id, kinds);
  const ctx: ResourceRunContext = {
    store,
    client: testClient(opts.upstream ?? NO_UPSTREAM, { maxRetries: 0 }),
    school,
    window: syncWindow(startedAt, school.syncWindow),
    startedAt,
    beatAt: startedAt,
    now: () => new Date(),
    onProgress: (e) => progress.push(e),
    log,
    skew: new SkewMeter(),
    marks: missing,
    cursors,
  };
  return { ctx, lines, progress };
}

/** The world of a test file of the stages that read the upstream: the sandbox's small school (seed 7, at TEST_NOW)
 * over HTTP and a real SQLite store, opened before the file's tests and closed after them. Its fields are there
 * once the hooks have run: read them inside tests and hooks, not at the top of the file. */
export function stageWorld() {
  let sandbox: Sandbox | undefined;
  let ts: TestStore | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 7, scale: 'small', now: TEST_NOW });
    ts = await openTestStore('sqlite');
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });
  const opened = <T>(part: T | undefined): T => {
    if (part === undefined) throw new Error('stageWorld: read before its beforeAll ran');
    return part;
  };
  return {
    get sandbox(): Sandbox {
      return opened(sandbox);
    },
    get store(): Store {
      return opened(ts).store;
    },
    /** A turn's context for `school` on the sandbox (or `upstream`), started at the sandbox's now. */
    context: (school: SchoolConfig, upstream?: Pick<Sandbox, 'url' | 'token'>) =>
      stageContext(opened(ts).store, school, {
        upstream: upstream ?? opened(sandbox),
        startedAt: new Date(opened(sandbox).now()),
      }),
  };
}

/** A download that brought nothing to write: only which ids the listing returned, and what it said of them. */
export function gathered(seen: Id[], over: Partial<Gathered> = {}): Gathered {
  return {
    records: new RecordSpool(),
    seen: new Set(seen),
    allSeen: false,
    unchanged: seen.length,
    unknownSkipped: 0,
    malformed: new Set(),
    customFields: new Map(),
    customFieldsUnchanged: 0,
    tallies: [],
    confirmations: new Map(),
    listedAt: null,
    askedAfter: null,
    askedAt: Date.now(),
    ...over,
  };
}
