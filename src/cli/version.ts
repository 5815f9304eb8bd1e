import version from '../version.generated.js';

/**
 * oncely's version: package.json's, built into the code by scripts/embed-assets.mjs (as the OpenTelemetry
 * instrumentation scope takes it), so the CLI reads no file at run time, from a checkout or from node_modules.
 */
export function packageVersion(): string {
  return version;
}
