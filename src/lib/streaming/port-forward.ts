import net from 'node:net'

import {RuntimeError, UsageError} from '../errors.js'
import {connectSpdy, type SpdySession, type SpdyStream} from './spdy-session.js'

/**
 * The Kubernetes port-forward protocol (portforward.k8s.io over SPDY/3.1), the way kubectl speaks it:
 * one session for the whole run; per local connection a pair of streams sharing a `requestID`, an
 * error stream (the server writes why forwarding failed) and a data stream (the bytes both ways),
 * each naming the pod's `port`. Half-closes travel as FIN, so request/response protocols work.
 */
export const PORT_FORWARD_PROTOCOL = 'portforward.k8s.io'

export interface PortSpec {
  /** 0: pick a free port. */
  localPort: number
  remotePort: number
}

/** kubectl's forms: REMOTE (same local port), LOCAL:REMOTE, :REMOTE and 0:REMOTE (a free local port). */
export function parsePortSpec(text: string): PortSpec {
  const match = /^(?:(\d*):)?(\d+)$/.exec(text.trim())
  const bad = (why: string) => new UsageError(`port "${text}": ${why}; give [LOCAL:]REMOTE, e.g. 8080, 9000:80 or :80 (a free local port)`)
  if (!match) throw bad('not a port')
  const remotePort = Number(match[2])
  const localPort = match[1] === undefined ? remotePort : match[1] === '' ? 0 : Number(match[1])
  if (remotePort < 1 || remotePort > 65_535) throw bad('the remote port must be 1-65535')
  if (localPort > 65_535) throw bad('the local port must be 0-65535')
  return {localPort, remotePort}
}

export interface ForwardOptions {
  /** Local addresses to listen on (e.g. 127.0.0.1, ::1). */
  addresses: readonly string[]
  /** Deadline of the connect and upgrade. */
  timeoutMs: number
  /** kubectl's progress lines ("Handling connection for 8080") and per-connection errors. */
  onLine?: (line: string, to: 'stdout' | 'stderr') => void
}

export interface Listening {
  address: string
  localPort: number
  remotePort: number
}

/**
 * A running forwarder: its listeners, close() (stop listening, end the session), and `ended`,
 * which rejects when the streaming session is lost and resolves after close().
 */
export interface Forwarder {
  listening: Listening[]
  ended: Promise<void>
  close(): void
}

/** "Forwarding from 127.0.0.1:8080 -> 80", as kubectl prints it ([::1] for IPv6). */
export function forwardingLine(entry: Listening): string {
  const host = entry.address.includes(':') ? `[${entry.address}]` : entry.address
  return `Forwarding from ${host}:${entry.localPort} -> ${entry.remotePort}`
}

export async function startPortForward(url: URL, ports: readonly PortSpec[], options: ForwardOptions): Promise<Forwarder> {
  if (ports.length === 0) throw new UsageError('no port given; usage: podctl port-forward POD [LOCAL:]REMOTE...')
  const servers: net.Server[] = []
  const listening: Listening[] = []
  try {
    for (const address of options.addresses) {
      for (const port of ports) {
        const server = await listen(address, port.localPort)
        servers.push(server)
        listening.push({address, localPort: (server.address() as net.AddressInfo).port, remotePort: port.remotePort})
      }
    }
  } catch (error) {
    for (const server of servers) server.close()
    throw error
  }

  let session: SpdySession
  try {
    session = await connectSpdy(url, {protocol: PORT_FORWARD_PROTOCOL, timeoutMs: options.timeoutMs})
  } catch (error) {
    for (const server of servers) server.close()
    throw error
  }

  const connections = new Set<net.Socket>()
  let closing = false
  let stopped: () => void = () => {}
  const ended = new Promise<void>((resolve, reject) => {
    stopped = resolve
    session.closing.add(() => {
      if (!closing) reject(new RuntimeError("lost the connection to the runtime's streaming server; port-forward ended"))
    })
  })
  ended.catch(() => {})
  let nextRequest = 0
  for (const [index, server] of servers.entries()) {
    const {localPort, remotePort} = listening[index]
    server.on('connection', (socket) => {
      connections.add(socket)
      socket.once('close', () => connections.delete(socket))
      options.onLine?.(`Handling connection for ${localPort}`, 'stdout')
      forwardConnection(session, socket, {port: remotePort, requestId: String(nextRequest++)}, options)
    })
  }

  const close = () => {
    if (closing) return
    closing = true
    for (const server of servers) server.close()
    for (const socket of connections) socket.destroy()
    session.close()
    stopped()
  }

  session.closing.add(() => {
    for (const server of servers) server.close()
    for (const socket of connections) socket.destroy()
  })
  return {listening, ended, close}
}

function listen(address: string, port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer({pauseOnConnect: true})
    server.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'EADDRINUSE' ? 'the port is in use' : error.code === 'EACCES' ? 'permission denied' : error.code
      reject(
        new UsageError(`cannot listen on ${address.includes(':') ? `[${address}]` : address}:${port}: ${why}; pick another local port`),
      )
    })
    server.listen({host: address, port, exclusive: true}, () => resolve(server))
  })
}

/** One local connection to the pod's port: an error stream and a data stream with the same request ID. */
function forwardConnection(
  session: SpdySession,
  socket: net.Socket,
  {port, requestId}: {port: number; requestId: string},
  options: ForwardOptions,
): void {
  const headers = {port: String(port), requestID: requestId}
  const errors = session.openStream({streamType: 'error', ...headers})
  // podctl never writes on the error stream.
  errors.end()
  const data = session.openStream({streamType: 'data', ...headers})
  let failure = ''
  errors.data.add((chunk: Buffer) => {
    failure += chunk.toString('utf8')
  })
  errors.ended.add(() => {
    if (failure.trim() === '') return
    options.onLine?.(`error forwarding port ${port}: ${failure.trim().replaceAll(/\s+/g, ' ')}`, 'stderr')
    socket.destroy()
  })

  data.data.add((chunk: Buffer) => {
    if (!socket.write(chunk)) {
      session.pause()
      socket.once('drain', () => session.resume())
    }
  })
  data.ended.add(() => socket.end())
  socket.on('data', (chunk: Buffer) => {
    if (!data.write(chunk)) {
      socket.pause()
      void session.drain().then(() => socket.resume())
    }
  })
  socket.once('end', () => data.end())
  socket.on('error', () => socket.destroy())
  socket.once('close', () => finish(data, errors))
  data.replied.then(
    () => socket.resume(),
    () => socket.destroy(),
  )
}

/** The local side is gone: whatever the server still holds open is reset. */
function finish(data: SpdyStream, errors: SpdyStream): void {
  if (!data.remoteDone || !data.localDone) data.reset()
  if (!errors.remoteDone) errors.reset()
}
