#!/usr/bin/env node
/**
 * @module `oncely`, the command line: dispatches to the commands, prints their help, and maps every failure to the
 * documented exit codes.
 */
import { endQuietlyWhenStdoutCloses } from './closed-pipe.js';
import { dashboardCommand, dashboardHelp } from './commands/dashboard.js';
import { demo, demoHelp } from './commands/demo.js';
import { estimate, estimateHelp } from './commands/estimate.js';
import { inspect, inspectHelp } from './commands/inspect.js';
import { migrate, migrateHelp } from './commands/migrate.js';
import { outboxCommand, outboxHelp } from './commands/outbox.js';
import { purge, purgeHelp } from './commands/purge.js';
import { stats, statsHelp } from './commands/stats.js';
import { CommandFailed, EXIT, UsageError } from './errors.js';
import { packageVersion } from './version.js';

type Command = { readonly run: (argv: readonly string[]) => Promise<void>; readonly help: string };

const commands: Record<string, Command> = {
  demo: { run: demo, help: demoHelp },
  inspect: { run: inspect, help: inspectHelp },
  stats: { run: stats, help: statsHelp },
  purge: { run: purge, help: purgeHelp },
  estimate: { run: estimate, help: estimateHelp },
  migrate: { run: migrate, help: migrateHelp },
  outbox: { run: outboxCommand, help: outboxHelp },
  dashboard: { run: dashboardCommand, help: dashboardHelp },
};

const usage = `oncely: exactly-once effects for retried requests and redelivered messages

Usage: oncely <command> [options]
       oncely help [command] | oncely <command> --help | oncely --version

Exit codes: 0 success; 1 the command failed (a store unreachable or not migrated, a busy port, a key executed
twice); 2 a usage error (unknown command or option, a bad value, a malformed REDIS_URL, DATABASE_URL or MYSQL_URL,
no AWS region for --store dynamodb, an optional peer the command needs not installed).

${Object.values(commands)
  .map((command) => command.help)
  .join('\n\n')}
`;

function commandNamed(name: string): Command {
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (command === undefined) {
    throw new UsageError(`unknown command "${name}"; commands: ${Object.keys(commands).join(', ')}`);
  }
  return command;
}

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    // Nothing asked: the usage is the answer, but a script that forgot its command must not see success.
    process.stderr.write(usage);
    return EXIT.usage;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  if (name === 'help' || name === '--help' || name === '-h') {
    if (rest.length > 1) throw new UsageError('help takes one command name, e.g. oncely help demo');
    process.stdout.write(rest[0] === undefined ? usage : `${commandNamed(rest[0]).help}\n`);
    return EXIT.ok;
  }
  const command = commandNamed(name);
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${command.help}\n`);
    return EXIT.ok;
  }
  await command.run(rest);
  return EXIT.ok;
}

endQuietlyWhenStdoutCloses();

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`oncely: ${error.message}\n`);
      process.exitCode = EXIT.usage;
    } else if (error instanceof CommandFailed) {
      process.stderr.write(`oncely: ${error.message}\n`);
      process.exitCode = EXIT.failed;
    } else {
      process.stderr.write(`oncely: unexpected error: ${(error as Error).stack ?? String(error)}\n`);
      process.exitCode = EXIT.failed;
    }
  },
);
