// What every `rostercal` command shares: argument parsing, usage text, exit codes, number options, the
// configuration and the store. A command file says what it does; this file says how a command behaves:
//
//   exit 0  success (and --help)
//   exit 1  the work failed (a pull, a push, a roster, an unexpected error)
//   exit 2  usage or configuration: a bad option or argument, or a ConfigError from any command
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { type Config, ConfigError, loadConfig } from '../config.ts';
import { storeErrorText } from '../log-text.ts';
import { openStoreFor, type Store, storeWhere } from '../store/index.ts';
import { isStoreUnreachable } from '../store/unreachable.ts';
import { ownLines, printError, printLines } from '../terminal.ts';

export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** A mistake in how the command was called: printed with the usage text, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

type Values<O extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ options: O; strict: true; allowPositionals: true }>
>['values'];

export interface CommandContext<O extends ParseArgsOptionsConfig> {
  values: Values<O>;
  positionals: string[];
  /** The configuration (read from the environment once, on first call). */
  config(): Promise<Config>;
}

export interface CommandSpec<O extends ParseArgsOptionsConfig> {
  /** `sync`, `feeds`, …: prefixes every message. */
  name: string;
  usage: string | (() => string);
  /** node:util parseArgs options; `-h/--help` is added. */
  options: O;
  /** Whether the command takes positional arguments (default: none). */
  positionals?: boolean;
  run(ctx: CommandContext<O>): Promise<number>;
}

/** `env` stands in for the process environment (tests); loadConfig reads the real one otherwise. */
export type CommandRun = (argv: string[], env?: NodeJS.ProcessEnv) => Promise<number>;

/** A command's `run`: parses argv, answers --help, maps errors to messages and exit codes. */
export function defineCommand<O extends ParseArgsOptionsConfig>(spec: CommandSpec<O>): CommandRun {
  const usage = () => (typeof spec.usage === 'string' ? spec.usage : spec.usage());
  const prefix = `rostercal ${spec.name}`;
  return async (argv, env) => {
    let parsed: { values: Values<O> & { help?: boolean }; positionals: string[] };
    try {
      parsed = parseArgs({
        args: negativeValuesJoined(argv, spec.options),
        strict: true,
        allowPositionals: spec.positionals ?? false,
        options: { ...spec.options, help: { type: 'boolean', short: 'h' } },
      }) as typeof parsed;
    } catch (err) {
      printLines([`${prefix}: ${(err as Error).message}`, '', ...ownLines(usage())], 'stderr');
      return EXIT.usage;
    }
    if (parsed.values.help) {
      printLines(ownLines(usage()));
      return EXIT.ok;
    }
    let config: Promise<Config> | undefined;
    try {
      return await spec.run({
        values: parsed.values,
        positionals: parsed.positionals,
        config: () => {
          config ??= (env ? loadConfig(env) : loadConfig()).then((c) => {
            for (const w of c.warnings ?? []) printError(`rostercal: warning: ${w}`);
            return c;
          });
          return config;
        },
      });
    } catch (err) {
      return reportError(prefix, err, usage);
    }
  };
}

/**
 * `--team -1` as `--team=-1`: node's parseArgs takes a value that starts with '-' for an option of its own and
 * refuses it as "ambiguous", so the option's own check (numberOption, idOption: "must be a whole number ≥ 1, got
 * "-1"") never got to say what is wrong. Only a number after an option that takes a value is joined.
 */
function negativeValuesJoined(argv: readonly string[], options: ParseArgsOptionsConfig): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : null;
    if (name && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** The message and exit code of an error that ended a command. */
export function reportError(prefix: string, err: unknown, usage?: () => string): number {
  if (err instanceof UsageError) {
    printLines([`${prefix}: ${err.message}`, ...(usage ? ['', ...ownLines(usage())] : [])], 'stderr');
    return EXIT.usage;
  }
  if (err instanceof ConfigError) {
    // One line per offending field, as loadConfig wrote them.
    printLines(ownLines(err.message), 'stderr');
    return EXIT.usage;
  }
  // Any other message may quote upstream text (a team's name): one line, whatever it holds.
  printError(`${prefix}: ${err instanceof Error ? err.message : String(err)}`);
  return EXIT.failure;
}

/**
 * A numeric option or argument: undefined when absent, else a number in [min, max] (whole unless `integer` is
 * false). `10/s` is read as 10 for rates. Anything else is a UsageError naming the option.
 */
export function numberOption(
  name: string,
  text: string | undefined,
  range: { min?: number; max?: number; integer?: boolean } = {},
): number | undefined {
  if (text === undefined) return undefined;
  const { min = 0, max = Number.MAX_SAFE_INTEGER, integer = true } = range;
  const n = Number(text.replace(/\/s$/, ''));
  // Number() also reads 1e3, 0x10 and +5: a whole number is written in digits.
  const digits = !integer || min < 0 || /^\s*\d+(\/s)?\s*$/.test(text);
  if (
    !digits ||
    text.trim() === '' ||
    !Number.isFinite(n) ||
    n < min ||
    n > max ||
    (integer && !Number.isInteger(n))
  ) {
    const kind = integer ? 'a whole number' : 'a number';
    const bounds = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`${name} must be ${kind} ${bounds}, got ${JSON.stringify(text)}`);
  }
  return n;
}

/** Where a person finds each kind of id the commands take, for the message when they typed something else. */
const ID_HINTS = {
  team: "the team's id, like 3004 (rostercal feeds list shows each team's id beside its name)",
  session: "the session's id, like 100175 (rostercal sessions --team ID lists a team's sessions)",
  feed: "the feed's id (rostercal feeds list shows each feed's scope and id)",
} as const;

/**
 * A team's or session's id: undefined when absent, else a whole number ≥ 1. Anything else (a coach typing the
 * team's name) is a UsageError saying what an id is and where to find one, not a bare bound.
 */
export function idOption(
  name: string,
  text: string | undefined,
  kind: keyof typeof ID_HINTS,
): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\s*\d+\s*$/.test(text) || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`${name} must be a whole number: ${ID_HINTS[kind]}, got ${JSON.stringify(text)}`);
  return n;
}

/**
 * Opens the configured store, runs `fn`, closes the store. A store that cannot be reached (a server gone, a
 * connection cut) is named in the message: pg's own words ("Connection terminated unexpectedly", "read
 * ECONNRESET") do not say what was being reached.
 */
export async function withStore<T>(config: Config, fn: (store: Store) => Promise<T>): Promise<T> {
  try {
    const store = await openStoreFor(config);
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  } catch (err) {
    if (!isStoreUnreachable(err) || /\bthe database\b/.test(String((err as Error)?.message))) throw err;
    throw new Error(`the database (${storeWhere(config)}) cannot be reached: ${storeErrorText(err)}`, {
      cause: err,
    });
  }
}
