import { existsSync } from 'node:fs';

let loaded = false;

/**
 * The process's environment, with the working directory's `.env` read into it once (a variable
 * the environment already has is kept). The server, the command line and the migration commands
 * all read their settings through here.
 */
export function environment(): NodeJS.ProcessEnv {
  if (!loaded) {
    if (existsSync('.env')) process.loadEnvFile('.env');
    loaded = true;
  }
  return process.env;
}
