/**
 * Every failure podctl reports is a PodctlError with a stable name and exit code, so scripts can
 * branch on the code and humans get one line that says what failed and what to try.
 * The table here is the single source for the README's exit-code section.
 */
export const ExitCode = {
  OK: 0,
  INTERNAL: 1,
  USAGE: 2,
  UNREACHABLE: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  UNIMPLEMENTED: 6,
  NOT_READY: 7,
  ALREADY_EXISTS: 8,
  RUNTIME: 9,
  IMAGE_PULL: 10,
  INVALID_IMAGE_NAME: 11,
  IMAGE_NEVER_PULL: 12,
  UNAUTHORIZED: 13,
  POD_FAILED: 14,
  AMBIGUOUS: 15,
  STREAMING_UNAVAILABLE: 16,
  KUBELET_OWNS_RUNTIME: 17,
  HOST_ACCESS: 18,
  OUTPUT_FAILED: 19,
  INTERRUPTED: 130,
} as const

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode]

export const EXIT_CODE_DOCS: ReadonlyArray<[number, string, string]> = [
  [
    ExitCode.OK,
    'Success',
    'the command did what was asked; also when the reader of its output closed the pipe early (head -1): it stops quietly ' +
      '(a command that changes the node, such as run or kill, finishes its work first)',
  ],
  [ExitCode.INTERNAL, 'InternalError', 'a bug in podctl; rerun with --debug and report it'],
  [
    ExitCode.USAGE,
    'UsageError',
    "bad flag, argument, config file or input (InvalidManifest: a manifest's field); nothing was sent to the runtime",
  ],
  [ExitCode.UNREACHABLE, 'RuntimeUnreachable', 'no runtime answered at the endpoint (missing socket, refused, connect timeout)'],
  [ExitCode.DEADLINE_EXCEEDED, 'DeadlineExceeded', 'the runtime accepted the call but did not answer before the deadline'],
  [ExitCode.NOT_FOUND, 'NotFound', 'the pod, container or image does not exist'],
  [ExitCode.UNIMPLEMENTED, 'Unimplemented', 'the runtime does not implement a call podctl needs'],
  [
    ExitCode.NOT_READY,
    'RuntimeNotReady',
    'RuntimeReady or NetworkReady is false or not reported (other false conditions are only warnings)',
  ],
  [ExitCode.ALREADY_EXISTS, 'AlreadyExists', 'the object already exists'],
  [ExitCode.RUNTIME, 'RuntimeError', 'the runtime refused or failed the call'],
  [ExitCode.IMAGE_PULL, 'ErrImagePull', 'the image could not be pulled (also RegistryUnavailable, ImagePullBackOff)'],
  [ExitCode.INVALID_IMAGE_NAME, 'InvalidImageName', 'the image reference is not valid; nothing was pulled'],
  [ExitCode.IMAGE_NEVER_PULL, 'ErrImageNeverPull', 'the image is absent and the pull policy is Never'],
  [ExitCode.UNAUTHORIZED, 'Unauthorized', 'the registry refused the credentials (or none were given)'],
  [
    ExitCode.POD_FAILED,
    'PodFailed',
    'a pod was not admitted (OutOfcpu, OutOfmemory) or a pod or container failed to start or run (CreateContainerError, ...)',
  ],
  [ExitCode.AMBIGUOUS, 'Ambiguous', 'an ID prefix or name matches more than one object; the message lists them'],
  [
    ExitCode.STREAMING_UNAVAILABLE,
    'StreamingUnavailable',
    'the runtime has no usable streaming server for exec -i/-t, attach or port-forward (no URL, unreachable, refused)',
  ],
  [
    ExitCode.KUBELET_OWNS_RUNTIME,
    'KubeletOwnsRuntime',
    'a live kubelet uses this runtime and would kill the pod within ~2 s; nothing was created (use run --static, or --force)',
  ],
  [
    ExitCode.HOST_ACCESS,
    'HostAccessFailed',
    'podctl could not reach into the container from the host (cp, top, exec --user/-e/-w): not root, no /proc, ' +
      "no nsenter, the container's process gone, or a path that leads out of its root",
  ],
  [
    ExitCode.OUTPUT_FAILED,
    'OutputFailed',
    "podctl's own output could not be written (stdout to a full disk or a failing device); what was written before stays " +
      '(a command that changes the node finishes its work first)',
  ],
  [ExitCode.INTERRUPTED, 'Interrupted', 'stopped by SIGINT/SIGTERM'],
]

export class PodctlError extends Error {
  /** Stable name for scripts and JSON output, e.g. "NotFound". */
  readonly code: string
  readonly exitCode: number
  /** For failures the runtime answered: the raw gRPC status, kept for callers that must match its text. */
  grpc?: {code: number | undefined; details: string}

  constructor(code: string, exitCode: number, message: string) {
    super(message)
    this.name = code
    this.code = code
    this.exitCode = exitCode
  }

  toJSON(): {code: string; exitCode: number; message: string} {
    return {code: this.code, exitCode: this.exitCode, message: this.message}
  }
}

export class UsageError extends PodctlError {
  constructor(message: string) {
    super('UsageError', ExitCode.USAGE, message)
  }
}

export class RuntimeUnreachableError extends PodctlError {
  constructor(message: string) {
    super('RuntimeUnreachable', ExitCode.UNREACHABLE, message)
  }
}

export class DeadlineExceededError extends PodctlError {
  constructor(message: string) {
    super('DeadlineExceeded', ExitCode.DEADLINE_EXCEEDED, message)
  }
}

export class NotFoundError extends PodctlError {
  constructor(message: string) {
    super('NotFound', ExitCode.NOT_FOUND, message)
  }
}

export class UnimplementedError extends PodctlError {
  constructor(message: string) {
    super('Unimplemented', ExitCode.UNIMPLEMENTED, message)
  }
}

export class RuntimeNotReadyError extends PodctlError {
  constructor(message: string) {
    super('RuntimeNotReady', ExitCode.NOT_READY, message)
  }
}

export class AlreadyExistsError extends PodctlError {
  constructor(message: string) {
    super('AlreadyExists', ExitCode.ALREADY_EXISTS, message)
  }
}

export class RuntimeError extends PodctlError {
  constructor(message: string) {
    super('RuntimeError', ExitCode.RUNTIME, message)
  }
}

export class InterruptedError extends PodctlError {
  constructor(message = 'interrupted') {
    super('Interrupted', ExitCode.INTERRUPTED, message)
  }
}

/** Any thrown value as a PodctlError: itself, or an InternalError (a bug in podctl) with its message. */
export function asPodctlError(error: unknown): PodctlError {
  if (error instanceof PodctlError) return error
  return new PodctlError('InternalError', ExitCode.INTERNAL, String((error as Error)?.message ?? error))
}

/** exec -i/-t, attach and port-forward need the runtime's streaming server; it is missing, unreachable or refused the session. */
export class StreamingUnavailableError extends PodctlError {
  constructor(message: string) {
    super('StreamingUnavailable', ExitCode.STREAMING_UNAVAILABLE, message)
  }
}

/** A kubelet uses the runtime: it kills every pod it did not start, so podctl starts none beside it. */
export class KubeletOwnsRuntimeError extends PodctlError {
  constructor(message: string) {
    super('KubeletOwnsRuntime', ExitCode.KUBELET_OWNS_RUNTIME, message)
  }
}

/** An ID prefix or name that matches several objects; the message lists them so the user can pick. */
export class AmbiguousError extends PodctlError {
  constructor(message: string) {
    super('Ambiguous', ExitCode.AMBIGUOUS, message)
  }
}

/** A claim a running pod uses cannot be deleted (exit 9, as rmp refuses a running pod). */
export class ClaimInUseError extends PodctlError {
  constructor(message: string) {
    super('ClaimInUse', ExitCode.RUNTIME, message)
  }
}

/** gRPC status codes (numbers from the gRPC spec) that podctl maps; kept here to avoid loading grpc-js. */
export const GrpcCode = {
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const

export interface GrpcFailure {
  code?: number
  details?: string
  message?: string
}

export interface CallContext {
  /** "RuntimeService/ListPodSandbox" */
  method: string
  endpoint: string
  timeoutMs: number
}

/** Turns a grpc-js ServiceError into the PodctlError a user can act on (the raw status stays in `.grpc`). */
export function fromGrpcError(err: GrpcFailure, ctx: CallContext): PodctlError {
  const details = (err.details || err.message || 'no details').trim()
  const mapped = mapGrpcError(err, ctx, details)
  mapped.grpc = {code: err.code, details}
  return mapped
}

function mapGrpcError(err: GrpcFailure, ctx: CallContext, details: string): PodctlError {
  const rpc = ctx.method.slice(ctx.method.indexOf('/') + 1)
  switch (err.code) {
    case GrpcCode.UNAVAILABLE:
      return new RuntimeUnreachableError(
        `runtime at ${ctx.endpoint} is unavailable (${details}); check that it is running or pass --runtime-endpoint`,
      )
    case GrpcCode.DEADLINE_EXCEEDED:
      return new DeadlineExceededError(
        `${rpc} got no answer from ${ctx.endpoint} within ${formatMs(ctx.timeoutMs)}; ` +
          'the runtime may be hung or overloaded, raise --timeout to wait longer',
      )
    case GrpcCode.NOT_FOUND:
      return new NotFoundError(`${rpc}: ${details}`)
    case GrpcCode.UNIMPLEMENTED:
      return new UnimplementedError(`runtime at ${ctx.endpoint} does not implement ${rpc}`)
    case GrpcCode.ALREADY_EXISTS:
      return new AlreadyExistsError(`${rpc}: ${details}`)
    case GrpcCode.CANCELLED:
      return new InterruptedError(`${rpc} was cancelled`)
    case GrpcCode.RESOURCE_EXHAUSTED:
      return new RuntimeError(`${rpc} at ${ctx.endpoint}: ${details}`)
    default:
      return new RuntimeError(`${rpc} failed at ${ctx.endpoint}: ${details}`)
  }
}

export function formatMs(ms: number): string {
  if (ms % 60_000 === 0 && ms >= 60_000) return `${ms / 60_000}m`
  if (ms % 1000 === 0) return `${ms / 1000}s`
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)}s` : `${ms}ms`
}

/**
 * What podctl does from the host side into a container (host/: cp, top, exec with a user, env or
 * working directory) could not be done: the container's process is gone or unknown, /proc or
 * nsenter is missing, podctl is not root, or a path in the container leads out of its root. Exit 18.
 */
export class HostAccessError extends PodctlError {
  constructor(message: string) {
    super('HostAccessFailed', ExitCode.HOST_ACCESS, message)
  }
}

/**
 * A workload's pod that starts after an earlier one (an OrderedReady StatefulSet's, a Job's beyond
 * its parallelism) was never created: the earlier pod did not become ready or complete. Exit 14.
 */
export class NotStartedError extends PodctlError {
  constructor(message: string) {
    super('NotStarted', ExitCode.POD_FAILED, message)
  }
}
