import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { COMMANDS, type Command } from './commands.js';
import { createCommandContext } from '../app.factory.js';
import { DomainError, ValidationError } from '../common/errors/domain.error.js';
import { appUrlWarning } from '../config/app.config.js';
import { ConfigError, loadConfig } from '../config/config.js';
import { isDatabaseRefusal, isDatabaseUnavailable } from '../common/errors/database-errors.js';

/** Thrown for a bad command line: printed as it is, with no stack. */
class UsageError extends Error {}

/** A command's first sentence, for the list of commands. */
function summary(command: Command): string {
  return /^.*?\.(?=\s|$)/.exec(command.description)?.[0] ?? command.description;
}

/** Tessera's version, from the package.json above this file (the source's or the build's). */
function version(): string {
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'tessera' && pkg.version) return pkg.version;
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}

function usage(): string {
  return ['Usage: npm run cli -- <command> [options]', '', 'Commands:']
    .concat(Object.values(COMMANDS).map((c) => `  ${c.usage}\n      ${summary(c)}`))
    .concat([
      '',
      '"npm run cli -- <command> --help" says what a command does; "npm run cli -- --version" which Tessera this is.',
    ])
    .join('\n');
}

function parse(command: Command, args: string[]): Record<string, string | undefined> {
  let values: Record<string, string | boolean | undefined>;
  let tokens: { kind: string; name?: string }[];
  try {
    ({ values, tokens } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      tokens: true,
      options: Object.fromEntries(command.options.map((o) => [o, { type: 'string' as const }])),
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message} (usage: ${command.usage})`);
  }
  // The last of two values would win unseen: `token:revoke --id 5 --id 6` must not revoke 6.
  const named = tokens.flatMap((t) => (t.kind === 'option' && t.name ? [t.name] : []));
  const twice = named.find((name, i) => named.indexOf(name) !== i);
  if (twice) throw new UsageError(`--${twice} was given twice (usage: ${command.usage})`);
  const missing = command.required.filter((name) => !values[name]);
  if (missing.length > 0) {
    const names = missing.map((m) => `--${m}`).join(', ');
    throw new UsageError(`Missing ${names} (usage: ${command.usage})`);
  }
  return values as Record<string, string | undefined>;
}

/**
 * A warning for each secret given on the command line itself (it still works): printed once the
 * command has run, so that a refusal stays one line.
 */
function secretsInArguments(
  command: Command,
  values: Record<string, string | undefined>,
): string[] {
  return (
    (command.secrets ?? [])
      // An empty value holds no secret (an audit stream's `--authorization ''`: no header).
      .filter((name) => values[name] !== undefined && values[name] !== '-' && values[name] !== '')
      .map(
        (name) =>
          `warning: --${name} given on the command line shows in the process list and the shell's history; give --${name} - and its value on standard input instead.`,
      )
  );
}

/**
 * Each secret option given as `-`, read from the first line of standard input (only one may
 * be: there is one input).
 */
async function readSecrets(
  command: Command,
  values: Record<string, string | undefined>,
  io: CliIo,
): Promise<Record<string, string | undefined>> {
  const fromInput = (command.secrets ?? []).filter((name) => values[name] === '-');
  if (fromInput.length === 0) return values;
  if (fromInput.length > 1) {
    throw new UsageError(
      `Only one option can be read from standard input (usage: ${command.usage})`,
    );
  }
  const [name] = fromInput;
  const line = (await io.stdin?.())?.split(/\r?\n/, 1)[0];
  if (!line)
    throw new UsageError(`--${name} - reads its value from standard input, which gave none`);
  return { ...values, [name]: line };
}

/** One line for stderr, whatever failed. */
function describe(error: unknown): string {
  let text: string;
  if (error instanceof ValidationError) text = Object.values(error.fields).join(' ');
  else if (
    error instanceof DomainError ||
    error instanceof UsageError ||
    error instanceof ConfigError
  ) {
    text = error.message;
  } else if (isDatabaseUnavailable(error) || isDatabaseRefusal(error)) {
    text = `cannot use the database at DATABASE_URL (${(error as Error).message})`;
  } else text = `Unexpected error: ${error instanceof Error ? error.message : String(error)}`;
  return text.replace(/\s*\n\s*/g, ' ');
}

export interface CliIo {
  /** The settings, as the environment gives them (`.env` included by default). */
  env?: Record<string, string | undefined>;
  /** Standard input, whole: read only for a secret given as `-`. */
  stdin?: () => Promise<string>;
  out(line: string): void;
  err(line: string): void;
}

/**
 * Runs one operator command and returns the exit code: what it prints goes to `out`, one line
 * saying what went wrong to `err`. `src/cli.ts` runs it for `npm run cli`; the tests call it
 * in-process.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    return await run(argv, io);
  } catch (error) {
    io.err(`error: ${describe(error)}`);
    return 1;
  }
}

const HELP = ['--help', '-h'];

/** One command's help: its usage, what it does, and what this deployment offers it. */
function commandHelp(command: Command, env: CliIo['env']): string {
  const details = command.details ? ['', ...command.details(loadConfig(env))] : [];
  return [`Usage: npm run cli -- ${command.usage}`, '', command.description, ...details].join('\n');
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  if (name === '--version' || name === '-v') {
    io.out(`tessera ${version()} (node ${process.versions.node})`);
    return 0;
  }
  if (name === 'help' || (name !== undefined && HELP.includes(name))) {
    if (args[0] !== undefined && !COMMANDS[args[0]]) {
      throw new UsageError(
        `Unknown command "${args[0]}"; "npm run cli -- help" lists the commands`,
      );
    }
    io.out(args[0] === undefined ? usage() : commandHelp(COMMANDS[args[0]], io.env));
    return 0;
  }
  if (!name) throw new UsageError('No command given; "npm run cli -- help" lists the commands');
  const command = COMMANDS[name];
  if (!command) {
    throw new UsageError(`Unknown command "${name}"; "npm run cli -- help" lists the commands`);
  }
  // `<command> --help` and `-h` anywhere among its arguments: that command's help, and nothing run.
  if (args.some((arg) => HELP.includes(arg))) {
    io.out(commandHelp(command, io.env));
    return 0;
  }
  const given = parse(command, args);
  const values = await readSecrets(command, given, io);

  const config = loadConfig(io.env);
  const warning = command.printsLinks?.(values) ? appUrlWarning(config.app) : undefined;
  if (warning) io.err(`warning: ${warning}`);
  const app = await createCommandContext(
    command.managesSchema
      ? { ...config, database: { ...config.database, migrate: false } }
      : config,
  );
  try {
    await command.run(app, values, io.out);
  } finally {
    await app.close();
  }
  for (const line of secretsInArguments(command, given)) io.err(line);
  return 0;
}
