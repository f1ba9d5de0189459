/**
 * The calls behind crictl's status documents and stats lists, answered as crictl v1.29 prints them:
 * one CRI call each (crictl asks the runtime directly, with no listing first), then the document
 * built by documents.ts.
 */
import type {CriClient} from '../cri/client.js'
import {NotFoundError} from '../errors.js'
import type {InspectTarget} from '../node/inspect.js'
import {
  byAttributesId,
  byImageRef,
  containerStatusJson,
  type CrictlFormat,
  crictlMessage,
  crictlStatusInfo,
  imageStatusJson,
  podSandboxStatusJson,
} from './documents.js'
import {toJsonpb} from './jsonpb.js'

/** crictl inspect / inspectp / inspecti of one resolved object; -q (verbose false) leaves the info out. */
export async function crictlInspect(client: CriClient, target: InspectTarget, verbose: boolean, format: CrictlFormat): Promise<string> {
  switch (target.kind) {
    case 'container': {
      const response = await client.runtime('containerStatus', {containerId: target.id, verbose})
      if (!response.status) throw new NotFoundError(`${target.label}: the runtime returned no status`)
      return crictlStatusInfo(containerStatusJson(response.status), response.info, format)
    }

    case 'pod': {
      const response = await client.runtime('podSandboxStatus', {podSandboxId: target.id, verbose})
      if (!response.status) throw new NotFoundError(`${target.label}: the runtime returned no status`)
      return crictlStatusInfo(podSandboxStatusJson(response.status), response.info, format)
    }

    case 'image': {
      const response = await client.image('imageStatus', {image: {image: target.id}, verbose})
      // crictl's words when ImageStatus answers without an image.
      if (!response.image) throw new NotFoundError(`no such image "${target.id}" present`)
      return crictlStatusInfo(imageStatusJson(response.image), response.info, format)
    }
  }
}

/**
 * crictl images -o json|yaml [REPO]: the ListImages answer for a filter on REPO, in crictl's order.
 * The runtime applies the filter (containerd 1.6 ignores it and lists every image; so does crictl).
 */
export async function crictlImages(client: CriClient, repository: string | undefined, format: CrictlFormat): Promise<string> {
  const {images} = await client.image('listImages', {filter: repository ? {image: {image: repository}} : {}})
  return crictlMessage('ListImagesResponse', {images: byImageRef(images)}, format)
}

/** crictl info: the runtime's conditions and, unless -q, its verbose info. */
export async function crictlInfo(client: CriClient, verbose: boolean, format: CrictlFormat): Promise<string> {
  const response = await client.runtime('status', {verbose})
  return crictlStatusInfo(toJsonpb('RuntimeStatus', response.status ?? {conditions: []}), response.info, format)
}

/** crictl imagefsinfo: the whole ImageFsInfo answer as "status". */
export async function crictlImageFsInfo(client: CriClient, format: CrictlFormat): Promise<string> {
  return crictlStatusInfo(toJsonpb('ImageFsInfoResponse', await client.image('imageFsInfo', {})), undefined, format)
}

export interface CrictlStatsFilter {
  id?: string
  podSandboxId?: string
  labelSelector?: Record<string, string>
}

/** crictl stats -o json: one ListContainerStats, sorted by container ID, no sampling. */
export async function crictlStats(client: CriClient, filter: CrictlStatsFilter, format: CrictlFormat): Promise<string> {
  const {stats} = await client.runtime('listContainerStats', {filter})
  return crictlMessage('ListContainerStatsResponse', {stats: byAttributesId(stats)}, format)
}

/** crictl statsp -o json: one ListPodSandboxStats, sorted by sandbox ID. */
export async function crictlPodStats(
  client: CriClient,
  filter: Omit<CrictlStatsFilter, 'podSandboxId'>,
  format: CrictlFormat,
): Promise<string> {
  const {stats} = await client.runtime('listPodSandboxStats', {filter})
  return crictlMessage('ListPodSandboxStatsResponse', {stats: byAttributesId(stats)}, format)
}
