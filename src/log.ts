// Structured logs (pino) for every part of rostercal.
// Secrets must never reach a log line: upstream/provider tokens, Authorization headers and feed tokens are
// censored by key at any depth, and every string of a line (its message, its fields, its error) is scrubbed of
// the secret forms scrubSecrets knows.
import pino from 'pino';
import {
  CENSOR,
  LOG_LEVELS,
  type LogLevel,
  maskToken,
  SECRET_KEYS,
  scrubLogFields,
  scrubSecrets,
} from './log-text.ts';
import { escapeForTerminal, terminalSafe } from './terminal.ts';

export { LOG_LEVELS, type LogLevel, maskToken, scrubLogFields, scrubSecrets };

export type Logger = pino.Logger;

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

export interface LoggerOptions {
  /** Default info; commands pass the configuration's logLevel (LOG_LEVEL). */
  level?: LogLevel;
  /** A name for the component (`sync`, `web`, …), kept in every line. */
  name?: string;
  /** Where lines go; defaults to stdout. CLI commands that print to stdout log to stderr (fd 2). */
  destination?: number | NodeJS.WritableStream;
  /**
   * `json` (default) for log tools; `text` for a command whose stderr shares a terminal or a pipe with its
   * summary: pino's JSON between `sync`'s progress and summary lines read as noise (an outside tester).
   */
  format?: 'json' | 'text';
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
  return pino(options, opts.format === 'text' ? textSink(sink, opts.name) : terminalSafeSink(sink));
}

/** Fields a text line names, in this order, as words ("school hill, run 3"). */
const CONTEXT: readonly (readonly [string, string])[] = [
  ['schoolId', 'school'],
  ['runId', 'run'],
  ['resource', 'resource'],
  ['target', 'target'],
  ['job', 'job'],
];

/**
 * Each line as a command's other messages read (`rostercal sync: error: pull failed (school hill, run 1): why`):
 * the message, where it happened, and the reason an error or a warning carries. The JSON's other fields (counts,
 * timings) are what the command's own summary prints.
 */
function textSink(sink: pino.DestinationStream, name: string | undefined): pino.DestinationStream {
  const flushable = sink as pino.DestinationStream & { flush?: (cb: (err?: Error) => void) => void };
  return {
    write: (line: string) => sink.write(`${terminalSafe(textLine(line, name))}\n`),
    ...(flushable.flush ? { flush: (cb: (err?: Error) => void) => flushable.flush!(cb) } : {}),
  } as pino.DestinationStream;
}

function textLine(line: string, name: string | undefined): string {
  let fields: Record<string, unknown>;
  try {
    fields = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.trimEnd();
  }
  const where = CONTEXT.flatMap(([key, word]) =>
    typeof fields[key] === 'string' || typeof fields[key] === 'number' ? [`${word} ${fields[key]}`] : [],
  );
  const why = reasonOf(fields.failure) ?? reasonOf(fields.err) ?? reasonOf(fields.warning);
  return `rostercal${name ? ` ${name}` : ''}: ${String(fields.level ?? 'log')}: ${String(fields.msg ?? '')}${
    where.length ? ` (${where.join(', ')})` : ''
  }${why && !String(fields.msg ?? '').includes(why) ? `: ${why}` : ''}`;
}

/** The words of an error or failure field: its explanation, else its reason or message; a string as it is. */
function reasonOf(value: unknown): string | null {
  if (typeof value === 'string') return value || null;
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  for (const key of ['explained', 'reason', 'message'])
    if (typeof v[key] === 'string' && v[key]) return v[key] as string;
  return null;
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
