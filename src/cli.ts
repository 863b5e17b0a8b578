// First: an unsupported Node stops here with what to install, before any native module loads.
import './node-version.js';
import 'reflect-metadata';
import { text } from 'node:stream/consumers';
import { runCli } from './cli/run-cli.js';

runCli(process.argv.slice(2), {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  stdin: () => text(process.stdin),
}).then((code) => process.exit(code));
