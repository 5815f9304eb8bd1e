/**
 * @module `oncely inspect … | head`: once the reader of stdout is gone, nothing the CLI still has to say can arrive, and
 * Node reports the next write as an `EPIPE` error event that, unheard, crashes with a stack trace. Unix tools end
 * quietly there; so does the CLI, with exit code 0 (what was read was complete up to where the reader stopped).
 * Any other stdout error is still raised: a full disk or a revoked terminal is a failure to report.
 */
export function endQuietlyWhenStdoutCloses(stdout: NodeJS.WriteStream = process.stdout): void {
  stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(0);
  });
}
