/**
 * crictl's error text: each command wraps the runtime's error with what it was doing ("pulling
 * image: …", `stopping the container "ID": …`), and a runtime error reads as grpc-go prints it,
 * `rpc error: code = NotFound desc = …`. The exit code stays podctl's for the failure.
 */
import {grpcCodeName} from '../cri/status-names.js'
import {ExitCode, PodctlError} from '../errors.js'

/** Failures already worded as crictl words them: the fatal line prints them without the command's prefix. */
const worded = new WeakSet<Error>()

/** Marks a failure as already in crictl's words (its own prefix, or none where crictl has none). */
export function inCrictlWords<T extends Error>(error: T): T {
  worded.add(error)
  return error
}

export function isInCrictlWords(error: unknown): boolean {
  return error instanceof Error && worded.has(error)
}

function asPodctlError(error: unknown): PodctlError {
  if (error instanceof PodctlError) return error
  return new PodctlError('InternalError', ExitCode.INTERNAL, String((error as Error)?.message ?? error))
}

/** The runtime's part of a failure as crictl shows it: grpc-go's text for a runtime answer, else podctl's message. */
export function crictlCause(error: unknown): string {
  const failure = asPodctlError(error)
  if (failure.grpc?.code !== undefined) {
    return `rpc error: code = ${grpcCodeName(failure.grpc.code)} desc = ${failure.grpc.details}`
  }

  return failure.message
}

/** `${doing}: ${cause}`, keeping the failure's code and exit code. */
export function crictlFailure(doing: string, error: unknown): PodctlError {
  const failure = asPodctlError(error)
  const wrapped = new PodctlError(failure.code, failure.exitCode, `${doing}: ${crictlCause(error)}`)
  wrapped.grpc = failure.grpc
  return inCrictlWords(wrapped)
}
