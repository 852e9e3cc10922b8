// Structured logs (pino) for every part of rostercal.
// Secrets must never reach a log line: upstream/provider tokens, Authorization headers and feed tokens are
// censored by key wherever they commonly sit, and any bearer token or `token=` query value that slipped into a
// message string is masked as well.
import pino from 'pino';

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

/**
 * Masks secrets inside free text: `Bearer …`/`Basic …` credentials (as providers echo an Authorization header
 * back in their error text), `token=…` query values, `"access_token": "…"`-style fields, Google access tokens
 * (`ya29.…`), JWTs, and feed URLs `/feeds/<token>`. Used on every log line and on every error a run records.
 */
export function scrubSecrets(text: string): string {
  return text
    .replace(/\b(bearer|basic)(\s+|%20|\+)[A-Za-z0-9._~+/=-]+/gi, `$1$2${CENSOR}`)
    .replace(/([?&](?:token|access_token|key|secret|code|sig|signature)=)[^&\s"']+/gi, `$1${CENSOR}`)
    .replace(
      /(["']?\b(?:access_token|refresh_token|id_token|client_secret|api_key|apikey|password|private_key)["']?\s*[:=]\s*["']?)[^"'\s,&}]+/gi,
      `$1${CENSOR}`,
    )
    .replace(/\bya29\.[\w.-]+/g, CENSOR)
    .replace(/\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*/g, CENSOR)
    .replace(/(\/feeds?\/)([A-Za-z0-9_-]{16,})/g, (_m, p: string, t: string) => `${p}${maskToken(t)}`);
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
    formatters: { level: (label) => ({ level: label }) },
    hooks: {
      // Message strings are free text: scrub them too (cheap, and only on lines that are really written).
      logMethod(args, method) {
        const scrubbed = args.map((a) => (typeof a === 'string' ? scrubSecrets(a) : a)) as typeof args;
        method.apply(this, scrubbed);
      },
    },
    serializers: {
      err: (err: unknown) => {
        const s = pino.stdSerializers.err(err as Error);
        if (typeof s.message === 'string') s.message = scrubSecrets(s.message);
        if (typeof s.stack === 'string') s.stack = scrubSecrets(s.stack);
        return s;
      },
    },
  };
  if (opts.name) options.name = opts.name;
  const dest = opts.destination;
  if (dest === undefined) return pino(options);
  if (typeof dest === 'number') return pino(options, pino.destination({ dest, sync: true }));
  return pino(options, dest);
}

/** A logger that writes nothing: the default for library calls whose caller did not pass one. */
export const silentLogger: Logger = pino({ level: 'silent' });
