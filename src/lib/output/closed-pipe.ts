/**
 * A reader that closes its end of podctl's output (`podctl ps | head -1`, `podctl exec C -- cat f |
 * head -1`, `podctl logs -f C | grep -m1 x`) has seen enough. Every command ends then at once with
 * exit 0 and no message, whether stdout or stderr was closed: the one rule, installed by both
 * entries before any command runs (EXIT_CODE_DOCS documents it). Exit 0 rather than the 141 a
 * shell shows for a program killed by SIGPIPE, so `set -o pipefail` scripts that cut output short
 * do not fail; Node never dies of SIGPIPE, so this is the only path.
 */
export function endQuietlyOnClosedPipe(streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      // eslint-disable-next-line n/no-process-exit, unicorn/no-process-exit -- end now, even while streaming or following
      if (error.code === 'EPIPE') process.exit(0)
      throw error
    })
  }
}
