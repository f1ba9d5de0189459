/**
 * One unary gRPC call on an HTTP/2 stream, written from gRPC's PROTOCOL-HTTP2.md: a request of
 * one length-prefixed message, a response of headers, at most one message and trailers carrying
 * grpc-status (or a Trailers-Only response carrying it in its headers). Every outcome settles
 * once, as a Buffer or a GrpcStatusError whose code and details match what grpc-js reported, so
 * fromGrpcError turns it into the same PodctlError and exit code as before.
 */
import {type ClientStream, ErrorCode, type HeaderField, type Http2Connection, type StreamEnd} from './http2/connection.js'
import {decodeGrpcMessage, encodeGrpcTimeout, GrpcStatusError, Status, statusFromHttp} from './grpc-status.js'

export interface UnaryRequest {
  /** `/runtime.v1.RuntimeService/ListPodSandbox` */
  path: string
  message: Buffer
  timeoutMs: number
  signal?: AbortSignal
  maxMessageBytes: number
}

/** The gRPC message prefix: one compressed-flag byte, then the length as 4 big-endian bytes. */
const PREFIX_BYTES = 5

export function sendUnary(connection: Http2Connection, request: UnaryRequest): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    new UnaryCall(connection, request, resolve, reject).start()
  })
}

/** A header block as the call reads it: by name; a repeated name keeps its last value (gRPC repeats none it reads). */
type Headers = Partial<Record<string, string>>

function byName(fields: readonly HeaderField[]): Headers {
  const headers: Headers = {}
  for (const [name, value] of fields) headers[name] = value
  return headers
}

class UnaryCall {
  private stream?: ClientStream
  private sawHeaders = false
  private timer?: NodeJS.Timeout
  private readonly chunks: Buffer[] = []
  private received = 0
  private expected?: number
  private status?: GrpcStatusError
  private httpStatus = 0
  private settled = false

  constructor(
    private readonly connection: Http2Connection,
    private readonly request: UnaryRequest,
    private readonly resolve: (message: Buffer) => void,
    private readonly reject: (error: GrpcStatusError) => void,
  ) {}

  start(): void {
    const {message, maxMessageBytes, signal, timeoutMs} = this.request
    if (message.length > maxMessageBytes) {
      this.fail(Status.RESOURCE_EXHAUSTED, `Sent message larger than max (${message.length} vs. ${maxMessageBytes})`)
      return
    }

    if (signal?.aborted) {
      this.fail(Status.CANCELLED, 'Cancelled on client')
      return
    }

    const prefix = Buffer.alloc(PREFIX_BYTES)
    prefix.writeUInt32BE(message.length, 1)
    try {
      this.stream = this.connection.request(this.headers(), Buffer.concat([prefix, message]), {
        onHeaders: (fields) => this.onHeaderBlock(byName(fields)),
        onData: (chunk) => this.onData(chunk),
        onEnd: (end) => this.onEnd(end),
      })
    } catch {
      // The connection was closed or sent GOAWAY between being picked and used: the runtime is going away.
      this.fail(Status.UNAVAILABLE, 'Connection dropped')
      return
    }

    // The local deadline: a runtime that never answers (hung, frozen) must not hold the call past it.
    this.timer = setTimeout(() => this.fail(Status.DEADLINE_EXCEEDED, 'Deadline exceeded'), timeoutMs)
    signal?.addEventListener('abort', this.onAbort, {once: true})
  }

  private headers(): HeaderField[] {
    return [
      [':method', 'POST'],
      [':scheme', 'http'],
      [':authority', 'localhost'],
      [':path', this.request.path],
      ['content-type', 'application/grpc'],
      ['te', 'trailers'],
      // The runtime learns the deadline too, so it can give up on work nobody waits for.
      ['grpc-timeout', encodeGrpcTimeout(this.request.timeoutMs)],
      // podctl decompresses nothing: asking for identity keeps a runtime from compressing answers.
      ['grpc-accept-encoding', 'identity'],
      ['user-agent', 'podctl'],
    ]
  }

  /** The response headers, then the trailers; informational (1xx) headers are skipped as HTTP says. */
  private onHeaderBlock(headers: Headers): void {
    if (this.sawHeaders) return this.onTrailers(headers)
    const httpStatus = Number(headers[':status'])
    if (httpStatus >= 100 && httpStatus < 200) return
    this.sawHeaders = true
    this.httpStatus = httpStatus
    // Trailers-Only: the status came in the only headers the runtime sends.
    if (headers['grpc-status'] !== undefined) this.onTrailers(headers)
    else if (this.httpStatus !== 200) this.settle(statusFromHttp(this.httpStatus))
  }

  private onData(chunk: Buffer): void {
    if (this.settled) return
    this.chunks.push(chunk)
    this.received += chunk.length
    if (this.received < PREFIX_BYTES) return
    // The prefix is read once; later chunks are only counted (a big listing arrives in hundreds of frames).
    this.expected ??= this.readPrefix()
    if (this.expected !== undefined && this.received > PREFIX_BYTES + this.expected) {
      this.fail(Status.INTERNAL, 'Received more than one message for a unary call')
    }
  }

  /** The message length, or undefined when the call was failed for what the prefix says. */
  private readPrefix(): number | undefined {
    const head = Buffer.concat(this.chunks)
    this.chunks.splice(0, this.chunks.length, head)
    const length = head.readUInt32BE(1)
    // Without grpc-encoding negotiated (podctl offers identity only), a compressed message cannot be read.
    if (head[0] !== 0) this.fail(Status.INTERNAL, 'Received a compressed message but no encoding was negotiated')
    // Refused before it is buffered: a runaway answer must not grow podctl's memory without bound.
    else if (length > this.request.maxMessageBytes) {
      this.fail(Status.RESOURCE_EXHAUSTED, `Received message larger than max (${length} vs. ${this.request.maxMessageBytes})`)
    } else return length
  }

  private onTrailers(trailers: Headers): void {
    const code = Number(trailers['grpc-status'])
    const details = decodeGrpcMessage(trailers['grpc-message'])
    this.status = Number.isInteger(code) ? new GrpcStatusError(code, details) : new GrpcStatusError(Status.UNKNOWN, 'Invalid grpc-status')
  }

  private onEnd(end: StreamEnd): void {
    if (this.settled) return
    if (end.kind === 'closed' && this.status) return this.finish(this.status)
    this.settle(this.withoutStatus(end))
  }

  /** The status a call gets when its stream ended without one, as grpc-js maps a stream's reset code. */
  private withoutStatus(end: StreamEnd): GrpcStatusError {
    // The connection ended under the call (runtime restarted or crashed): the runtime is unavailable.
    if (end.kind === 'dropped') return new GrpcStatusError(Status.UNAVAILABLE, 'Connection dropped')
    if (end.kind === 'protocol') return new GrpcStatusError(Status.INTERNAL, end.message)
    const rstCode = end.code
    switch (rstCode) {
      case ErrorCode.NO_ERROR:
        if (this.httpStatus !== 200 && this.httpStatus !== 0) return statusFromHttp(this.httpStatus)
        return new GrpcStatusError(Status.INTERNAL, `Received RST_STREAM with code ${rstCode} (Call ended without gRPC status)`)
      case ErrorCode.REFUSED_STREAM:
        return new GrpcStatusError(Status.UNAVAILABLE, 'Stream refused by server')
      case ErrorCode.CANCEL:
        return new GrpcStatusError(Status.CANCELLED, 'Call cancelled')
      case ErrorCode.ENHANCE_YOUR_CALM:
        return new GrpcStatusError(Status.RESOURCE_EXHAUSTED, 'Bandwidth exhausted or memory limit exceeded')
      case ErrorCode.INADEQUATE_SECURITY:
        return new GrpcStatusError(Status.PERMISSION_DENIED, 'Protocol not secure enough')
      default:
        return new GrpcStatusError(Status.INTERNAL, `Received RST_STREAM with code ${rstCode}`)
    }
  }

  /** The status is in: OK needs the one whole message, anything else is the call's error. */
  private finish(status: GrpcStatusError): void {
    if (status.code !== Status.OK) return this.settle(status)
    const body = Buffer.concat(this.chunks)
    if (body.length < PREFIX_BYTES || body.length !== PREFIX_BYTES + body.readUInt32BE(1)) {
      return this.settle(new GrpcStatusError(Status.INTERNAL, 'OK status without a whole response message'))
    }

    this.settle(body.subarray(PREFIX_BYTES))
  }

  private readonly onAbort = (): void => this.fail(Status.CANCELLED, 'Cancelled on client')

  private fail(code: number, details: string): void {
    this.settle(new GrpcStatusError(code, details))
  }

  private settle(outcome: Buffer | GrpcStatusError): void {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timer)
    this.request.signal?.removeEventListener('abort', this.onAbort)
    if (outcome instanceof GrpcStatusError) this.reject(outcome)
    else this.resolve(outcome)
    // Ended from this side (deadline, abort, a bad answer): RST_STREAM CANCEL tells the runtime to stop working on it.
    if (outcome instanceof GrpcStatusError) this.stream?.cancel(ErrorCode.CANCEL)
  }
}
