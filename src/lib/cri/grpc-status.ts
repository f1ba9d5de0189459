/**
 * gRPC status facts the unary channel needs without loading grpc-js: the code names --debug prints
 * (grpc-js's spelling, so trace lines stay as they were), the HTTP→gRPC mapping of gRPC's
 * http-grpc-status-mapping.md, and the header encodings of PROTOCOL-HTTP2.md.
 */

/** Status codes by number, named as grpc-js's `status` enum names them. */
const CODE_NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const

export type StatusName = (typeof CODE_NAMES)[number]

/** The number of a status name, e.g. Status.UNAVAILABLE === 14. */
export const Status = Object.fromEntries(CODE_NAMES.map((name, code) => [name, code])) as {readonly [N in StatusName]: number}

/** The --debug name of a code ("ERROR" when a failure carried none, "CODE_n" for one gRPC does not define). */
export function statusName(code: number | undefined): string {
  if (code === undefined) return 'ERROR'
  return CODE_NAMES[code] ?? `CODE_${code}`
}

/** A failed call as fromGrpcError reads it: the shape grpc-js's ServiceError has. */
export class GrpcStatusError extends Error {
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(`${code} ${statusName(code)}: ${details}`)
  }
}

/** A response whose HTTP status is not 200 came from something that is not a gRPC server (a proxy, a wrong socket). */
export function statusFromHttp(httpStatus: number): GrpcStatusError {
  const byHttp: Partial<Record<number, number>> = {
    400: Status.INTERNAL,
    401: Status.UNAUTHENTICATED,
    403: Status.PERMISSION_DENIED,
    404: Status.UNIMPLEMENTED,
    429: Status.UNAVAILABLE,
    502: Status.UNAVAILABLE,
    503: Status.UNAVAILABLE,
    504: Status.UNAVAILABLE,
  }
  return new GrpcStatusError(byHttp[httpStatus] ?? Status.UNKNOWN, `Received HTTP status code ${httpStatus}`)
}

/** grpc-message is percent-encoded UTF-8; a malformed escape is kept as sent rather than losing the message. */
export function decodeGrpcMessage(raw: string | undefined): string {
  if (raw === undefined) return ''
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

/**
 * The grpc-timeout header: at most 8 digits and a unit. Milliseconds while they fit, whole seconds
 * (rounded up, never shorter than asked) beyond, which covers every deadline a Node timer can hold.
 */
export function encodeGrpcTimeout(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms))
  return whole < 1e8 ? `${whole}m` : `${Math.ceil(whole / 1000)}S`
}
