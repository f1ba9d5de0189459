import {PodctlError, RuntimeUnreachableError} from '../errors.js'
import {type ClientOptions, CRI_CLIENT_VERSION, CriClient} from './client.js'
import {DEFAULT_RUNTIME_ENDPOINTS, type EndpointInputs, type EndpointPlan, type EndpointSource, planEndpoints} from './endpoint.js'

export interface ConnectedClient {
  client: CriClient
  runtimeSource: EndpointSource
  imageSource: EndpointSource
}

type Settings = Omit<ClientOptions, 'runtimeEndpoint' | 'imageEndpoint'>

/** The CLI's endpoint resolution and connect in one: the commands (base-command) and the library API (api/) share it. */
export function connectRuntime(inputs: EndpointInputs, settings: Settings): Promise<ConnectedClient> {
  return connectPlan(planEndpoints(inputs), settings)
}

/**
 * Builds the client for a plan. With no endpoint configured, the well-known sockets are probed
 * quietly and concurrently; the first that answers Version wins (crictl warns on every command
 * and tries them one by one, cri-tools#703, #868).
 */
export async function connectPlan(plan: EndpointPlan, settings: Settings): Promise<ConnectedClient> {
  if (plan.runtime) {
    return {
      client: new CriClient({...settings, runtimeEndpoint: plan.runtime.endpoint, imageEndpoint: plan.image?.endpoint}),
      runtimeSource: plan.runtime.source,
      imageSource: plan.image?.source ?? 'runtime-endpoint',
    }
  }

  const winner = await probeEndpoints(DEFAULT_RUNTIME_ENDPOINTS, settings)
  if (plan.image && plan.image.endpoint !== winner.runtimeEndpoint) {
    winner.close()
    return {
      client: new CriClient({...settings, runtimeEndpoint: winner.runtimeEndpoint, imageEndpoint: plan.image.endpoint}),
      runtimeSource: 'probe',
      imageSource: plan.image.source,
    }
  }

  return {client: winner, runtimeSource: 'probe', imageSource: 'runtime-endpoint'}
}

export async function probeEndpoints(candidates: readonly string[], settings: Settings): Promise<CriClient> {
  const clients = candidates.map((endpoint) => new CriClient({...settings, runtimeEndpoint: endpoint, debug: settings.debug}))
  const attempts = clients.map(async (client) => {
    await client.runtime('version', {version: CRI_CLIENT_VERSION}, {timeoutMs: client.connectTimeoutMs})
    return client
  })
  try {
    const winner = await Promise.any(attempts)
    for (const client of clients) if (client !== winner) client.close()
    return winner
  } catch (error) {
    for (const client of clients) client.close()
    const reasons = (error as AggregateError).errors.map((reason: unknown, i: number) => {
      const message = reason instanceof PodctlError ? reason.message : String(reason)
      return `${candidates[i]} (${shortReason(message)})`
    })
    throw new RuntimeUnreachableError(
      `no CRI runtime found; tried ${reasons.join(', ')}. ` +
        'Set --runtime-endpoint, CONTAINER_RUNTIME_ENDPOINT or runtime-endpoint in /etc/crictl.yaml',
    )
  }
}

function shortReason(message: string): string {
  if (message.startsWith('no socket at')) return 'no socket'
  if (message.startsWith('permission denied')) return 'permission denied'
  if (message.includes('did not accept a connection')) return 'connect timeout'
  if (message.includes('does not implement')) return 'not a CRI v1 runtime'
  return message.split(';')[0]
}
