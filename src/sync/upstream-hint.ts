// What an upstream refusal means for the person who configured the school: a 401 is the token, a 404 on a
// listing is the path of the URL (`…/v1` missing or doubled), an unreachable host is the URL's host. One line that
// names the setting to check, as a bad configuration file does, instead of the HTTP error repeated per resource.
import type { SchoolConfig } from '../config.ts';
import {
  ForbiddenError,
  NotFoundError,
  UnauthorizedError,
  UnreachableError,
  UpstreamError,
} from '../upstream/errors.ts';

/** `GET /sessions`, not `GET /teams/42`: the listings the spec never answers 404. */
function isListing(endpoint: string): boolean {
  return /^GET \/[a-z-]+$/.test(endpoint);
}

/** A listing answering 404: the base URL's path is wrong, so every other endpoint fails alike. */
export function isWrongPath(err: unknown): boolean {
  return err instanceof NotFoundError && isListing(err.endpoint);
}

/** The base URL without credentials or query (a query string may hold a key). */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString().replace(/\/+$/, '');
  } catch {
    return '[the configured URL]';
  }
}

/** One line saying what failed and which setting to check, or null when the failure is not the configuration's. */
export function explainUpstreamFailure(
  err: unknown,
  school: Pick<SchoolConfig, 'upstream' | 'upstreamSettings' | 'demo'>,
): string | null {
  if (!(err instanceof UpstreamError) || school.demo) return null;
  const names = school.upstreamSettings ?? {
    url: 'the upstream URL',
    token: 'the upstream token',
  };
  const url = shownUrl(school.upstream.url);
  const said = err.message;
  // The setting first: `status` and the admin page show the start of a run's error.
  if (err instanceof UnauthorizedError)
    return `${names.token} was refused by the upstream service at ${url}: check it is the school's API token for that service (${said})`;
  if (err instanceof ForbiddenError)
    return `${names.token} may not read everything rostercal needs: check it is the school's token with read access to every resource (${said})`;
  if (isWrongPath(err))
    return `check the path of ${names.url}: ${url} has no such endpoint; it must be the API's base address, the part before /sessions, e.g. https://api.example.com/v1 (${said})`;
  if (err instanceof UnreachableError)
    return `${err.reason}: check ${names.url} (host and port), DNS, firewall and certificates`;
  return null;
}
