/**
 * Everything `run -f` reads, as `kubectl apply -f` would take it: any number of files (or
 * directories of .yaml/.yml/.json files), each with any number of documents in any order — Pods,
 * workloads (their pod template), ConfigMaps, Secrets, ServiceAccounts, PersistentVolumeClaims, any
 * other kind, and Lists of them. ConfigMaps, Secrets and ServiceAccounts feed the pods; claims are matched
 * to the pods' claim volumes (claims.ts); only the pods run (kinds.ts). Volumes with no single-node
 * plugin are bound with --volume NAME=DIR, or refused.
 */
import {readdir, stat} from 'node:fs/promises'
import {isAbsolute, join, resolve} from 'node:path'

import {attachClaims, ClaimStore, parseClaim} from './claims.js'
import {FieldReader, type Json, type JsonObject, ManifestError} from './fields.js'
import type {PodModel} from './model.js'
import {
  applyServiceAccounts,
  documentRole,
  listSkipped,
  objectName,
  parseServiceAccount,
  type ServiceAccountObject,
  type SkippedObject,
  skippedObject,
} from './kinds.js'
import {ObjectStore, parseConfigMap, parseSecret} from './objects.js'
import {parsePod, type ParsePodOptions} from './pod.js'
import {podsFromWorkload, WORKLOAD_KINDS, type WorkloadKind, type WorkloadMatch, type WorkloadOptions} from './workloads.js'

export interface LabelledDocument {
  document: Json
  label: string
}

/**
 * The names a directory's manifests have, for `run -f DIR` and a watched directory alike: .yaml,
 * .yml or .json, not hidden. An editor's backups and swap files (`x.yaml~`, `x.yaml.bak`,
 * `#x.yaml#`, `.x.yaml.swp`) do not end so, and are never read as a second copy of the pod.
 */
export function isManifestName(name: string): boolean {
  return !name.startsWith('.') && /\.(ya?ml|json)$/.test(name)
}

/** A directory stands for its manifest files (isManifestName), sorted (kubectl -f DIR, not recursive). */
export async function expandManifestPaths(paths: readonly string[]): Promise<string[]> {
  const out: string[] = []
  for (const path of paths) {
    const info = path === '-' ? undefined : await stat(path).catch(() => undefined)
    if (!info?.isDirectory()) {
      out.push(path)
      continue
    }

    const names = (await readdir(path)).filter((name) => isManifestName(name)).sort()
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
  /** Documents with no Pod are fine (a watched directory's file of ConfigMaps feeds the pods of its other files). */
  allowNoPods?: boolean
}

/** What the documents of an input hold, sorted by what podctl does with them (kinds.ts). */
export interface ManifestContents {
  pods: PodModel[]
  /** Objects not run (Namespaces, RBAC, Services, custom resources, ...), for the one summary line. */
  skipped: SkippedObject[]
  /** How many workload documents there were (scaled to 0 they make no pod, which is no error). */
  workloads: number
  /** PersistentVolumeClaim documents as given (claims.ts parses them into the claims the pods' volumes are matched with). */
  claims: LabelledDocument[]
}

/** Every document → the pods to run, each holding the ConfigMaps and Secrets of the whole input. */
export function podsFromDocuments(documents: LabelledDocument[], options: PodsFromDocumentsOptions = {}): PodModel[] {
  return readDocuments(documents, options).pods
}

/** Every document, sorted by kind; the errors of all documents are reported together, each naming its document. */
export function readDocuments(documents: LabelledDocument[], options: PodsFromDocumentsOptions = {}): ManifestContents {
  const objects = new ObjectStore()
  const claims = new ClaimStore()
  const pods: PodModel[] = []
  const contents: ManifestContents = {pods, skipped: [], claims: [], workloads: 0}
  const accounts: ServiceAccountObject[] = []
  const errors: string[] = []
  for (const {document, label} of flatten(documents)) {
    try {
      readDocument(document, label, {pods, objects, claims, accounts, contents, options})
    } catch (error) {
      if (!(error instanceof ManifestError)) throw error
      errors.push(namingDocument(error.message, label, document))
    }
  }

  if (errors.length === 1) throw Object.assign(new ManifestError(''), {message: errors[0]})
  if (errors.length > 1) {
    const lines = errors.flatMap((message) => message.split('\n').map((line) => line.replace(/^ {2}/, '    ')))
    throw Object.assign(new ManifestError(''), {
      message: [`${errors.length} documents cannot be run as written:`, ...lines.map((line) => `  ${line}`)].join('\n'),
    })
  }

  // Workloads scaled to 0 replicas (or --replicas 0) make no pod, and that is not an error.
  if (pods.length === 0 && contents.workloads === 0 && !options.allowNoPods) {
    const what =
      objects.size > 0
        ? ' (only ConfigMaps and Secrets; add the Pod that uses them)'
        : claims.size > 0
          ? ' (only PersistentVolumeClaims; add the Pod that uses them)'
          : ''
    const others = contents.skipped.length > 0 ? ` (${listSkipped(contents.skipped)}: not run on one node)` : ''
    throw new ManifestError(`${documents[0]?.label.replace(/ \(document \d+\)$/, '') ?? 'the input'}: no Pod found${what || others}`)
  }

  applyServiceAccounts(pods, accounts)
  const bindings = parseVolumeFlags(options.volumes ?? [])
  for (const pod of pods) {
    if (objects.size > 0) pod.objects = objects
    attachClaims(pod, claims)
    bindVolumes(pod, bindings)
    projectedWarnings(pod)
  }

  for (const claim of claims.unused(pods)) {
    pods[0].warnings = [...(pods[0].warnings ?? []), `${claim.source}: claim ${claim.name} is used by no pod, so it is not provisioned`]
  }

  for (const name of bindings.keys()) {
    if (!pods.some((pod) => pod.volumes.some((volume) => volume.name === name))) {
      throw new ManifestError(`--volume ${name}=...: no pod has a volume named "${name}"`)
    }
  }

  return contents
}

interface Reading {
  pods: PodModel[]
  objects: ObjectStore
  claims: ClaimStore
  accounts: ServiceAccountObject[]
  contents: ManifestContents
  options: PodsFromDocumentsOptions
}

/** One document, by its role (kinds.ts): run, feed the pods, or be named in the summary. */
function readDocument(document: Json, label: string, {pods, objects, claims, accounts, contents, options}: Reading): void {
  const kind = asObject(document).kind as string
  switch (documentRole(document, label)) {
    case 'object': {
      if (kind === 'ConfigMap') objects.add({kind, value: parseConfigMap(document, label)})
      else objects.add({kind: 'Secret', value: parseSecret(document, label)})
      break
    }

    case 'workload': {
      contents.workloads++
      for (const workload of podsFromWorkload(asObject(document), kind as WorkloadKind, label, options).pods) {
        const {owner, startAfter} = workload
        pods.push({...parsePod(workload.document, workload.source, options), owner, ...(startAfter ? {startAfter} : {})})
      }

      break
    }

    case 'serviceAccount': {
      accounts.push(parseServiceAccount(document, label))
      contents.skipped.push(skippedObject(document, label))
      break
    }

    case 'claim': {
      claims.add(parseClaim(document, label))
      contents.claims.push({document, label})
      break
    }

    case 'skipped': {
      contents.skipped.push(skippedObject(document, label))
      break
    }

    default: {
      pods.push(parsePod(document, label, options))
    }
  }
}

/**
 * An error of one document of several names its kind and name too: "in.yaml (document 3, Secret/creds): ...".
 * The message was escaped already.
 */
function namingDocument(message: string, label: string, document: Json): string {
  if (!/ \(document \d+\)$| items\[\d+\]$/.test(label) || !message.startsWith(label)) return message
  const object = asObject(document)
  if (typeof object.kind !== 'string') return message
  const what = objectName(skippedObject(document, label))
  const named = label.endsWith(')') ? `${label.slice(0, -1)}, ${what})` : `${label} (${what})`
  return named + message.slice(label.length)
}

function isWorkloadKind(kind: Json | undefined): kind is WorkloadKind {
  return typeof kind === 'string' && (WORKLOAD_KINDS as readonly string[]).includes(kind)
}

/** A pod a manifest names, or a workload's pods by what identifies them: what `kill -f` kills. */
export type ManifestPodMatch = {source: string; pod: {name: string; namespace?: string}} | {source: string; workload: WorkloadMatch}

/**
 * What `kill -f` looks for, as `kubectl delete -f` deletes: each Pod by name (and namespace), each
 * workload's pods by its labels and name form (a pod of an older template has another name). ConfigMaps and Secrets
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

/**
 * A volume of an external source becomes a hostPath of the directory given (which must exist), or
 * is refused; a claim volume given one is served from it instead of its claim directory.
 */
function bindVolumes(pod: PodModel, bindings: Map<string, string>): void {
  pod.volumes = pod.volumes.map((volume) => {
    if (!volume.external && !volume.persistentVolumeClaim) return volume
    const dir = bindings.get(volume.name)
    if (dir === undefined && volume.persistentVolumeClaim) return volume
    if (dir === undefined) {
      throw new ManifestError(
        `${pod.source}: volume ${volume.name} (${volume.external!.source}) needs --volume ${volume.name}=DIR on a single node`,
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
