/**
 * --metrics-address for the supervisor: a registry the loop reports into and the HTTP server that
 * shows it, started before supervision so a busy port fails the command at once, and closed after.
 */
import {parseListenAddress} from '../../metrics/address.js'
import {serveMetrics} from '../../metrics/server.js'
import {SupervisorMetrics} from './supervisor-metrics.js'

export interface MetricsEndpoint {
  metrics: SupervisorMetrics
  close(): Promise<void>
}

export async function serveSupervisorMetrics(
  address: string,
  say: {warn(line: string): void; note(line: string): void},
): Promise<MetricsEndpoint> {
  const listen = parseListenAddress(address)
  const metrics = new SupervisorMetrics()
  const server = await serveMetrics(metrics.registry, listen)
  if (!listen.loopback) {
    say.warn(`--metrics-address ${address}: /metrics (pod and container names) is served beyond this machine, without authentication`)
  }

  // The bound address, so port 0 can be used (a test reads it here).
  say.note(`Serving metrics at http://${server.address}/metrics`)
  return {metrics, close: () => server.close()}
}
