// What every part of the configuration shares when it validates: the error type, one way of turning zod issues
// into lines that name the field (`config: schools[0].upstream.url: is not an http(s) URL`), the http(s) URL
// field, and `env:NAME` secret references. A leaf module, so that src/config.ts and the schemas it gathers from
// their owners (src/config/push-targets.ts) both build on it without importing each other.
import { z } from 'zod';

/** Thrown for any configuration problem; its message is meant to be printed as is. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** One offending field: where (as a person writes it) and what is wrong. */
export interface Problem {
  path: string;
  message: string;
}

/** Renders a zod issue path the way a person writes it: `schools[0].upstream.url`. */
export function formatPath(p: readonly PropertyKey[]): string {
  let out = '';
  for (const part of p) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

/** A zod issue as a problem; `base` is prepended to its path (a list validated on its own inside a bigger file). */
export function issueProblem(issue: z.core.$ZodIssue, base: readonly PropertyKey[] = []): Problem {
  const p = [...base, ...issue.path];
  if (issue.code === 'unrecognized_keys') {
    const at = formatPath(p);
    const keys = issue.keys.map((k) => (at ? `${at}.${k}` : k));
    return { path: keys.join(', '), message: issue.keys.length > 1 ? 'unknown fields' : 'unknown field' };
  }
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) {
    return { path: formatPath(p), message: 'is required' };
  }
  return { path: formatPath(p), message: issue.message.replace(/^Invalid input: /, '') };
}

/** One ConfigError for every problem, each on its own line; `where` (the file) closes the message. */
export function configError(problems: readonly Problem[], where = ''): ConfigError {
  const lines = [...new Set(problems.map((p) => `config: ${p.path ? `${p.path}: ` : ''}${p.message}`))];
  const text = lines.join('\n');
  return new ConfigError(where ? `${text}\n(in ${where})` : text);
}

/** The URL, or null when `value` is not one. */
function urlOf(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}
/** A user or password in a URL: fetch refuses such URLs, and the error quoting it would leak them. */
const carriesCredentials = (u: URL) => u.username !== '' || u.password !== '';
const CREDENTIALS_IN_URL =
  'must not carry a user name or password (the token or key goes in its own setting, never in the URL)';

/** A URL without echoing it back in errors: it may carry credentials, which are refused. */
export const httpUrl = z.string().superRefine((value, ctx) => {
  const u = urlOf(value);
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:'))
    ctx.addIssue({ code: 'custom', message: 'is not an http(s) URL' });
  else if (carriesCredentials(u)) ctx.addIssue({ code: 'custom', message: CREDENTIALS_IN_URL });
});

/**
 * An API's base URL: an http(s) URL to which paths are added, so without a query or fragment (a key put there
 * would be sent where it was not meant to go, and the client refuses such a URL later, as our fault: exit 1).
 */
export const apiBaseUrl = httpUrl.superRefine((value, ctx) => {
  const u = urlOf(value);
  if (u && (u.search !== '' || u.hash !== ''))
    ctx.addIssue({
      code: 'custom',
      message:
        'must not carry a query or fragment (a path is added to it; a token or key goes in its own setting, never in the URL)',
    });
});

/** An https URL: for services whose client libraries send credentials only over https (Microsoft's). */
export const httpsUrl = z.string().superRefine((value, ctx) => {
  const u = urlOf(value);
  if (u?.protocol !== 'https:')
    ctx.addIssue({
      code: 'custom',
      message: 'must be an https:// URL (Microsoft’s libraries send credentials over https only)',
    });
  else if (carriesCredentials(u)) ctx.addIssue({ code: 'custom', message: CREDENTIALS_IN_URL });
});

/** A secret given literally or as `env:NAME`. */
export const secret = z.string().min(1, 'must not be empty');

/**
 * The value of a secret field: itself, or for `env:NAME` the variable's value. A missing variable is recorded
 * as a problem at `path` (never the value) and yields ''.
 */
export function resolveSecret(
  value: string,
  env: NodeJS.ProcessEnv,
  path: string,
  problems: Problem[],
): string {
  const ref = /^env:(.+)$/.exec(value);
  if (!ref) return value;
  const v = env[ref[1]!];
  if (!v) {
    problems.push({ path, message: `environment variable ${ref[1]} is not set` });
    return '';
  }
  return v;
}
