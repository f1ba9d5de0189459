/**
 * Everything `run -f` reads, as `kubectl apply -f` would take it: any number of files (or
 * directories of .yaml/.yml/.json files), each with any number of documents in any order — Pods,
 * workloads (their pod template), ConfigMaps, Secrets, and Lists of them. ConfigMaps and Secrets
 * feed the pods; only the pods run. Volumes with no single-node plugin are bound with
 * --volume NAME=DIR, or refused.
 */
import {readdir, stat} from 'node:fs/promises'
import {isAbsolute, join, resolve} from 'node:path'

import {FieldReader, type Json, type JsonObject, ManifestError} from './fields.js'
import type {PodModel} from './model.js'
import {ObjectStore, parseConfigMap, parseSecret} from './objects.js'
import {parsePod, type ParsePodOptions} from './pod.js'
import {podsFromWorkload, WORKLOAD_KINDS, type WorkloadKind, type WorkloadMatch, type WorkloadOptions} from './workloads.js'

export interface LabelledDocument {
  document: Json
  label: string
}

/** A directory stands for its .yaml, .yml and .json files, sorted (kubectl -f DIR, not recursive). */
export async function expandManifestPaths(paths: readonly string[]): Promise<string[]> {
  const out: string[] = []
  for (const path of paths) {
    const info = path === '-' ? undefined : await stat(path).catch(() => undefined)
    if (!info?.isDirectory()) {
      out.push(path)
      continue
    }

    const names = (await readdir(path)).filter((name) => /\.(ya?ml|json)$/.test(name)).sort()
    if (names.length === 0) throw new ManifestError(`${path}: the directory holds no .yaml, .yml or .json file`)
    out.push(...names.map((name) => join(path, name)))
  }

  if (paths.filter((path) => path === '-').length > 1) throw new ManifestError('-f - (stdin) can be given only once')
  return out
}

/** Lists ("kind: List", or PodList, ConfigMapList, ...) are opened into their items (run --static reads them too). */
export function flatten(documents: LabelledDocument[]): LabelledDocument[] {
  return documents.flatMap(({document, label}) => {
    const object = asObject(document)
    if (typeof object.kind !== 'string' || !object.kind.endsWith('List') || !('items' in object)) return [{document, label}]
    const r = new FieldReader(label)
    r.object(document, '', {supported: ['apiVersion', 'kind', 'items', 'metadata']})
    const items = r.list(object.items, 'items').map((item, index) => ({document: item, label: `${label} items[${index}]`}))
    return flatten(items)
  })
}

function asObject(value: Json): JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {}
}

export interface PodsFromDocumentsOptions extends ParsePodOptions, WorkloadOptions {
  /** --volume NAME=DIR. */
  volumes?: readonly string[]
}

/** Every document → the pods to run, each holding the ConfigMaps and Secrets of the whole input. */
export function podsFromDocuments(documents: LabelledDocument[], options: PodsFromDocumentsOptions = {}): PodModel[] {
  const objects = new ObjectStore()
  const pods: PodModel[] = []
  let workloads = 0
  for (const {document, label} of flatten(documents)) {
    const kind = asObject(document).kind
    if (kind === 'ConfigMap') objects.add({kind, value: parseConfigMap(document, label)})
    else if (kind === 'Secret') objects.add({kind, value: parseSecret(document, label)})
    else if (isWorkloadKind(kind)) {
      workloads++
      for (const workload of podsFromWorkload(asObject(document), kind, label, options).pods) {
        const {owner, startAfter} = workload
        pods.push({...parsePod(workload.document, workload.source, options), owner, ...(startAfter ? {startAfter} : {})})
      }
    } else pods.push(parsePod(document, label, options))
  }

  // Workloads scaled to 0 replicas (or --replicas 0) make no pod, and that is not an error.
  if (pods.length === 0 && workloads === 0) {
    const what = objects.size > 0 ? ' (only ConfigMaps and Secrets; add the Pod that uses them)' : ''
    throw new ManifestError(`${documents[0]?.label.replace(/ \(document \d+\)$/, '') ?? 'the input'}: no Pod found${what}`)
  }

  const bindings = parseVolumeFlags(options.volumes ?? [])
  for (const pod of pods) {
    if (objects.size > 0) pod.objects = objects
    bindVolumes(pod, bindings)
    projectedWarnings(pod)
  }

  for (const name of bindings.keys()) {
    if (!pods.some((pod) => pod.volumes.some((volume) => volume.name === name))) {
      throw new ManifestError(`--volume ${name}=...: no pod has a volume named "${name}"`)
    }
  }

  return pods
}

function isWorkloadKind(kind: Json | undefined): kind is WorkloadKind {
  return typeof kind === 'string' && (WORKLOAD_KINDS as readonly string[]).includes(kind)
}

/** A pod a manifest names, or a workload's pods by what identifies them: what `kill -f` kills. */
export type ManifestPodMatch = {source: string; pod: {name: string; namespace?: string}} | {source: string; workload: WorkloadMatch}

/**
 * What `kill -f` looks for, as `kubectl delete -f` deletes: each Pod by name (and namespace), each
 * workload's pods by its labels and name form (their names are random). ConfigMaps and Secrets
 * are skipped; nothing is validated beyond what finding the pods needs.
 */
export function podMatchesFromDocuments(documents: LabelledDocument[]): ManifestPodMatch[] {
  const out: ManifestPodMatch[] = []
  for (const {document, label} of flatten(documents)) {
    const object = asObject(document)
    const r = new FieldReader(label)
    const kind = r.requiredString(object.kind, 'kind')
    if (isWorkloadKind(kind)) {
      out.push({source: label, workload: podsFromWorkload(object, kind, label, {replicas: 0}).match})
      continue
    }

    // ConfigMaps, Secrets and the other objects beside the pods make no pod of their own.
    if (kind !== 'Pod') continue
    const metadata = asObject(object.metadata ?? null)
    const name = r.requiredString(metadata.name, 'metadata.name')
    const namespace = r.string(metadata.namespace, 'metadata.namespace') || undefined
    out.push({source: label, pod: {name, ...(namespace ? {namespace} : {})}})
  }

  if (out.length === 0) {
    throw new ManifestError(`${documents[0]?.label.replace(/ \(document \d+\)$/, '') ?? 'the input'}: no Pod or workload found`)
  }

  return out
}

/** --volume NAME=DIR (repeatable) → name → absolute directory. */
export function parseVolumeFlags(values: readonly string[]): Map<string, string> {
  const out = new Map<string, string>()
  for (const value of values) {
    const eq = value.indexOf('=')
    const name = eq > 0 ? value.slice(0, eq) : ''
    const dir = eq > 0 ? value.slice(eq + 1) : ''
    if (name === '' || dir === '') throw new ManifestError(`--volume ${value}: expected NAME=DIR, e.g. --volume data=/srv/data`)
    if (out.has(name)) throw new ManifestError(`--volume ${name} is given twice`)
    out.set(name, isAbsolute(dir) ? dir : resolve(dir))
  }

  return out
}

/** A volume of an external source becomes a hostPath of the directory given (which must exist), or is refused. */
function bindVolumes(pod: PodModel, bindings: Map<string, string>): void {
  pod.volumes = pod.volumes.map((volume) => {
    if (!volume.external) return volume
    const dir = bindings.get(volume.name)
    if (dir === undefined) {
      throw new ManifestError(
        `${pod.source}: volume ${volume.name} (${volume.external.source}) needs --volume ${volume.name}=DIR on a single node`,
      )
    }

    return {...volume, hostPath: {path: dir, type: 'Directory'}}
  })
}

function projectedWarnings(pod: PodModel): void {
  for (const volume of pod.volumes) {
    for (const source of volume.projected?.sources ?? []) {
      if (!source.skipped) continue
      const why =
        source.skipped === 'serviceAccountToken'
          ? 'there is no API server to issue a token'
          : 'there is no API server to hold trust bundles'
      pod.warnings = [...(pod.warnings ?? []), `${pod.source}: volume ${volume.name}: the ${source.skipped} source is skipped (${why})`]
    }
  }
}
