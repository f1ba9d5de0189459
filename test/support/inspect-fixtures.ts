import {createHash, randomBytes} from 'node:crypto'

import type {CriClient} from '../../src/lib/cri/client.js'
import {ContainerLabel, PodLabel} from '../../src/lib/kube/labels.js'
import {lab, makeContainerLogDir} from './lab.js'

/** Waits until a container has exited (for one whose command ends by itself). */
export {waitForExit as waitExited} from './containers.js'

/**
 * Containers and images for the ps / images / rmi / inspect end-to-end tests, made straight
 * through the CRI client (not through podctl), the way the kubelet would.
 */

/**
 * Pulls through the CRI (a no-op when present) and returns the image ID, from ImageStatus: PullImage's
 * image_ref is the ID on containerd but a repository digest on CRI-O.
 */
export async function ensureImage(client: CriClient, ref: string): Promise<string> {
  await client.image('pullImage', {image: {image: ref}}, {timeoutMs: 120_000})
  const {image} = await client.image('imageStatus', {image: {image: ref}})
  if (!image) throw new Error(`${ref} is not there right after its pull`)
  return image.id
}

export interface ContainerSpec {
  podId: string
  name: string
  image?: string
  command?: string[]
  labels?: Record<string, string>
  /** Start it (default true). */
  start?: boolean
}

/** CreateContainer (+ StartContainer) in a sandbox made by createSandbox(), labelled like the kubelet does. */
export async function createContainer(client: CriClient, spec: ContainerSpec): Promise<string> {
  const image = spec.image ?? lab().busybox
  const {status} = await client.runtime('podSandboxStatus', {podSandboxId: spec.podId})
  const meta = status!.metadata!
  const sandboxConfig = {
    metadata: meta,
    hostname: meta.name,
    logDirectory: `${lab().logRoot}/${meta.namespace}_${meta.name}_${meta.uid}`,
    labels: status!.labels,
    annotations: {},
    linux: {},
  }
  makeContainerLogDir(sandboxConfig, spec.name)
  const {containerId} = await client.runtime(
    'createContainer',
    {
      podSandboxId: spec.podId,
      config: {
        metadata: {name: spec.name, attempt: 0},
        // An image ID is how the kubelet creates containers; then there is no name to keep.
        image: {image, userSpecifiedImage: image.startsWith('sha256:') ? '' : image},
        command: spec.command ?? ['sleep', '3600'],
        logPath: `${spec.name}/0.log`,
        labels: {
          ...spec.labels,
          [ContainerLabel.name]: spec.name,
          [PodLabel.name]: meta.name,
          [PodLabel.namespace]: meta.namespace,
          [PodLabel.uid]: meta.uid,
        },
        annotations: {},
        linux: {},
      },
      sandboxConfig,
    },
    {timeoutMs: 60_000},
  )
  if (spec.start ?? true) await client.runtime('startContainer', {containerId}, {timeoutMs: 60_000})
  return containerId
}

const MANIFEST_TYPES = 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json'

async function registry(path: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(`http://${lab().registry}${path}`, init)
  if (!response.ok) throw new Error(`registry ${init.method ?? 'GET'} ${path}: HTTP ${response.status} ${await response.text()}`)
  return response
}

function sha256(data: Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`
}

async function uploadBlob(repo: string, data: Buffer, digest: string): Promise<void> {
  const start = await registry(`/v2/${repo}/blobs/uploads/`, {method: 'POST'})
  const location = new URL(start.headers.get('location')!, `http://${lab().registry}`)
  location.searchParams.set('digest', digest)
  await registry(`${location.pathname}${location.search}`, {
    method: 'PUT',
    headers: {'content-type': 'application/octet-stream'},
    body: data,
  })
}

/**
 * Pushes to the lab registry (loopback only) a copy of the lab's busybox whose config carries a
 * unique label, so it has its own image ID: removing it can never take busybox's tags with it
 * (a plain `skopeo copy` would keep the config, hence the ID, and RemoveImage removes by ID).
 * Layers are mounted from the busybox repository, not copied. Returns the full references.
 */
export async function pushUniqueImage(repo: string, tags: string[]): Promise<string[]> {
  const source = lab().busybox.slice(lab().registry.length + 1)
  const [sourceRepo, sourceTag] = [source.slice(0, source.lastIndexOf(':')), source.slice(source.lastIndexOf(':') + 1)]
  const manifest = (await (await registry(`/v2/${sourceRepo}/manifests/${sourceTag}`, {headers: {accept: MANIFEST_TYPES}})).json()) as {
    mediaType: string
    config: {digest: string; size: number; mediaType: string}
    layers: Array<{digest: string}>
  }
  const config = (await (await registry(`/v2/${sourceRepo}/blobs/${manifest.config.digest}`)).json()) as {
    config?: {Labels?: Record<string, string>}
  }
  config.config = {...config.config, Labels: {...config.config?.Labels, 'io.podctl.test': randomBytes(8).toString('hex')}}
  const configBytes = Buffer.from(JSON.stringify(config))
  const configDigest = sha256(configBytes)
  await uploadBlob(repo, configBytes, configDigest)

  for (const layer of manifest.layers) {
    const mount = await registry(`/v2/${repo}/blobs/uploads/?mount=${layer.digest}&from=${sourceRepo}`, {method: 'POST'})
    if (mount.status !== 201) {
      const blob = Buffer.from(await (await registry(`/v2/${sourceRepo}/blobs/${layer.digest}`)).arrayBuffer())
      await uploadBlob(repo, blob, layer.digest)
    }
  }

  const body = JSON.stringify({...manifest, config: {...manifest.config, digest: configDigest, size: configBytes.length}})
  for (const tag of tags) {
    await registry(`/v2/${repo}/manifests/${tag}`, {method: 'PUT', headers: {'content-type': manifest.mediaType}, body})
  }

  return tags.map((tag) => `${lab().registry}/${repo}:${tag}`)
}

/** Splits a podctl table into rows of cells (columns are at least 3 spaces apart). */
export function tableRows(stdout: string): string[][] {
  return stdout
    .trimEnd()
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => line.trim().split(/\s{3,}/))
}
