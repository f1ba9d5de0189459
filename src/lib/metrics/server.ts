/**
 * The HTTP side of /metrics: GET /metrics renders the registry in the text format, /healthz answers
 * ok, any other path is 404. The server only reads the registry; nothing that reports into it knows it.
 */
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {UsageError} from '../errors.js'
import {authority, type ListenAddress, METRICS_ADDRESS_FLAG} from './address.js'
import {EXPOSITION_CONTENT_TYPE, renderRegistry} from './exposition.js'
import type {MetricsRegistry} from './registry.js'

export interface MetricsServer {
  /** host:port as bound (port 0 is replaced by the port the system chose). */
  readonly address: string
  close(): Promise<void>
}

const LISTEN_FAILURES: Record<string, string> = {
  EADDRINUSE: 'the address is already in use; choose another port (0 picks a free one)',
  EADDRNOTAVAIL: 'no interface of this machine has that address; use one of its addresses or 127.0.0.1',
  EACCES: 'not allowed to listen there (ports below 1024 need privileges); choose a port above 1023',
  ENOTFOUND: 'the host name does not resolve; give an IP address',
}

export async function serveMetrics(registry: MetricsRegistry, listen: ListenAddress): Promise<MetricsServer> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]
    const body = request.method === 'HEAD' ? undefined : ''
    if (path === '/metrics') {
      response.writeHead(200, {'Content-Type': EXPOSITION_CONTENT_TYPE})
      response.end(body === undefined ? undefined : renderRegistry(registry))
    } else if (path === '/healthz') {
      response.writeHead(200, {'Content-Type': 'text/plain; charset=utf-8'})
      response.end(body === undefined ? undefined : 'ok')
    } else {
      response.writeHead(404, {'Content-Type': 'text/plain; charset=utf-8'})
      response.end(body === undefined ? undefined : '404 page not found\n')
    }
  })
  await listenOn(server, listen)
  // The command's own work keeps the process alive; a command that fails before it must not hang on the server.
  server.unref()
  const bound = server.address() as AddressInfo
  return {
    address: authority(bound.address, bound.port),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

function listenOn(server: Server, {host, port}: ListenAddress): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      const reason = (error.code && LISTEN_FAILURES[error.code]) ?? error.message
      reject(new UsageError(`${METRICS_ADDRESS_FLAG} ${authority(host, port)}: ${reason}`))
    }

    server.once('error', failed)
    server.listen({host, port}, () => {
      server.off('error', failed)
      resolve()
    })
  })
}
