/**
 * The lab registry behind a bandwidth limit: an HTTP proxy on localhost (which containerd's CRI
 * plugin talks plain http to) that passes every request on and paces each response body to
 * `bytesPerSecond`. A local pull of 40 MB otherwise takes a third of a second, too quick to watch;
 * at 10 MB/s it lasts seconds, so pull progress has something to show on every run.
 */
import {createServer, request, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {Transform} from 'node:stream'

export interface SlowRegistry {
  /** host:port to put in image references, e.g. "localhost:43121" */
  host: string
  close: () => Promise<void>
}

/** A stream that lets bytes through no faster than `bytesPerSecond`. */
function paced(bytesPerSecond: number): Transform {
  const started = Date.now()
  let sent = 0
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      sent += chunk.length
      const due = started + (sent / bytesPerSecond) * 1000
      setTimeout(() => callback(null, chunk), Math.max(0, due - Date.now()))
    },
  })
}

export async function slowRegistry(upstream: string, bytesPerSecond: number): Promise<SlowRegistry> {
  const [upstreamHost, upstreamPort] = upstream.split(':')
  const server: Server = createServer((incoming, outgoing) => {
    const forwarded = request(
      {
        host: upstreamHost === 'localhost' ? '127.0.0.1' : upstreamHost,
        port: Number(upstreamPort ?? 80),
        method: incoming.method,
        path: incoming.url,
        headers: {...incoming.headers, host: upstream},
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(paced(bytesPerSecond)).pipe(outgoing)
      },
    )
    forwarded.on('error', () => outgoing.destroy())
    incoming.pipe(forwarded)
  })
  await new Promise<void>((resolve) => {
    server.listen(0, '127.0.0.1', resolve)
  })
  const {port} = server.address() as AddressInfo
  return {
    host: `localhost:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
