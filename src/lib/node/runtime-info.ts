import type {CriClient} from '../cri/client.js'
import type {StatusResponse, VersionResponse} from '../../generated/runtime/v1/api.js'
import {parseVerboseInfo} from './inspect.js'

/** The CRI version podctl speaks, sent in VersionRequest as the kubelet does. */
export const CRI_CLIENT_VERSION = '0.1.0'

export interface VersionReport {
  client: {version: string}
  /** Absent when the runtime could not be asked. */
  runtime?: VersionResponse
}

export async function runtimeVersion(client: CriClient): Promise<VersionResponse> {
  return client.runtime('version', {version: CRI_CLIENT_VERSION})
}

/**
 * `info`: the runtime's verbose Status as one JSON document, crictl's shape: `status`
 * (conditions), then each verbose info key as parsed JSON (containerd: config, cniconfig,
 * golang, lastCNILoadStatus…), then runtimeHandlers and features when the runtime reports them.
 */
export function runtimeInfoDocument(response: StatusResponse): Record<string, unknown> {
  const document: Record<string, unknown> = {status: {conditions: response.status?.conditions ?? []}}
  for (const [key, value] of Object.entries(parseVerboseInfo(response.info))) {
    document[key in document ? `${key}Info` : key] = value
  }

  if (response.runtimeHandlers.length > 0) document.runtimeHandlers = response.runtimeHandlers
  if (response.features) document.features = response.features
  return document
}

export async function runtimeInfo(client: CriClient): Promise<Record<string, unknown>> {
  return runtimeInfoDocument(await client.runtime('status', {verbose: true}))
}
