// What `sync` prints of an upstream answer that is no answer of the API's: a proxy's HTML error page (nginx's 502,
// a CDN's page with its styles and scripts). The summary's `problem:` line says the status and a short cleaned
// text on one line, never the markup; the same cleaning the CLI gives everything it prints (terminal.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { formatSummary } from '../../src/sync/report.ts';
import { TEST_NOW } from '../support/clock.ts';
import { type ReverseProxy, reverseProxy } from '../support/proxy.ts';
import { openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

const NGINX =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n';
const CDN = `<!DOCTYPE html>\n<!--[if lt IE 7]> <html class="no-js ie6 oldie" lang="en-US"> <![endif]-->\n<html lang="en-US"><head>\n<meta charset="UTF-8" />\n<style>body{margin:0;padding:0} .cf-error{color:#404040}</style>\n<script>window._cf_chl_opt={cvId:'3'};</script>\n</head><body><div id="cf-wrapper"><h1><span class="cf-error-type">Error</span> <span class="code-label">502</span></h1>\n<h2 class="cf-subheadline">Bad gateway &amp; more</h2>${'<p>The web server reported a bad gateway error.</p>'.repeat(20)}</div></body></html>`;

describe.each([
  ['nginx', NGINX, /502 Bad Gateway/],
  ['a CDN', CDN, /Error 502 Bad gateway & more/],
])('a 502 HTML page from %s in front of /sessions', (_name, page, says) => {
  let sandbox: Sandbox;
  let front: ReverseProxy;
  let ts: TestStore;
  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 8, scale: 'small', now: TEST_NOW });
    front = await reverseProxy(sandbox.url, {
      intercept: (req, res) => {
        if (!/^\/sessions\b/.test(new URL(req.url ?? '/', 'http://x').pathname)) return false;
        res.writeHead(502, { 'content-type': 'text/html' }).end(page);
        return true;
      },
    });
    ts = await openTestStore('sqlite');
  });
  afterAll(async () => {
    await ts?.cleanup();
    await front?.close();
    await sandbox?.close();
  });

  it('the problem line is the status and a short cleaned text, on one line, without markup', async () => {
    const upstream = { url: front.url, token: sandbox.token };
    const run = await pullSchool({
      now: () => new Date(sandbox.now()),
      store: ts.store,
      client: testClient(upstream, { maxRetries: 1 }),
      school: testSchool(upstream),
      kind: 'full',
    });
    expect(run.status).not.toBe('succeeded');
    const lines = formatSummary(run, 'Hillcrest College').filter((l) => l.includes('problem:'));
    const sessions = lines.filter((l) => l.includes('/sessions'));
    expect(sessions.length, lines.join('\n')).toBeGreaterThan(0);
    for (const l of sessions) {
      console.log(l);
      expect(l).toMatch(/failed with 502/);
      expect(l).toMatch(says);
      expect(l).not.toMatch(/[<>]|&amp;|\r|\n|html|style|script|cf-|margin/i);
      expect(l.length).toBeLessThan(200);
    }
  });
});
