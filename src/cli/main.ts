#!/usr/bin/env node
import { demo, demoHelp } from './commands/demo.js';
import { estimate, estimateHelp } from './commands/estimate.js';
import { inspect, inspectHelp } from './commands/inspect.js';
import { migrate, migrateHelp } from './commands/migrate.js';
import { outboxCommand, outboxHelp } from './commands/outbox.js';
import { purge, purgeHelp } from './commands/purge.js';
import { stats, statsHelp } from './commands/stats.js';
import { CommandFailed, UsageError } from './errors.js';

type Command = { readonly run: (argv: readonly string[]) => Promise<void>; readonly help: string };

const commands: Record<string, Command> = {
  demo: { run: demo, help: demoHelp },
  inspect: { run: inspect, help: inspectHelp },
  stats: { run: stats, help: statsHelp },
  purge: { run: purge, help: purgeHelp },
  estimate: { run: estimate, help: estimateHelp },
  migrate: { run: migrate, help: migrateHelp },
  outbox: { run: outboxCommand, help: outboxHelp },
};

const usage = `oncely: exactly-once effects for retried requests and redelivered messages

Usage: oncely <command> [options]

${Object.values(commands)
  .map((command) => command.help)
  .join('\n\n')}
`;

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(usage);
    return 0;
  }
  const command = commands[name];
  if (command === undefined)
    throw new UsageError(`unknown command "${name}"; commands: ${Object.keys(commands).join(', ')}`);
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${command.help}\n`);
    return 0;
  }
  await command.run(rest);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`oncely: ${error.message}\n`);
      process.exitCode = 2;
    } else if (error instanceof CommandFailed) {
      process.stderr.write(`oncely: ${error.message}\n`);
      process.exitCode = 1;
    } else {
      process.stderr.write(`oncely: unexpected error: ${(error as Error).stack ?? String(error)}\n`);
      process.exitCode = 1;
    }
  },
);
