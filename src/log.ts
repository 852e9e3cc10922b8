// Structured logs (pino) for every part of rostercal.
// Secrets must never reach a log line: upstream/provider tokens, Authorization headers and feed tokens are
// censored by key at any depth, and every string of a line (its message, its fields, its error) is scrubbed of
// the secret forms scrubSecrets knows.
import pino from 'pino';
import { escapeForTerminal } from './terminal.ts';

export type Logger = pino.Logger;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const SECRET_KEYS = [
  'token',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'apiToken',
  'feedToken',
  'secret',
  'clientSecret',
  'client_secret',
  'password',
  'privateKey',
  'private_key',
  'authorization',
  'Authorization',
  'cookie',
];

/** pino's redaction paths only match fixed depths: cover the depths where secrets turn up in practice. */
export const REDACT_PATHS: string[] = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  ...SECRET_KEYS.map((k) => `*.*.${k}`),
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'request.headers.authorization',
  'upstream.token',
  'school.upstream.token',
  'config.schools[*].upstream.token',
];

const CENSOR = '[redacted]';

/** A PEM private key (any kind), its body up to its END line, or to the end of a text cut short. */
const PRIVATE_KEY = /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY)-----[\s\S]*?(?:-----END \1-----|(?=["'])|$)/g;
/**
 * A DER key or certificate body in base64 (an ASN.1 SEQUENCE starts `MII`), even without its header (a parser's
 * quote of a key file starts mid-way), after a newline escaped in JSON too.
 */
const DER_BODY = /(?<=^|[^A-Za-z0-9+/]|\\n)MII[A-Za-z0-9+/]{30,}={0,2}/g;
/** A field that names a secret, in JSON (quoted, also inside a JSON string) or as `name=value` text. */
const SECRET_FIELD =
  /((?:\\?["'])?\b(?:(?:access|refresh|id|api|auth|session|feed|client)[_-]?(?:token|secret|key)|passwo?r?d|private[_-]?key|apikey)(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?)(?!\[redacted)([^"'\s,&}\\]+)/gi;
/** A generic `"token":` or `"secret":` key, only when quoted as a JSON key (plain text says "the token: …"). */
const QUOTED_SECRET_KEY =
  /(\\?["'][A-Za-z_]*(?:token|secret)\\?["']\s*:\s*(?:\\?["'])?)(?!\[redacted)([^"'\s,&}\\]+)/gi;
/** Google OAuth refresh tokens (`1//0g…`), plain or URL-encoded. */
const GOOGLE_REFRESH = /\b1(?:\/\/|%2F%2F)[\w-]{20,}/gi;
/** Capability paths: feed and family links. */
const CAPABILITY_PATH = /(\/(?:feeds?|family)\/)([A-Za-z0-9_-]{16,})/g;
/** Cheap first look: a text without any of these holds none of the forms below. */
const MAYBE_SECRET =
  /bearer|basic|token|secret|key|passw|code=|sig|ya29|eyJ|\/(?:feeds?|family)\/[\w-]{16}|1(?:\/\/|%2F%2F)|-----BEGIN|MII/i;
/bearer|basic|token|secret|key|passw|code|sig|ya29|eyJ|feed|family|1\/\/|%2F%2F|-----BEGIN|MII/i;

/**
 * Masks secrets inside free text: `Bearer …`/`Basic …` credentials (as providers echo an Authorization header
 * back in their error text), `token=…` query values, fields that name a secret (`"access_token": "…"`,
 * `"clientSecret":"…"`, `client_secret=…`, also escaped inside a JSON string), PEM private keys and DER key
 * bodies, Google access (`ya29.…`) and refresh (`1//…`) tokens, JWTs, and capability paths `/feeds/<token>`,
 * `/family/<token>`. Used on every log line and on every error a run records.
 */
export function scrubSecrets(text: string): string {
  if (!MAYBE_SECRET.test(text)) return text;
  return text
    .replace(PRIVATE_KEY, `-----BEGIN $1-----${CENSOR}`)
    .replace(DER_BODY, CENSOR)
    .replace(/\b(bearer|basic)(\s+|%20|\+)[A-Za-z0-9._~+/=-]+/gi, `$1$2${CENSOR}`)
    .replace(/([?&](?:token|access_token|key|secret|code|sig|signature)=)[^&\s"']+/gi, `$1${CENSOR}`)
    .replace(SECRET_FIELD, `$1${CENSOR}`)
    .replace(QUOTED_SECRET_KEY, `$1${CENSOR}`)
    .replace(GOOGLE_REFRESH, CENSOR)
    .replace(/\bya29\.[\w.-]+/g, CENSOR)
    .replace(/\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*/g, CENSOR)
    .replace(CAPABILITY_PATH, (_m, p: string, t: string) => `${p}${maskToken(t)}`);
}

const SECRET_KEY_NAMES = new Set(SECRET_KEYS.map((k) => k.toLowerCase()));

/**
 * A log line's fields as they may be written: every string scrubbed, every field named like a secret censored,
 * at any depth (pino's redaction paths cover fixed depths only: a provider error's `config.headers.Authorization`
 * sits deeper). Copies; the caller's objects are left alone. Errors are left to the `err` serializer.
 */
export function scrubLogFields(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubSecrets(value);
  if (value === null || typeof value !== 'object' || value instanceof Error || depth > 8) return value;
  if (Array.isArray(value)) return value.map((v) => scrubLogFields(v, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    out[k] = SECRET_KEY_NAMES.has(k.toLowerCase()) && v != null ? CENSOR : scrubLogFields(v, depth + 1);
  return out;
}

/** The first few characters of a token, enough to tell two apart in an operator's eyes, never enough to use. */
export function maskToken(token: string): string {
  if (token.length <= 8) return CENSOR;
  return `${token.slice(0, 4)}…`;
}

export interface LoggerOptions {
  /** Default info; commands pass the configuration's logLevel (LOG_LEVEL). */
  level?: LogLevel;
  /** A name for the component (`sync`, `web`, …), kept in every line. */
  name?: string;
  /** Where lines go; defaults to stdout. CLI commands that print to stdout log to stderr (fd 2). */
  destination?: number | NodeJS.WritableStream;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const level = opts.level ?? 'info';
  const options: pino.LoggerOptions = {
    level,
    redact: { paths: REDACT_PATHS, censor: CENSOR },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      level: (label) => ({ level: label }),
      log: (fields) => scrubLogFields(fields) as Record<string, unknown>,
    },
    hooks: {
      // Message strings are free text: scrub them too (cheap, and only on lines that are really written).
      logMethod(args, method) {
        const scrubbed = args.map((a) => (typeof a === 'string' ? scrubSecrets(a) : a)) as typeof args;
        method.apply(this, scrubbed);
      },
      // pino appends each child's bindings and the call's fields to its parent's, so a key bound twice (a
      // `component` refined by a child, a `schoolId` bound and passed again) is written twice, and log tools
      // disagree on which one counts. Each line goes out with each key once: the last, most specific value.
      streamWrite: oneKeyOnce,
    },
    serializers: {
      // Every field of the error (a provider's response body, its request's headers), not only its message.
      // pino's serializer hands back what is not an Error as it came: a string must stay a string, not be spread.
      err: (err: unknown) => {
        const serialized: unknown = pino.stdSerializers.err(err as Error);
        return scrubLogFields(
          typeof serialized === 'object' && serialized !== null ? { ...serialized } : serialized,
        );
      },
    },
  };
  if (opts.name) options.name = opts.name;
  const dest = opts.destination;
  const sink =
    dest === undefined || typeof dest === 'number'
      ? pino.destination({ dest: dest ?? 1, sync: dest !== undefined })
      : dest;
  return pino(options, terminalSafeSink(sink));
}

/**
 * Log lines reach terminals (`docker logs`, a CLI's stderr): JSON escapes C0 controls itself, and this escapes
 * what it leaves raw (C1 controls, bidi overrides, line separators: terminal.ts), so an upstream name in a line
 * cannot act on the terminal. The line stays the same JSON.
 */
function terminalSafeSink(sink: pino.DestinationStream): pino.DestinationStream {
  const flushable = sink as pino.DestinationStream & { flush?: (cb: (err?: Error) => void) => void };
  return {
    write: (line: string) => sink.write(escapeForTerminal(line)),
    ...(flushable.flush ? { flush: (cb: (err?: Error) => void) => flushable.flush!(cb) } : {}),
  } as pino.DestinationStream;
}

/** A serialised line with every repeated key merged into one (JSON.parse keeps the last value). */
function oneKeyOnce(line: string): string {
  try {
    return `${JSON.stringify(JSON.parse(line))}\n`;
  } catch {
    return line;
  }
}

/** A logger that writes nothing: the default for library calls whose caller did not pass one. */
export const silentLogger: Logger = pino({ level: 'silent' });
