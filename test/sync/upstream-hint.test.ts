// What an upstream refusal means for whoever configured the school (sync/upstream-hint.ts): one line naming the
// setting to check, the URL shown without credentials or query; nothing for failures that are not the configuration's.
import { describe, expect, it } from 'vitest';
import { explainUpstreamFailure, isWrongPath } from '../../src/sync/upstream-hint.ts';
import {
  ForbiddenError,
  NotFoundError,
  ServerError,
  UnauthorizedError,
  UnreachableError,
} from '../../src/upstream/errors.ts';

const school = {
  upstream: { url: 'https://user:secret@api.example.com/v1/?key=hush', token: 't' },
  demo: false,
};
const envNamed = { ...school, upstreamSettings: { url: 'UPSTREAM_URL', token: 'UPSTREAM_TOKEN' } };

describe('explaining an upstream failure', () => {
  it('names the token on a 401 or 403, with the URL shown without its secrets', () => {
    const line = explainUpstreamFailure(new UnauthorizedError('GET /sessions', 401, 'bad token'), school)!;
    expect(line).toMatch(
      /^the upstream token was refused by the upstream service at https:\/\/api\.example\.com\/v1:/,
    );
    expect(line).not.toContain('secret');
    expect(line).not.toContain('hush');
    expect(explainUpstreamFailure(new ForbiddenError('GET /teams', 403, 'no'), envNamed)).toMatch(
      /^UPSTREAM_TOKEN may not read everything rostercal needs/,
    );
  });

  it('names the URL’s path on a listing’s 404, and its host when it cannot be reached', () => {
    expect(explainUpstreamFailure(new NotFoundError('GET /sessions', 404, 'no'), envNamed)).toMatch(
      /^check the path of UPSTREAM_URL: https:\/\/api\.example\.com\/v1 has no such endpoint/,
    );
    const unreachable = new UnreachableError('GET /sessions', 'https://api.example.com', 'ECONNREFUSED');
    expect(explainUpstreamFailure(unreachable, envNamed)).toBe(
      `${unreachable.reason}: check UPSTREAM_URL (host and port), DNS, firewall and certificates`,
    );
  });

  it('says nothing of a record’s 404, a server error, another error, or the demo school', () => {
    expect(isWrongPath(new NotFoundError('GET /sessions', 404, 'no'))).toBe(true);
    expect(isWrongPath(new NotFoundError('GET /teams/42', 404, 'gone'))).toBe(false);
    expect(explainUpstreamFailure(new NotFoundError('GET /teams/42', 404, 'gone'), school)).toBeNull();
    expect(explainUpstreamFailure(new ServerError('GET /sessions', 500, 'oops', true), school)).toBeNull();
    expect(explainUpstreamFailure(new Error('bug'), school)).toBeNull();
    const demo = { ...school, demo: true };
    expect(explainUpstreamFailure(new UnauthorizedError('GET /sessions', 401, 'no'), demo)).toBeNull();
  });

  it('does not show a URL it cannot read', () => {
    const bad = { upstream: { url: 'not a url', token: 't' }, demo: false };
    expect(explainUpstreamFailure(new UnauthorizedError('GET /sessions', 401, 'no'), bad)).toContain(
      'at [the configured URL]',
    );
  });
});
