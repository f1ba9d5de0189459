/**
 * The probe's GET over a bare TCP socket, for http:// (https:// keeps node:https): one request
 * with `Connection: close`, as the kubelet's transport sends it (DisableKeepAlives), and just enough
 * of HTTP/1.1 to read the answer: the status line, Location, and the body (Content-Length, chunked,
 * or up to the close) up to 10 KiB. node:http builds a request object, an agent and a parser per
 * call; at 100 probes a second that was twice this one's CPU, half of a supervisor's.
 */
import {connect} from 'node:net'

import {goDialError, type HttpGetResponse, joinHostPort, MAX_OUTPUT_BYTES} from './types.js'

/** An answer with the Location a redirect names (http.ts follows it). */
export type PlainResponse = HttpGetResponse & {location?: string}

/** Go's MaxResponseHeaderBytes is 10 MiB; a probe target sending more than this is broken. */
const MAX_HEADER_BYTES = 1 << 20
/** A header value Go refuses to send (httpguts.ValidHeaderFieldValue): control characters but tab. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const INVALID_VALUE = /[\u0000-\u0008\u000A-\u001F\u007F]/

/**
 * The request's bytes: the target, Host (the probe's own header if it set one, else `authority`), the
 * rest in order. The kubelet's URL always names the port (formatURL), and Go sends Host as the URL has
 * it: `10.0.0.5:80`, where a WHATWG URL drops a default port.
 */
export function requestText(url: URL, headers: Record<string, string[]>, authority = url.host): string {
  const {Host: host, ...rest} = headers
  let text = `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${host?.[0] ?? authority}\r\n`
  for (const [name, values] of Object.entries(rest)) {
    for (const value of values) {
      if (INVALID_VALUE.test(value)) throw new Error(`net/http: invalid header field value for "${name}"`)
      text += `${name}: ${value}\r\n`
    }
  }

  return `${text}Connection: close\r\n\r\n`
}

/** One GET; rejects with Go's wording (`Get "URL": ...`), as getOnce in http.ts does for https. */
export function plainGet(
  url: URL,
  headers: Record<string, string[]>,
  options: {deadline: number; signal?: AbortSignal; authority?: string},
): Promise<PlainResponse> {
  const {deadline, signal} = options
  const where = `Get "${url.href}"`
  const host = url.hostname.replaceAll(/^\[|\]$/g, '')
  const port = Number(url.port || 80)
  const address = joinHostPort(host, port)
  return new Promise((resolve, reject) => {
    let text: string
    try {
      text = requestText(url, headers, options.authority)
    } catch (error) {
      reject(new Error(`${where}: ${(error as Error).message}`))
      return
    }

    const reader = new ResponseReader()
    const socket = connect({host, port})
    const timer = setTimeout(
      () => {
        if (reader.head) answer('context deadline exceeded (Client.Timeout or context cancellation while reading body)')
        else fail(`${where}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)
      },
      Math.max(0, deadline - Date.now()),
    )
    const onAbort = () => fail(`${where}: context canceled`)
    signal?.addEventListener('abort', onAbort, {once: true})
    if (signal?.aborted) onAbort()

    function finish(): void {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      socket.removeAllListeners()
      socket.on('error', () => {})
      socket.destroy()
    }

    function fail(message: string): void {
      finish()
      reject(new Error(message))
    }

    /** The answer as read so far, with why its body stopped short, if it did. */
    function answer(bodyError?: string): void {
      finish()
      resolve({...reader.response(), ...(bodyError === undefined ? {} : {bodyError})})
    }

    socket.once('connect', () => socket.write(text, 'latin1'))
    socket.on('data', (chunk: Buffer) => {
      let problem: string | undefined
      try {
        reader.add(chunk)
      } catch (error) {
        problem = (error as Error).message
      }

      if (problem !== undefined) {
        if (reader.head) answer(problem)
        else fail(`${where}: ${problem}`)
      } else if (reader.done) answer()
    })
    socket.once('end', () => {
      const problem = reader.end()
      if (problem !== undefined && !reader.head) fail(`${where}: ${problem}`)
      else answer(problem)
    })
    socket.once('error', (error: NodeJS.ErrnoException) => {
      if (reader.head) answer(error.code === 'ECONNRESET' ? 'read: connection reset by peer' : error.message)
      else fail(`${where}: ${goDialError(address, error)}`)
    })
  })
}

/** The answer's head, then its body as it arrives; throws Go's wording for what it cannot read. */
class ResponseReader {
  head: {statusCode: number; location?: string; length?: number; chunked: boolean} | undefined
  done = false
  private pending: Buffer = Buffer.alloc(0)
  private readonly body: Buffer[] = []
  private size = 0
  /** Chunked: the bytes left of the current chunk (-1: a size line comes next). */
  private chunkLeft = -1

  add(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    if (!this.head) this.readHead()
    if (this.head && !this.done) this.readBody()
  }

  /** The peer closed: what is wrong with stopping here, if anything. */
  end(): string | undefined {
    if (this.done) return undefined
    if (!this.head) return this.pending.length === 0 ? 'EOF' : 'unexpected EOF'
    // Without a length, the body is whatever came before the close.
    if (this.head.length === undefined && !this.head.chunked) return undefined
    return 'unexpected EOF'
  }

  response(): PlainResponse {
    const {statusCode = 0, location} = this.head ?? {}
    return {statusCode, body: Buffer.concat(this.body).toString('utf8'), location}
  }

  private readHead(): void {
    for (;;) {
      const end = this.pending.indexOf('\r\n\r\n')
      if (end === -1) {
        if (this.pending.length > MAX_HEADER_BYTES) throw new Error(`net/http: server response headers exceeded ${MAX_HEADER_BYTES} bytes`)
        return
      }

      const lines = this.pending.toString('latin1', 0, end).split('\r\n')
      this.pending = this.pending.subarray(end + 4)
      const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0])
      if (!status) throw new Error(`net/http: HTTP/1.x transport connection broken: malformed HTTP response ${JSON.stringify(lines[0])}`)
      const statusCode = Number(status[1])
      // 1xx answers but 101 come before the real one; Go's transport reads past them.
      if (statusCode >= 100 && statusCode < 200 && statusCode !== 101) continue
      const fields = headerFields(lines)
      const chunked = /(^|,)\s*chunked\s*$/i.test(fields.get('transfer-encoding') ?? '')
      const length = fields.has('content-length') ? Number(fields.get('content-length')) : undefined
      if (length !== undefined && !(Number.isInteger(length) && length >= 0))
        throw new Error(`net/http: bad Content-Length ${JSON.stringify(fields.get('content-length'))}`)
      const bodiless = statusCode === 204 || statusCode === 304 || statusCode === 101
      this.head = {
        statusCode,
        location: fields.get('location'),
        length: bodiless ? 0 : chunked ? undefined : length,
        chunked: chunked && !bodiless,
      }
      if (this.head.length === 0) this.done = true
      return
    }
  }

  private readBody(): void {
    if (this.head?.chunked) this.readChunks()
    else {
      const length = this.head?.length
      this.take(length === undefined ? this.pending : this.pending.subarray(0, Math.max(0, length - this.size)))
      this.pending = Buffer.alloc(0)
    }

    // ReadAtMost stops at the limit: the rest is not waited for.
    if (this.size >= MAX_OUTPUT_BYTES || (this.head?.length !== undefined && this.size >= this.head.length)) this.done = true
  }

  private readChunks(): void {
    while (!this.done && this.size < MAX_OUTPUT_BYTES) {
      if (this.chunkLeft < 0) {
        const lineEnd = this.pending.indexOf('\r\n')
        if (lineEnd === -1) return
        const size = Number.parseInt(this.pending.toString('latin1', 0, lineEnd).split(';')[0].trim(), 16)
        if (!Number.isInteger(size) || size < 0) throw new Error('malformed chunked encoding')
        this.pending = this.pending.subarray(lineEnd + 2)
        if (size === 0) {
          this.done = true
          return
        }

        this.chunkLeft = size
      }

      const data = this.pending.subarray(0, this.chunkLeft)
      this.take(data)
      this.chunkLeft -= data.length
      this.pending = this.pending.subarray(data.length)
      if (this.chunkLeft > 0) return
      // The chunk's own CRLF.
      if (this.pending.length < 2) {
        this.chunkLeft = 0
        return
      }

      this.pending = this.pending.subarray(2)
      this.chunkLeft = -1
    }
  }

  private take(data: Buffer): void {
    const room = MAX_OUTPUT_BYTES - this.size
    if (room <= 0 || data.length === 0) return
    const kept = data.subarray(0, room)
    this.body.push(kept)
    this.size += kept.length
  }
}

/** A head's fields by lower-case name, the first of each (Location, Content-Length, Transfer-Encoding are single). */
function headerFields(lines: readonly string[]): Map<string, string> {
  const fields = new Map<string, string>()
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    if (!fields.has(name)) fields.set(name, line.slice(colon + 1).trim())
  }

  return fields
}
