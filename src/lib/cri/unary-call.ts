/**
 * One unary gRPC call on an HTTP/2 stream, written from gRPC's PROTOCOL-HTTP2.md: a request of
 * one length-prefixed message, a response of headers, at most one message and trailers carrying
 * grpc-status (or a Trailers-Only response carrying it in its headers). Every outcome settles
 * once, as a Buffer or a GrpcStatusError whose code and details match what grpc-js reported, so
 * fromGrpcError turns it into the same PodctlError and exit code as before.
 */
import {type ClientHttp2Session, type ClientHttp2Stream, constants, type IncomingHttpHeaders} from 'node:http2'

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

export function sendUnary(session: ClientHttp2Session, request: UnaryRequest): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    new UnaryCall(session, request, resolve, reject).start()
  })
}

class UnaryCall {
  private stream?: ClientHttp2Stream
  private timer?: NodeJS.Timeout
  private readonly chunks: Buffer[] = []
  private received = 0
  private expected?: number
  private status?: GrpcStatusError
  private httpStatus = 0
  private settled = false

  constructor(
    private readonly session: ClientHttp2Session,
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

    try {
      this.stream = this.session.request(this.headers(), {endStream: false})
    } catch {
      // The session was closed or sent GOAWAY between being picked and used: the runtime is going away.
      this.fail(Status.UNAVAILABLE, 'Connection dropped')
      return
    }

    // The local deadline: a runtime that never answers (hung, frozen) must not hold the call past it.
    this.timer = setTimeout(() => this.fail(Status.DEADLINE_EXCEEDED, 'Deadline exceeded'), timeoutMs)
    signal?.addEventListener('abort', this.onAbort, {once: true})
    this.listen(this.stream)
    const prefix = Buffer.alloc(PREFIX_BYTES)
    prefix.writeUInt32BE(message.length, 1)
    this.stream.end(Buffer.concat([prefix, message]))
  }

  private headers(): Record<string, string> {
    return {
      ':method': 'POST',
      ':scheme': 'http',
      ':authority': 'localhost',
      ':path': this.request.path,
      'content-type': 'application/grpc',
      te: 'trailers',
      // The runtime learns the deadline too, so it can give up on work nobody waits for.
      'grpc-timeout': encodeGrpcTimeout(this.request.timeoutMs),
      // podctl decompresses nothing: asking for identity keeps a runtime from compressing answers.
      'grpc-accept-encoding': 'identity',
      'user-agent': 'podctl',
    }
  }

  private listen(stream: ClientHttp2Stream): void {
    stream.on('response', (headers) => this.onHeaders(headers))
    stream.on('data', (chunk: Buffer) => this.onData(chunk))
    stream.on('trailers', (trailers) => this.onTrailers(trailers))
    // Errors end in 'close', where the outcome is decided with the stream's reset code.
    stream.on('error', () => {})
    stream.on('close', () => this.onClose(stream))
  }

  private onHeaders(headers: IncomingHttpHeaders): void {
    this.httpStatus = Number(headers[':status'])
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

  private onTrailers(trailers: IncomingHttpHeaders): void {
    const code = Number(trailers['grpc-status'])
    const details = decodeGrpcMessage(trailers['grpc-message'] as string | undefined)
    this.status = Number.isInteger(code) ? new GrpcStatusError(code, details) : new GrpcStatusError(Status.UNKNOWN, 'Invalid grpc-status')
  }

  private onClose(stream: ClientHttp2Stream): void {
    if (this.settled) return
    if (this.status) return this.finish(this.status)
    this.settle(this.withoutStatus(stream.rstCode))
  }

  /** The status a call gets when its stream ended without one, as grpc-js maps a stream's reset code. */
  private withoutStatus(rstCode: number | undefined): GrpcStatusError {
    // The session ended under the call (runtime restarted or crashed): the runtime is unavailable.
    if (this.session.destroyed || this.session.closed) return new GrpcStatusError(Status.UNAVAILABLE, 'Connection dropped')
    switch (rstCode) {
      case constants.NGHTTP2_NO_ERROR:
        if (this.httpStatus !== 200 && this.httpStatus !== 0) return statusFromHttp(this.httpStatus)
        return new GrpcStatusError(Status.INTERNAL, `Received RST_STREAM with code ${rstCode} (Call ended without gRPC status)`)
      case constants.NGHTTP2_REFUSED_STREAM:
        return new GrpcStatusError(Status.UNAVAILABLE, 'Stream refused by server')
      case constants.NGHTTP2_CANCEL:
        return new GrpcStatusError(Status.CANCELLED, 'Call cancelled')
      case constants.NGHTTP2_ENHANCE_YOUR_CALM:
        return new GrpcStatusError(Status.RESOURCE_EXHAUSTED, 'Bandwidth exhausted or memory limit exceeded')
      case constants.NGHTTP2_INADEQUATE_SECURITY:
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
    if (this.stream && !this.stream.closed && outcome instanceof GrpcStatusError) this.stream.close(constants.NGHTTP2_CANCEL)
  }
}
