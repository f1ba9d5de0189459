/**
 * --metrics-address HOST:PORT: where /metrics listens. No host (`:9100` or `9100`) means loopback;
 * a host that is not loopback serves the node's pod names to whoever reaches it, so it has to be
 * written out, and the command says so once on stderr.
 */
import {isIP} from 'node:net'

import {UsageError} from '../errors.js'

export const METRICS_ADDRESS_FLAG = '--metrics-address'

export interface ListenAddress {
  host: string
  port: number
  loopback: boolean
}

export function parseListenAddress(text: string): ListenAddress {
  const bad = () =>
    new UsageError(`${METRICS_ADDRESS_FLAG} ${JSON.stringify(text)}: expected HOST:PORT, e.g. 127.0.0.1:9100 (port 0 picks a free one)`)
  // [v6]:PORT, HOST:PORT, :PORT or PORT.
  const match = /^(?:(?:\[([^\]]+)\]|([^:[\]]*)):)?(\d{1,5})$/.exec(text)
  if (!match) throw bad()
  const [, bracketed, plain, digits] = match
  const host = bracketed ?? plain ?? ''
  const port = Number(digits)
  if (port > 65_535) throw bad()
  if (bracketed !== undefined && isIP(host) !== 6) throw bad()
  if (host === '') return {host: '127.0.0.1', port, loopback: true}
  return {host, port, loopback: isLoopback(host)}
}

function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true
  return isIP(host) === 4 && host.startsWith('127.')
}

/** host:port as a URL authority (brackets around IPv6). */
export function authority(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`
}
