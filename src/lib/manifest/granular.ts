/**
 * The inputs of the one-step commands: `runp` reads a pod (a v1 Pod manifest, or crictl's pod
 * sandbox config), `create` reads one container (a container of a Pod manifest, or crictl's
 * container config). A document with `kind` or `apiVersion` is a Pod manifest; one without is a
 * crictl config (crictl's have neither). Every problem is a ManifestError naming the file.
 */
import {parseCrictlContainerConfig, parseCrictlPodConfig} from './crictl.js'
import {type Json, ManifestError} from './fields.js'
import {checkImageReferences, type InputForm} from './images.js'
import {parseDocuments, readInput, sourceName} from './load.js'
import type {ContainerModel, ContainerPortModel, PodModel, VolumeModel} from './model.js'
import {parsePod} from './pod.js'

export interface SandboxInput {
  form: InputForm
  /** For a crictl config: no containers (port_mappings are in `ports`). */
  pod: PodModel
  /** crictl's port_mappings, which belong to the sandbox; empty for a manifest (its containers' ports count). */
  ports: ContainerPortModel[]
}

export interface ContainerInput {
  form: InputForm
  container: ContainerModel
  /** The volumes the container mounts (manifest volumes, or crictl mounts as hostPath volumes). */
  volumes: VolumeModel[]
  /** The manifest's pod, for its terminationGracePeriodSeconds; absent for a crictl config. */
  pod?: PodModel
  source: string
}

async function singleDocument(path: string): Promise<{document: Json; source: string}> {
  const source = sourceName(path)
  const documents = await parseDocuments(await readInput(path), source)
  if (documents.length !== 1)
    throw new ManifestError(`${source}: must hold exactly one document (one Pod or one config), found ${documents.length}`)
  return {document: documents[0], source}
}

function isManifest(document: Json): boolean {
  return typeof document === 'object' && document !== null && !Array.isArray(document) && ('kind' in document || 'apiVersion' in document)
}

/** runp's POD-CONFIG: a Pod manifest or crictl's pod sandbox config. */
export async function loadSandboxInput(path: string): Promise<SandboxInput> {
  const {document, source} = await singleDocument(path)
  if (isManifest(document)) return {form: 'manifest', pod: parsePod(document, source), ports: []}
  const {pod, ports} = parseCrictlPodConfig(document, source)
  return {form: 'crictl', pod, ports}
}

/** create's container: `container` of the Pod manifest at `path` (the only one when not named), or crictl's container config. */
export async function loadContainerInput(path: string, containerName?: string): Promise<ContainerInput> {
  const {document, source} = await singleDocument(path)
  if (!isManifest(document)) {
    if (containerName !== undefined)
      throw new ManifestError(`${source}: --container picks a container of a Pod manifest; this is a crictl container config`)
    const {container, volumes} = parseCrictlContainerConfig(document, source)
    checkImageReferences([{...placeholderPod(source), containers: [container]}], 'crictl')
    return {form: 'crictl', container, volumes, source}
  }

  const pod = parsePod(document, source)
  checkImageReferences([pod], 'manifest')
  const all = [...pod.containers, ...pod.initContainers]
  const names = all.map((container) => container.name).join(', ')
  let container: ContainerModel | undefined
  if (containerName === undefined) {
    if (all.length > 1)
      throw new ManifestError(`${source}: pod "${pod.name}" has ${all.length} containers (${names}); pick one with --container NAME`)
    container = all[0]
  } else {
    container = all.find((candidate) => candidate.name === containerName)
    if (!container) throw new ManifestError(`${source}: pod "${pod.name}" has no container "${containerName}"; it has: ${names}`)
  }

  const mounted = new Set(container.volumeMounts.map((mount) => mount.name))
  return {form: 'manifest', container, volumes: pod.volumes.filter((volume) => mounted.has(volume.name)), pod, source}
}

/** A pod around a lone crictl container, for the checks that take pods. */
function placeholderPod(source: string): PodModel {
  return {
    source,
    name: '',
    namespace: '',
    uid: '',
    uidGenerated: false,
    labels: {},
    annotations: {},
    restartPolicy: 'Never',
    hostNetwork: false,
    hostPID: false,
    hostIPC: false,
    shareProcessNamespace: false,
    dnsPolicy: 'Default',
    volumes: [],
    initContainers: [],
    containers: [],
  }
}
