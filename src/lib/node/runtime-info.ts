import {CRI_CLIENT_VERSION, type CriClient} from '../cri/client.js'
import {callNewerRpc} from '../cri/newer-rpcs.js'
import type {ImageFsInfoResponse, RuntimeConfigResponse, StatusResponse, VersionResponse} from '../../generated/runtime/v1/api.js'
import {withVerboseInfo} from './verbose-info.js'

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
  const document = withVerboseInfo({status: {conditions: response.status?.conditions ?? []}}, response.info)

  if (response.runtimeHandlers.length > 0) document.runtimeHandlers = response.runtimeHandlers
  if (response.features) document.features = response.features
  return document
}

/** verbose=false (`info -q`): the conditions only, without the runtime's configuration. */
export async function runtimeInfo(client: CriClient, verbose = true): Promise<Record<string, unknown>> {
  return runtimeInfoDocument(await client.runtime('status', {verbose}))
}

/** `imagefsinfo`: crictl's document, {"status": {"imageFilesystems": [...], "containerFilesystems": [...]}}. */
export async function imageFsInfo(client: CriClient): Promise<{status: ImageFsInfoResponse}> {
  return {status: await client.image('imageFsInfo', {})}
}

/** `runtime-config`: the RuntimeConfig answer (the cgroup driver); a runtime without the RPC is an Unimplemented error. */
export async function runtimeConfig(client: CriClient): Promise<RuntimeConfigResponse> {
  return callNewerRpc(client, 'RuntimeConfig', () => client.runtime('runtimeConfig', {}))
}
