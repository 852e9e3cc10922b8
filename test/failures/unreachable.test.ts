// An unreachable upstream (connection refused, no such host, a certificate that does not verify) ends the real
// `rostercal sync` within seconds (the run's own record: at most two retries) with one line naming the URL and the
// cause; later resources are not tried.
// 5xx keep their backoff (test/upstream/transport.test.ts, test/sync/chaos.test.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { createSelfSignedCert, type SelfSignedCert } from '../fakes/tls.ts';
import { rostercal } from '../support/cli.ts';
import { downUpstream } from '../support/ports.ts';

describe('an unreachable upstream (rostercal sync)', () => {
  let dir: string;
  let cert: SelfSignedCert;
  let https: Server;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rostercal-unreachable-'));
    cert = createSelfSignedCert();
    https = createHttpsServer({ key: cert.key, cert: cert.cert }, (_req, res) => res.end('{}'));
    await new Promise<void>((r) => https.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    https?.close();
    cert?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  const sync = (url: string) =>
    rostercal(['sync', '--full'], {
      UPSTREAM_URL: url,
      UPSTREAM_TOKEN: 'secret-token-abc123',
      SCHOOL_TZ: 'Europe/London',
      SCHOOL_ID: 'hillcrest',
      SCHOOL_NAME: 'Hillcrest College',
      PUBLIC_URL: 'https://calendars.hillcrest.example',
      DATA_DIR: dir,
    });

  async function expectFastFailure(url: string, cause: RegExp) {
    const child = sync(url);
    expect(await child.exit, child.output()).toBe(1);
    // "Fast" as the product decides it: how often it retried (the two retries an unreachable service gets, 1 and
    // 2 s apart, never the full backoff of 63 s), and its own record of the run (from the pull's start, so not the
    // process's start-up). The duration is a deadline, not a measure: each attempt's name lookup is the resolver's
    // time, not the product's (glibc waits 5 s per unanswered query), so it only rules out the full backoff.
    const store = await openStore({ dataDir: dir });
    const [run] = await store.runs.listRuns('hillcrest', { limit: 1 });
    await store.close();
    expect(run?.status).toBe('failed');
    expect(run!.retries, child.output()).toBeLessThanOrEqual(2);
    expect(Date.parse(run!.finishedAt!) - Date.parse(run!.startedAt), child.output()).toBeLessThan(40_000);
    const out = child.output();
    const escaped = url.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    expect(out).toMatch(new RegExp(`cannot reach the upstream service at ${escaped}: ${cause.source}`));
    expect(out).toMatch(/sessions\s+not attempted/);
    expect(out).not.toContain('secret-token-abc123');
  }

  it('connection refused: fails in seconds, naming the URL and the cause', async () => {
    await expectFastFailure((await downUpstream()).url, /connection refused \(ECONNREFUSED\)/);
  });

  it('no such host', async () => {
    await expectFastFailure(
      'http://rostercal-no-such-host.invalid',
      /(no such host \(DNS\) \(ENOTFOUND\)|the host name could not be resolved \(DNS\) \(EAI_AGAIN\))/,
    );
  });

  it('a port fetch refuses to open (9, "bad port"): fails in seconds saying so, instead of retrying for minutes', async () => {
    await expectFastFailure('http://127.0.0.1:9', /the port is one fetch refuses to connect to \(bad port\)/);
  });

  it('a TLS certificate that does not verify', async () => {
    const { port } = https.address() as AddressInfo;
    await expectFastFailure(`https://127.0.0.1:${port}`, /TLS: .+ \(\w+\)/);
  });
});
