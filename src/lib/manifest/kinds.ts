/**
 * Every kind a Kubernetes manifest holds, sorted by what podctl does with it: Pods and workloads
 * run, ConfigMaps and Secrets feed them, ServiceAccounts set what their pods mount, claims are
 * handed on; every other object (Namespaces, RBAC, Services, PDBs, CRDs, webhooks, custom
 * resources, ...) needs an API server or a controller and is not run, named in one summary line
 * (--strict refuses them). A kind close to a runnable one in a built-in group is a typo and refused.
 */
import {escapeControl, FieldReader, type Json, type JsonObject, ManifestError} from './fields.js'
import type {PodModel} from './model.js'
import {closestName} from './names.js'
import {readMetadata} from './objects.js'
import {WORKLOAD_KINDS} from './workloads.js'

/** An object of the input that podctl does not run, for the summary line. */
export interface SkippedObject {
  kind: string
  name: string
  namespace?: string
  source: string
}

/** A ServiceAccount document: the pods that name it get its imagePullSecrets and its automount setting. */
export interface ServiceAccountObject {
  name: string
  namespace: string
  automountServiceAccountToken?: boolean
  imagePullSecrets: string[]
  source: string
}

export type DocumentRole = 'pod' | 'workload' | 'object' | 'serviceAccount' | 'claim' | 'skipped'

const RUNNABLE = ['Pod', ...WORKLOAD_KINDS, 'ConfigMap', 'Secret', 'ServiceAccount', 'PersistentVolumeClaim']
/** Groups whose kinds podctl knows: a kind there that is not one of them but close to one is a typo. */
const BUILT_IN_GROUPS = new Set(['v1', 'apps/v1', 'batch/v1'])

function asObject(value: Json): JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {}
}

/** What the document is for; a document without a kind goes to the Pod reader, which says what is missing. */
export function documentRole(document: Json, source: string): DocumentRole {
  const {kind, apiVersion} = asObject(document)
  if (typeof kind !== 'string' || kind === 'Pod') return 'pod'
  if ((WORKLOAD_KINDS as readonly string[]).includes(kind)) return 'workload'
  if (kind === 'ConfigMap' || kind === 'Secret') return 'object'
  if (kind === 'ServiceAccount') return 'serviceAccount'
  // PersistentVolumeClaim documents are left untouched for the claims' reader (ManifestContents.claims).
  if (kind === 'PersistentVolumeClaim') return 'claim'
  const guess = closestName(kind, RUNNABLE)
  if (guess && typeof apiVersion === 'string' && BUILT_IN_GROUPS.has(apiVersion)) {
    throw new ManifestError(`${source}: kind "${kind}" is not a known kind of ${apiVersion}; did you mean ${guess}?`)
  }

  return 'skipped'
}

/** Kind, namespace and name of any object, as far as it has them (a custom resource is not validated). */
export function skippedObject(document: Json, source: string): SkippedObject {
  const object = asObject(document)
  const metadata = asObject(object.metadata ?? null)
  const name =
    typeof metadata.name === 'string' ? metadata.name : typeof metadata.generateName === 'string' ? `${metadata.generateName}*` : ''
  const namespace = typeof metadata.namespace === 'string' && metadata.namespace !== '' ? metadata.namespace : undefined
  return {kind: String(object.kind), name, ...(namespace ? {namespace} : {}), source}
}

/** "Kind/namespace/name" (or "Kind/name"), as the summary shows it. */
export function objectName(object: Pick<SkippedObject, 'kind' | 'name' | 'namespace'>): string {
  return [object.kind, object.namespace, object.name || '(no name)'].filter(Boolean).join('/')
}

/** The summary keeps to about this many objects by name; beyond it, objects are counted by kind. */
const MAX_NAMED = 8

/** Every object by name when few, else by kind with counts ("ClusterRole x3, Namespace/demo"). */
export function listSkipped(skipped: readonly SkippedObject[]): string {
  if (skipped.length <= MAX_NAMED) return skipped.map((object) => objectName(object)).join(', ')
  const byKind = new Map<string, SkippedObject[]>()
  for (const object of skipped) byKind.set(object.kind, [...(byKind.get(object.kind) ?? []), object])
  return [...byKind].map(([kind, objects]) => (objects.length === 1 ? objectName(objects[0]) : `${kind} x${objects.length}`)).join(', ')
}

/** The one line naming every object not run. */
export function skippedWarning(skipped: readonly SkippedObject[]): string | undefined {
  if (skipped.length === 0) return undefined
  return escapeControl(`not run on one node (they need an API server or a controller): ${listSkipped(skipped)}; --strict refuses them`)
}

/** --strict: every object not run is refused, all in one error, each with its document. */
export function refuseSkipped(skipped: readonly SkippedObject[]): void {
  if (skipped.length === 0) return
  const lines = skipped.map((object) => `${object.source}: ${objectName(object)}`)
  throw ManifestError.lines(
    `--strict refuses ${skipped.length} object${skipped.length === 1 ? '' : 's'} podctl does not run on one node ` +
      '(remove them, or run without --strict):',
    lines,
  )
}

const SERVICE_ACCOUNT_RULE = {
  supported: ['apiVersion', 'kind', 'metadata', 'automountServiceAccountToken', 'imagePullSecrets'],
  // Token Secrets of a cluster: there is no API server to issue them.
  ignored: ['secrets'],
}
export function parseServiceAccount(document: Json, source: string): ServiceAccountObject {
  const r = new FieldReader(source)
  const root = r.object(document, '', SERVICE_ACCOUNT_RULE)
  const apiVersion = r.string(root.apiVersion, 'apiVersion', {required: true})
  if (apiVersion !== 'v1') r.fail('apiVersion', `must be "v1" for a ServiceAccount, not "${apiVersion}"`)
  const {name, namespace} = readMetadata(r, root.metadata)
  const imagePullSecrets = r.list(root.imagePullSecrets, 'imagePullSecrets').flatMap((entry, index) => {
    const value = r.string(r.object(entry, `imagePullSecrets[${index}]`, {supported: ['name']}).name, `imagePullSecrets[${index}].name`)
    return value ? [value] : []
  })
  const automount = r.boolean(root.automountServiceAccountToken, 'automountServiceAccountToken')
  return {name, namespace, imagePullSecrets, source, ...(automount === undefined ? {} : {automountServiceAccountToken: automount})}
}

const ACCOUNT_FIELDS = new Set(['spec.serviceAccountName', 'spec.serviceAccount', 'spec.automountServiceAccountToken'])

/**
 * What the ServiceAccount admission plugin does with the pod's account: a pod without
 * imagePullSecrets gets the account's. With automounting off (the pod's own field wins over the
 * account's, as in Kubernetes) no token is mounted there either, so the account fields have their
 * full effect here and are no longer listed as ignored.
 */
export function applyServiceAccounts(pods: PodModel[], accounts: readonly ServiceAccountObject[]): void {
  for (const pod of pods) {
    const name = pod.serviceAccountName ?? 'default'
    const account =
      accounts.find((item) => item.name === name && item.namespace === pod.namespace) ??
      accounts.find((item) => item.name === name && item.namespace === '')
    if (account && !pod.imagePullSecrets?.length && account.imagePullSecrets.length > 0)
      pod.imagePullSecrets = [...account.imagePullSecrets]
    const automount = pod.automountServiceAccountToken ?? account?.automountServiceAccountToken ?? true
    if (automount || !pod.ignoredFields) continue
    pod.ignoredFields = pod.ignoredFields.filter((field) => !ACCOUNT_FIELDS.has(field.path))
    if (pod.ignoredFields.length === 0) delete pod.ignoredFields
  }
}
