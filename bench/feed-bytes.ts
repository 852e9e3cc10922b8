// node bench/feed-bytes.ts — a check, not a timing: the bytes of every feed of the demo school, as one digest.
//
// The demo school (seed and scale of `serve --demo`) at a pinned instant is pulled into two new SQLite stores
// whose UID domain is pinned too. In the first, the school re-render renders every feed (`renderSchool`, the
// path after a pull) and each is read back; in the second, each feed is rendered on its first request (`get`,
// the request path). Both must agree feed by feed; the digest printed is what a refactoring of feeds/ must
// leave unchanged (run it before and after). Exit 1 when the two paths disagree.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { DEMO_SANDBOX, parseConfig } from '../src/config.ts';
import { listFeedDefs } from '../src/feeds/feed-defs.ts';
import { FeedService } from '../src/feeds/feed-service.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { openStore, type Store } from '../src/store/index.ts';
import { pullSchool } from '../src/sync/pull.ts';
import { createUpstreamClient } from '../src/upstream/client.ts';

const NOW = '2026-03-02T09:00:00.000Z';
const SCHOOL = 'demo';

const sandbox = await startSandbox({ seed: DEMO_SANDBOX.seed, scale: DEMO_SANDBOX.scale, now: NOW });
const school = parseConfig({
  schools: [
    {
      id: SCHOOL,
      name: 'Demo School (sandbox)',
      upstream: { url: sandbox.url, token: sandbox.token },
      timeZone: DEMO_SANDBOX.timeZone,
    },
  ],
}).schools[0]!;
const client = createUpstreamClient({ baseUrl: sandbox.url, token: sandbox.token });
// The sandbox's clock runs on from its pin: each pull starts it at the pin again, and the product's clock stays.
const now = () => new Date(NOW);
const dir = mkdtempSync(path.join(tmpdir(), 'rostercal-feed-bytes-'));

/** A new store with a pinned UID domain (a new store's is random), the demo school pulled into it. */
async function pulledStore(name: string): Promise<Store> {
  const file = path.join(dir, `${name}.sqlite`);
  await (await openStore({ file })).close();
  const raw = new DatabaseSync(file);
  raw.exec("update installation set uid_domain = 'feedbytes000'");
  raw.close();
  const store = await openStore({ file });
  sandbox.setNow(NOW);
  const pulled = await pullSchool({ store, client, school, kind: 'full', now });
  if (pulled.status === 'failed') throw new Error(`pull failed: ${pulled.errors.join('; ')}`);
  return store;
}

const digestOf = (body: Buffer) => createHash('sha256').update(body).digest('hex');

try {
  const viaPass = await pulledStore('pass');
  const viaRequest = await pulledStore('request');
  const pass = new FeedService({ store: viaPass, now });
  const request = new FeedService({ store: viaRequest, now });
  const started = performance.now();
  const rendered = await pass.renderSchool(SCHOOL, { all: true });
  const defs = await listFeedDefs(viaPass, SCHOOL);
  const all = createHash('sha256');
  let bytes = 0;
  let differ = 0;
  for (const def of defs) {
    const a = (await pass.get(SCHOOL, def.scope, def.scopeId))!;
    const b = (await request.get(SCHOOL, def.scope, def.scopeId))!;
    const da = digestOf(a.body);
    if (da !== digestOf(b.body)) {
      differ++;
      console.error(`differs: ${def.scope} ${def.scopeId}`);
    }
    all.update(`${def.scope}:${def.scopeId}:${da}:${a.etag}:${a.lastModified.toISOString()}\n`);
    bytes += a.body.length;
  }
  console.log(
    `${defs.length} feeds (${rendered.rendered} rendered by the pass), ${(bytes / 1e6).toFixed(1)} MB, ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  console.log(`digest ${all.digest('hex')}`);
  if (differ) {
    console.error(`${differ} feeds differ between the school re-render and the request path`);
    process.exitCode = 1;
  }
  await viaPass.close();
  await viaRequest.close();
} finally {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
}
