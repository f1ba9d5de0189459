/**
 * --metrics-address for the supervisor: a registry the loop reports into and the HTTP server that
 * shows it, started before supervision (before `run` starts any pod) so a busy port fails the
 * command at once, and closed after.
 */
import {UsageError} from '../../errors.js'
import {parseListenAddress} from '../../metrics/address.js'
import {serveMetrics} from '../../metrics/server.js'
import {SupervisorMetrics} from '../workers/supervisor-metrics.js'

export interface MetricsEndpoint {
  metrics: SupervisorMetrics
  close(): Promise<void>
}

export interface EndpointOptions {
  /** The flag that runs the supervisor (--watch, --supervise), and whether it was given. */
  needs: string
  given: boolean
  warn(line: string): void
  note(line: string): void
}

/** Undefined without --metrics-address. */
export async function serveSupervisorMetrics(address: string | undefined, options: EndpointOptions): Promise<MetricsEndpoint | undefined> {
  if (address === undefined) return undefined
  refuseWithoutSupervisor(address, options)

  const listen = parseListenAddress(address)
  const metrics = new SupervisorMetrics()
  const server = await serveMetrics(metrics.registry, listen)
  if (!listen.loopback) {
    options.warn(`--metrics-address ${address}: /metrics (pod and container names) is served beyond this machine, without authentication`)
  }

  // The bound address, so port 0 can be used (a test reads it here).
  options.note(`Serving metrics at http://${server.address}/metrics`)
  return {metrics, close: () => server.close()}
}

/** --metrics-address without the flag that runs the supervisor: nothing would ever be reported. */
export function refuseWithoutSupervisor(address: string | undefined, {needs, given}: Pick<EndpointOptions, 'needs' | 'given'>): void {
  if (address !== undefined && !given) {
    throw new UsageError(`--metrics-address needs ${needs}: the metrics are the supervisor's; add ${needs} or drop the flag`)
  }
}
