/**
 * What every probe runner returns: pkg/probe's Result (Success, Warning, Failure, Unknown) with the
 * output the kubelet puts in its events, and the error a runner could not turn into a result.
 */

/** The kubelet's version as probes announce it (User-Agent kube-probe/<major>.<minor>, kube-lifecycle for hooks). */
export const KUBE_VERSION = {major: '1', minor: '36'} as const

/** pkg/probe/http and exec read at most this much of a body or of the command's output (10 KiB). */
export const MAX_OUTPUT_BYTES = 10 * 1024

export type ProbeStatus = 'success' | 'warning' | 'failure' | 'unknown'

export interface ProbeOutcome {
  status: ProbeStatus
  /** The probe's output: the body, the command's stdout and stderr, or why it failed. */
  output: string
  /** exec probes: the command's exit code. */
  exitCode?: number
  /** status unknown: the error behind it (the kubelet retries and then discards the result). */
  error?: Error
}

/** One httpGet answer (http.ts, plain-http.ts). */
export interface HttpGetResponse {
  statusCode: number
  /** At most MAX_OUTPUT_BYTES of the body. */
  body: string
  /**
   * http:// (plain-http.ts): why the body could not be read to its end once the head was. Go's
   * client.Do has returned by then, so this is ReadAtMost's error: DoHTTPProbe returns it, and the
   * probe errs (its result thrown away) rather than fails.
   */
  bodyError?: string
}

/** Go's net.JoinHostPort: brackets around an IPv6 host. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`
}

/** Go's %v of a whole-second time.Duration ("1s", "1m0s"). */
export function goSeconds(seconds: number): string {
  if (seconds < 60) return `${seconds}s`
  const h = Math.floor(seconds / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  const s = seconds % 60
  return h > 0 ? `${h}h${m}m${s}s` : `${m}m${s}s`
}

/** A socket error the way Go's net package words it ("dial tcp 10.0.0.1:80: connect: connection refused"). */
export function goDialError(address: string, error: NodeJS.ErrnoException): string {
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'connect: connection refused',
    EHOSTUNREACH: 'connect: no route to host',
    ENETUNREACH: 'connect: network is unreachable',
    ETIMEDOUT: 'i/o timeout',
    ECONNRESET: 'read: connection reset by peer',
  }
  const reason = error.code ? reasons[error.code] : undefined
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return `dial tcp: lookup ${address.replace(/:\d+$/, '')}: no such host`
  return `dial tcp ${address}: ${reason ?? error.message}`
}
