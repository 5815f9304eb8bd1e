/**
 * Test support: module resolution hooks that make packages unresolvable, as if they were not installed, so a CLI
 * run shows what a user without an optional peer sees with nothing uninstalled. Registered in a child process by
 * the arguments `hidingPackages(names)` (cli.ts) gives; `names` arrive through `initialize`.
 */

let hidden = [];

export function initialize(names) {
  hidden = names;
}

export function resolve(specifier, context, next) {
  if (hidden.some((name) => specifier === name || specifier.startsWith(`${name}/`))) {
    const error = new Error(`Cannot find package '${specifier}' (hidden by the test)`);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}
