import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { COMMANDS, type Command } from './cli/commands.js';
import { CoreModule } from './core.module.js';
import { DomainError, ValidationError } from './common/errors/domain.error.js';
import { ConfigError, loadConfig } from './config/config.js';

/** Thrown for a bad command line: printed as it is, with no stack. */
class UsageError extends Error {}

function usage(): string {
  return ['Usage: npm run cli -- <command> [options]', '', 'Commands:']
    .concat(Object.values(COMMANDS).map((c) => `  ${c.usage}`))
    .join('\n');
}

function parse(command: Command, args: string[]): Record<string, string | undefined> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: Object.fromEntries(command.options.map((o) => [o, { type: 'string' as const }])),
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message} (usage: ${command.usage})`);
  }
  const missing = command.required.filter((name) => !values[name]);
  if (missing.length > 0) {
    const names = missing.map((m) => `--${m}`).join(', ');
    throw new UsageError(`Missing ${names} (usage: ${command.usage})`);
  }
  return values as Record<string, string | undefined>;
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
  } else text = `Unexpected error: ${error instanceof Error ? error.message : String(error)}`;
  return text.replace(/\s*\n\s*/g, ' ');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === 'help' || name === '--help') {
    console.log(usage());
    return 0;
  }
  if (!name) throw new UsageError('No command given; "npm run cli -- help" lists the commands');
  const command = COMMANDS[name];
  if (!command) {
    throw new UsageError(`Unknown command "${name}"; "npm run cli -- help" lists the commands`);
  }
  const values = parse(command, args);

  if (existsSync('.env')) process.loadEnvFile('.env');
  const app = await NestFactory.createApplicationContext(CoreModule.forRoot(loadConfig()), {
    logger: false,
    abortOnError: false,
  });
  try {
    await command.run(app, values, (line) => console.log(line));
  } finally {
    await app.close();
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`error: ${describe(error)}`);
    process.exit(1);
  },
);
