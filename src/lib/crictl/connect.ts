/**
 * crictl v1.37's connections (crictl_config.go GetRuntimeService/GetImageService, cri-client's
 * validateServiceConnection): an endpoint set explicitly is checked with Version (runtime) or
 * ImageFsInfo (image), retried --max-retries times with back-off (500 ms doubling, at most 5 s); with
 * none set, crictl's warning and its default endpoints tried one by one, each failure logged. Failures
 * read as crictl's: `validate service connection: validate CRI v1 runtime API for endpoint "…": rpc
 * error: code = Unavailable desc = …`, `only support unix socket endpoint`, `--runtime-endpoint is not set`.
 */
import {stat as statCallback} from 'node:fs'
import {promisify} from 'node:util'

import {CRI_CLIENT_VERSION, CriClient} from '../cri/client.js'
import {PodctlError} from '../errors.js'
import {crictlCause} from './errors.js'
import {error as logError, warning} from './log.js'
import type {CrictlSettings} from './server-config.js'

// Not node:fs/promises: loading it is a millisecond of a start (see cri/channels.ts).
const stat = promisify(statCallback)

export const DEFAULT_ENDPOINTS = [
  'unix:///run/containerd/containerd.sock',
  'unix:///run/crio/crio.sock',
  'unix:///var/run/cri-dockerd.sock',
]

export class ConnectError extends Error {}

/** cri-client's GetAddressAndDialer: unix:// as is, a bare path as unix://, any other scheme refused. */
function socketOf(endpoint: string): string {
  const scheme = /^([a-zA-Z][\w+.-]*):\/\//.exec(endpoint)?.[1]
  if (scheme === undefined) return endpoint.startsWith('/') ? endpoint : `/${endpoint}`
  if (scheme !== 'unix')
    throw new ConnectError(scheme === 'tcp' ? 'only support unix socket endpoint' : `protocol ${JSON.stringify(scheme)} not supported`)
  return new URL(endpoint).pathname
}

/** grpc-go's text for a dial that failed before any RPC. */
async function dialFailure(path: string): Promise<string | undefined> {
  try {
    const info = await stat(path)
    if (!info.isSocket()) return `dial unix ${path}: connect: connection refused`
    return undefined
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const reason = code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : String(code)
    return `dial unix ${path}: connect: ${reason}`
  }
}

type Service = 'runtime' | 'image'

/** One connection attempt: the client once its validation call answered, or crictl's error. */
async function connectOnce(endpoint: string, service: Service, settings: CrictlSettings): Promise<CriClient> {
  const path = socketOf(endpoint)
  const what = `validate service connection: validate CRI v1 ${service} API for endpoint ${JSON.stringify(endpoint)}`
  const dial = await dialFailure(path)
  if (dial)
    throw new ConnectError(
      `${what}: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: ${dial}"`,
    )
  const unix = `unix://${path}`
  const client = new CriClient({
    runtimeEndpoint: unix,
    imageEndpoint: unix,
    connectTimeoutMs: settings.timeoutMs,
    callTimeoutMs: settings.timeoutMs,
  })
  try {
    await (service === 'runtime' ? client.runtime('version', {version: CRI_CLIENT_VERSION}) : client.image('imageFsInfo', {}))
    return client
  } catch (error) {
    client.close()
    const failure = error as PodctlError
    const cause = failure.grpc ? crictlCause(error) : 'rpc error: code = DeadlineExceeded desc = context deadline exceeded'
    throw new ConnectError(`${what}: ${cause}`)
  }
}

async function withRetries(maxRetries: number, connect: () => Promise<CriClient>): Promise<CriClient> {
  let delay = 500
  for (let attempt = 0; ; attempt++) {
    try {
      return await connect()
    } catch (error) {
      const retry = error instanceof ConnectError && !error.message.startsWith('only support') && (maxRetries < 0 || attempt < maxRetries)
      if (!retry) throw error
    }

    await new Promise((resolve) => {
      setTimeout(resolve, delay)
    })
    delay = Math.min(delay * 2, 5000)
  }
}

async function connectDefault(service: Service, settings: CrictlSettings): Promise<CriClient> {
  const label = service === 'runtime' ? 'runtime connect' : 'Image connect'
  warning(
    `${label} using default endpoints: [${DEFAULT_ENDPOINTS.join(' ')}]. ` +
      'As the default settings are now deprecated, you should set the endpoint instead.',
  )
  let last: unknown
  for (const endpoint of DEFAULT_ENDPOINTS) {
    try {
      return await connectOnce(endpoint, service, settings)
    } catch (error) {
      logError((error as Error).message)
      last = error
    }
  }

  throw last
}

/** GetRuntimeService. */
export function connectRuntimeService(settings: CrictlSettings): Promise<CriClient> {
  if (settings.runtimeEndpointIsSet && settings.runtimeEndpoint === '')
    return Promise.reject(new ConnectError('--runtime-endpoint is not set'))
  if (!settings.runtimeEndpointIsSet) return connectDefault('runtime', settings)
  return withRetries(settings.maxRetries, () => connectOnce(settings.runtimeEndpoint, 'runtime', settings))
}

/** GetImageService: the image endpoint, else the runtime's. */
export function connectImageService(settings: CrictlSettings): Promise<CriClient> {
  let {imageEndpoint: endpoint, imageEndpointIsSet: isSet} = settings
  if (endpoint === '') {
    if (settings.runtimeEndpointIsSet && settings.runtimeEndpoint === '')
      return Promise.reject(new ConnectError('--image-endpoint is not set'))
    endpoint = settings.runtimeEndpoint
    isSet = settings.runtimeEndpointIsSet
  }

  if (!isSet) return connectDefault('image', settings)
  return withRetries(settings.maxRetries, () => connectOnce(endpoint, 'image', settings))
}
