import {ExitCode} from '../errors.js'

/** The work that holds podctl's exit on a failed write (holdExitOnOutputFailure). */
const holds = new Set<AbortController>()

/** A hold's abort reason when a write failed: the exit code the rule gives it. */
class OutputFailed extends Error {
  constructor(
    readonly exitCode: number,
    override readonly cause: Error,
  ) {
    super(cause.message)
  }
}

/**
 * A reader that closes its end of podctl's output (`podctl ps | head -1`, `podctl exec C -- cat f |
 * head -1`, `podctl logs -f C | grep -m1 x`) has seen enough. Every command ends then at once with
 * exit 0 and no message, whether stdout or stderr was closed: the one rule, installed by both
 * entries before any command runs (EXIT_CODE_DOCS documents it). Exit 0 rather than the 141 a
 * shell shows for a program killed by SIGPIPE, so `set -o pipefail` scripts that cut output short
 * do not fail; Node never dies of SIGPIPE, so this is the only path. Any other failure to write
 * (stdout redirected to a full disk: `podctl cp POD:/big - > /full/x`) is one line on stderr, while
 * it can still be written, and exit 19 (OutputFailed), never Node's stack trace.
 * Work that must not be cut short (removing a debug container) holds the exit: see holdExitOnOutputFailure.
 */
export function endQuietlyOnClosedPipe(streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      const code = exitCodeFor(stream, error)
      if (holds.size === 0) {
        // eslint-disable-next-line n/no-process-exit, unicorn/no-process-exit -- end now, even while streaming or following
        process.exit(code)
      }

      process.exitCode = code
      for (const hold of holds) hold.abort(new OutputFailed(code, error))
    })
  }

  // A write to a file fails at once but says so on the next tick: a command that exits right after its
  // last write would end 0 with its output lost. The failure is recorded on the stream by then.
  process.on('exit', () => {
    for (const stream of streams) {
      const error = stream.errored as NodeJS.ErrnoException | null
      if (error) process.exitCode = exitCodeFor(stream, error)
    }
  })
}

const told = new Set<NodeJS.WriteStream>()

export interface OutputFailureHold {
  /** Aborted when podctl's stdout or stderr can no longer be written, or when `interrupted` is. */
  readonly signal: AbortSignal
  /** The work is done (cleaned up): if a write failed meanwhile, podctl ends now, as it would have then. */
  release(): void
  /** The work failed: the hold ends without ending podctl, and the work's own error sets the exit code. */
  drop(): void
}

/**
 * Until released, a failed write to podctl's stdout or stderr does not end podctl at once: it aborts
 * `signal`, so the work can still undo what it made (a closed terminal, which fails every write with
 * EIO, must not leave a debug container behind). release() then ends podctl with the code and the
 * silence of a failed write (0 for a closed pipe), not with the aborted work's error.
 * `interrupted` (Ctrl-C, SIGTERM, SIGHUP) aborts the same signal: the work watches one.
 */
export function holdExitOnOutputFailure(interrupted?: AbortSignal): OutputFailureHold {
  const controller = new AbortController()
  const onInterrupted = () => controller.abort(interrupted?.reason)
  if (interrupted?.aborted) onInterrupted()
  else interrupted?.addEventListener('abort', onInterrupted, {once: true})
  holds.add(controller)
  const drop = () => {
    holds.delete(controller)
    interrupted?.removeEventListener('abort', onInterrupted)
  }

  return {
    signal: controller.signal,
    release() {
      drop()
      const reason: unknown = controller.signal.reason
      // eslint-disable-next-line n/no-process-exit, unicorn/no-process-exit -- the exit the failed write would have made, deferred
      if (reason instanceof OutputFailed) process.exit(reason.exitCode)
    },
    drop,
  }
}

/** 0 for a closed pipe; else OutputFailed, said once on stderr when stdout failed. */
function exitCodeFor(stream: NodeJS.WriteStream, error: NodeJS.ErrnoException): number {
  if (error.code === 'EPIPE') return ExitCode.OK
  if (stream !== process.stderr && !told.has(stream)) {
    told.add(stream)
    process.stderr.write(`Error: writing to stdout failed: ${error.message}\n`)
  }

  return ExitCode.OUTPUT_FAILED
}

/** The commands that change the node (debug holds its exit in its own way). */
const CHANGING_THE_NODE = new Set([
  'run',
  'runp',
  'create',
  'start',
  'stop',
  'stopp',
  'kill',
  'rm',
  'rmp',
  'rmi',
  'pull',
  'sync',
  'gc',
  'update',
  'resize',
  'checkpoint',
  'claims',
])

/**
 * A reader that closes the output of a command that changes the node (`run -f app.yaml | head -1`)
 * must not end it half-way, leaving half-created pods: such a command finishes (or rolls back)
 * first, then ends as the failed write would have (exit 0 for a closed pipe); its own failure keeps
 * its exit code (drop the hold). Undefined for any other command, which ends at once.
 */
export function holdExitIfChangingTheNode(commandId: string | undefined): OutputFailureHold | undefined {
  return commandId !== undefined && CHANGING_THE_NODE.has(commandId) ? holdExitOnOutputFailure() : undefined
}
