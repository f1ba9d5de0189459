import {UsageError} from '../errors.js'
import type {CrictlConfig} from './config.js'

/** Where crictl and the kubelet look when nothing is configured, in crictl's order. */
export const DEFAULT_RUNTIME_ENDPOINTS = [
  'unix:///run/containerd/containerd.sock',
  'unix:///run/crio/crio.sock',
  'unix:///var/run/cri-dockerd.sock',
] as const

export type EndpointSource = 'flag' | 'env' | 'config' | 'probe' | 'runtime-endpoint'

export interface ResolvedEndpoint {
  endpoint: string
  source: EndpointSource
}

export interface EndpointInputs {
  runtimeFlag?: string
  imageFlag?: string
  env: NodeJS.ProcessEnv
  config?: CrictlConfig
}

export interface EndpointPlan {
  /** Undefined when nothing names a runtime: the caller probes DEFAULT_RUNTIME_ENDPOINTS. */
  runtime?: ResolvedEndpoint
  /** Undefined when it should follow the runtime endpoint. */
  image?: ResolvedEndpoint
}

/** First match wins: flag, environment, crictl config file; otherwise the caller probes. */
export function planEndpoints(inputs: EndpointInputs): EndpointPlan {
  const runtime =
    pick(inputs.runtimeFlag, 'flag', '--runtime-endpoint') ??
    pick(inputs.env.CONTAINER_RUNTIME_ENDPOINT, 'env', 'CONTAINER_RUNTIME_ENDPOINT') ??
    pick(inputs.config?.runtimeEndpoint, 'config', `runtime-endpoint in ${inputs.config?.path}`)
  const image =
    pick(inputs.imageFlag, 'flag', '--image-endpoint') ??
    pick(inputs.env.IMAGE_SERVICE_ENDPOINT, 'env', 'IMAGE_SERVICE_ENDPOINT') ??
    pick(inputs.config?.imageEndpoint, 'config', `image-endpoint in ${inputs.config?.path}`)
  return {runtime, image}
}

function pick(value: string | undefined, source: EndpointSource, origin: string): ResolvedEndpoint | undefined {
  if (value === undefined || value.trim() === '') return undefined
  return {endpoint: normalizeEndpoint(value.trim(), origin), source}
}

/**
 * Accepts `unix:///path`, `unix:/path` and a bare absolute path; returns `unix:///path`.
 * TCP and named pipes are refused: CRI runtimes on Linux listen on unix sockets only.
 */
export function normalizeEndpoint(value: string, origin = 'endpoint'): string {
  if (value.startsWith('/')) return `unix://${value}`
  const match = /^unix:(?:\/\/)?(\/.*)$/.exec(value)
  if (match) return `unix://${match[1].replace(/^\/+/, '/')}`
  throw new UsageError(`${origin}: unsupported endpoint "${value}"; use a unix socket such as unix:///run/containerd/containerd.sock`)
}

/** The filesystem path of a normalized `unix://` endpoint. */
export function socketPath(endpoint: string): string {
  return endpoint.replace(/^unix:\/\//, '')
}
