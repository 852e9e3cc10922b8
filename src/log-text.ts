// What a log line may say, without the logger: the levels, and every secret form scrubbed (log.ts writes the
// lines with pino). Apart from log.ts so that what only scrubs a text (the configuration, the store's recorded
// errors, `rostercal status`) does not load pino (~30 modules) into a command that never logs.
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const SECRET_KEYS = [
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

export const CENSOR = '[redacted]';

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
/**
 * A credential after its scheme, as providers echo an Authorization header back; a placeholder in angle brackets
 * (`Bearer <token>`) is one too. "a bearer token", "basic auth" are words (PLAIN_WORD), not credentials.
 */
const BEARER = /\b(bearer|basic)(\s+|%20|\+)(<[^<>\s]{1,200}>|[A-Za-z0-9._~+/=-]+)/gi;
/** A name written bare and then `: ` (a colon and a space), as prose names a setting: "FEED_SECRET: must be…". */
const BARE_NAME_THEN_COLON = /^[^"'\\]*:\s+$/;
/** An ordinary word (capitalised at most, closing punctuation at most): no token looks like one. */
const PLAIN_WORD = /^[A-Za-z]?[a-z]+[.;:!?)]*$/;

/**
 * Whether a secret-named field's "value" is the next word of a sentence: a setting named in prose ("vouches for
 * FEED_SECRET: neither the database…") is not followed by its value. Only a bare name then `: ` then a plain word;
 * `name=value`, `name:value`, a quoted JSON key, or anything shaped like a token (digits, symbols, mixed case)
 * is still taken for a value.
 */
function isProse(name: string, value: string): boolean {
  return BARE_NAME_THEN_COLON.test(name) && PLAIN_WORD.test(value);
}
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

/** The configuration's own secrets, as loaded (rememberSecrets). */
const KNOWN_SECRETS = new Set<string>();
/** Shorter values are not remembered: cutting them out of every text would cut ordinary words too. */
const KNOWN_MIN = 8;

/**
 * The configuration's secrets (ADMIN_TOKEN, FEED_SECRET, the upstream tokens…): scrubSecrets cuts each out of any
 * text, whatever its shape and whatever precedes it, so a secret that reads like a word ("FEED_SECRET:
 * correcthorse…", which prose would keep) still never reaches a line.
 */
export function rememberSecrets(values: Iterable<string | null | undefined>): void {
  for (const v of values) if (v && v.length >= KNOWN_MIN) KNOWN_SECRETS.add(v);
}

/**
 * Masks secrets inside free text: the configuration's own (rememberSecrets), `Bearer …`/`Basic …` credentials (as providers echo an Authorization header
 * back in their error text), `token=…` query values, fields that name a secret (`"access_token": "…"`,
 * `"clientSecret":"…"`, `client_secret=…`, also escaped inside a JSON string), PEM private keys and DER key
 * bodies, Google access (`ya29.…`) and refresh (`1//…`) tokens, JWTs, and capability paths `/feeds/<token>`,
 * `/family/<token>`. Used on every log line and on every error a run records.
 */
export function scrubSecrets(text: string): string {
  let known = text;
  for (const secret of KNOWN_SECRETS) if (known.includes(secret)) known = known.split(secret).join(CENSOR);
  if (!MAYBE_SECRET.test(known)) return known;
  return known
    .replace(PRIVATE_KEY, `-----BEGIN $1-----${CENSOR}`)
    .replace(DER_BODY, CENSOR)
    .replace(BEARER, (m, scheme: string, gap: string, value: string) =>
      PLAIN_WORD.test(value) ? m : `${scheme}${gap}${CENSOR}`,
    )
    .replace(/([?&](?:token|access_token|key|secret|code|sig|signature)=)[^&\s"']+/gi, `$1${CENSOR}`)
    .replace(SECRET_FIELD, (m, name: string, value: string) =>
      isProse(name, value) ? m : `${name}${CENSOR}`,
    )
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

/**
 * A store error as an operator or an unauthenticated page may read it: the driver's words with any connection
 * string cut out (a PostgreSQL URL carries its password) and every secret form scrubbed, shortened. `/readyz` and
 * serve's banner say a store error in these words, so neither can say more than the other.
 */
export function storeErrorText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return scrubSecrets(text.replace(/\w+:\/\/\S+/g, '<url>')).slice(0, 300);
}

/** An absolute file path in free text (after a space, a quote, a bracket or at the start). */
const ABSOLUTE_PATH = /(?<=^|[\s("'[=])\/[\w.@%+~-]+(?:\/[\w.@%+~-]*)*/g;

/**
 * A text for an unauthenticated answer (`/readyz`): absolute file paths cut out. The data directory's location
 * says how the host is laid out and is nobody's business but the operator's, who reads it in serve's log.
 */
export function withoutPaths(text: string): string {
  return text.replace(ABSOLUTE_PATH, '<path>');
}

/** The first few characters of a token, enough to tell two apart in an operator's eyes, never enough to use. */
export function maskToken(token: string): string {
  if (token.length <= 8) return CENSOR;
  return `${token.slice(0, 4)}…`;
}
