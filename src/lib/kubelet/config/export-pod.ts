/**
 * `podctl export POD`: the pod as a manifest again. The source of truth is the pod source the
 * kubelet would have: the record `run` (or `sync -f`) kept in the pod directory, with the
 * ConfigMaps it was given; without one, the pod as the runtime has it (runtime-manifest.ts), with
 * what could not be recovered said. Secrets are named, never printed.
 */
import {basename, dirname} from 'node:path'

import type {CriClient} from '../../cri/client.js'
import type {ManifestObject} from '../../manifest/container-manifest.js'
import {configMapManifest, describeSecrets, type ExportForm, inForm, objectReferences, staticPodName} from '../../manifest/export-forms.js'
import type {PodModel} from '../../manifest/model.js'
import {podManifest} from '../../manifest/pod-manifest.js'
import type {PodSandbox} from '../../../generated/runtime/v1/api.js'
import {ContainerAnnotation, containerHash, containerName, PodctlAnnotation, podDirectoryOf, podUidOf} from '../../kube/labels.js'
import {liveObjects} from '../core/env.js'
import {readDesiredPod} from './desired-state.js'
import {referencedObjects} from './recorded-objects.js'
import {rebuildPod, type RuntimeContainer} from './runtime-manifest.js'

export interface ExportOptions {
  form: ExportForm
  /** Where records are when the sandbox does not say (run's --pod-dir-root). */
  podDirRoot: string
  /** The node name the kubelet appends to a static pod's name. */
  nodeName: string
}

export interface ExportedManifest {
  /** The documents to print, in order: the ConfigMaps the pod reads, then the pod (or its Deployment). */
  documents: ManifestObject[]
  /** The v1 Pod itself (also inside a Deployment), for checks of the form. */
  pod: ManifestObject
  source: 'record' | 'runtime'
  /** Lines for stderr: what is missing or changed, and which Secrets the pod needs. */
  notes: string[]
}

/** The kubelet's annotation on a pod from a static pod file (kubetypes.ConfigSourceAnnotationKey). */
const CONFIG_SOURCE = 'kubernetes.io/config.source'

/** The root the sandbox's own pod directory lives in (run records it), else the configured one. */
function recordRoot(sandbox: PodSandbox, uid: string, fallback: string): string {
  const directory = podDirectoryOf(sandbox.annotations)
  return directory !== undefined && basename(directory) === uid ? dirname(directory) : fallback
}

/** The newest sandbox of the pod (resolve.ts lists them newest first) as a manifest. */
export async function exportPod(client: CriClient, sandboxes: readonly PodSandbox[], options: ExportOptions): Promise<ExportedManifest> {
  const [sandbox] = sandboxes
  const uid = podUidOf(sandbox.labels) || sandbox.metadata?.uid || ''
  const recorded = uid === '' ? undefined : await readDesiredPod(recordRoot(sandbox, uid, options.podDirRoot), uid, client.runtimeEndpoint)
  const exported = recorded ? fromRecord(recorded) : await fromRuntime(client, sandbox)
  if (recorded) exported.notes.push(...(await specDrift(client, sandbox, recorded)))
  const fromStaticFile = sandbox.annotations[CONFIG_SOURCE] === 'file'
  const name = String((exported.pod.metadata as ManifestObject).name ?? '')
  const staticName = options.form === 'static' && fromStaticFile ? staticPodName(name, options.nodeName) : undefined
  const {document, notes} = inForm(exported.pod, options.form, {owner: recorded?.owner, staticName})
  // A static pod file holds one Pod: the ConfigMaps it would read cannot go beside it.
  const configMaps = options.form === 'static' ? [] : exported.configMaps
  return {
    documents: [...configMaps, document],
    pod: exported.pod,
    source: recorded ? 'record' : 'runtime',
    notes: [...exported.notes, ...notes],
  }
}

interface Exported {
  pod: ManifestObject
  configMaps: ManifestObject[]
  notes: string[]
}

function fromRecord(pod: PodModel): Exported {
  const {pod: manifest, notes} = podManifest(pod)
  const references = objectReferences(pod)
  const kept = liveObjects(pod) ? referencedObjects(pod).configMaps : []
  const keptNames = new Set(kept.map((configMap) => configMap.name))
  const missing = references.configMaps.filter((name) => !keptNames.has(name))
  if (missing.length > 0)
    notes.push(`ConfigMaps ${missing.join(', ')}: their data was not kept with the pod (a reboot clears it); give them beside the manifest`)
  if (references.secrets.size > 0)
    notes.push(`the pod needs Secrets ${describeSecrets(references.secrets)}: never printed; give them beside the manifest`)
  return {pod: manifest, configMaps: kept.map((configMap) => configMapManifest(configMap)), notes}
}

/**
 * The kubelet's check of a container against its spec (io.kubernetes.container.hash): a container
 * that runs another spec than the record's (a sync since changed it, or is about to) is said, as the
 * export is the record, not what runs.
 */
async function specDrift(client: CriClient, sandbox: PodSandbox, pod: PodModel): Promise<string[]> {
  const {containers} = await client.runtime('listContainers', {filter: {podSandboxId: sandbox.id}})
  const specs = new Map([...pod.initContainers, ...pod.containers].map((container) => [container.name, container]))
  const newest = new Map<string, (typeof containers)[number]>()
  for (const container of containers) {
    const name = containerName(container)
    const seen = newest.get(name)
    if (!seen || container.createdAt > seen.createdAt) newest.set(name, container)
  }

  return [...newest].flatMap(([name, container]) => {
    const spec = specs.get(name)
    const running = container.annotations[ContainerAnnotation.hash]
    if (!spec || running === undefined || running === containerHash(spec)) return []
    return [`container ${name} runs another spec than the record's (io.kubernetes.container.hash ${running}); the export is the record`]
  })
}

/** The CRI config in a verbose answer: containerd keeps it in the JSON of its `info` key; others may give `config` itself. */
function configOf(info: Readonly<Record<string, string>> | undefined): Record<string, unknown> | undefined {
  const parse = (text: string | undefined): Record<string, unknown> | undefined => {
    try {
      const value: unknown = JSON.parse(text ?? '')
      return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
    } catch {
      return undefined
    }
  }

  const config = parse(info?.info)?.config ?? parse(info?.config)
  return config !== null && typeof config === 'object' && !Array.isArray(config) ? (config as Record<string, unknown>) : undefined
}

async function fromRuntime(client: CriClient, sandbox: PodSandbox): Promise<Exported> {
  const [{status, info}, {containers}] = await Promise.all([
    client.runtime('podSandboxStatus', {podSandboxId: sandbox.id, verbose: true}),
    client.runtime('listContainers', {filter: {podSandboxId: sandbox.id}}),
  ])
  const statuses = await Promise.all(
    containers.map(async (container): Promise<RuntimeContainer | undefined> => {
      const answer = await client.runtime('containerStatus', {containerId: container.id, verbose: true}).catch(() => undefined)
      return answer?.status && {status: answer.status, config: configOf(answer.info)}
    }),
  )
  const rebuilt = rebuildPod({
    sandbox: status ?? {...sandbox, network: undefined, linux: undefined, runtimeHandler: sandbox.runtimeHandler},
    sandboxConfig: configOf(info),
    containers: statuses.filter((container): container is RuntimeContainer => container !== undefined),
  })
  const why =
    sandbox.annotations[PodctlAnnotation.podDirectory] === undefined
      ? 'podctl did not make it'
      : 'made by runp/create, or its pod directory is gone'
  const notes = [
    `no record of this pod (${why}): rebuilt from the runtime; not on the runtime, so left out: ${rebuilt.unrecovered.join(', ')}`,
  ]
  if (rebuilt.secretEnv.length > 0)
    notes.push(`env variables from Secrets left out (their values are never printed): ${rebuilt.secretEnv.join(', ')}`)
  return {pod: rebuilt.pod, configMaps: [], notes: [...notes, ...rebuilt.notes]}
}
