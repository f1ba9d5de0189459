/**
 * What a static pod cannot have: a reference to an API object. The kubelet runs static pods without
 * an API server, and NodeRestriction forbids the mirror pod of one to reference a ServiceAccount,
 * ConfigMap, Secret, PersistentVolumeClaim or ephemeral volume, so the kubelet rejects such a file.
 * `run --static` refuses every one of them, across all pods, in one ManifestError (exit 2), read from
 * the pod documents as written so each line names the field path; nothing is written then.
 * ConfigMaps and Secrets given beside the pods are not inlined: they are references all the same.
 */
import type {Json, JsonObject} from '../manifest/fields.js'
import {ManifestError} from '../manifest/fields.js'

/** A pod document about to become a static pod file, and how to name it in messages. */
export interface PodDocument {
  document: Json
  /** The pod's name (metadata.name), else where it came from. */
  label: string
}

const CANNOT = 'a static pod cannot reference'
const REJECTS = '(the kubelet rejects it)'

/** Throws one ManifestError listing every API object reference of every pod; returns when there is none. */
export function refuseApiReferences(pods: readonly PodDocument[]): void {
  const lines = pods.flatMap(({document, label}) => apiReferences(document).map((line) => `${label}: ${line}`))
  if (lines.length === 1) throw new ManifestError(`${lines[0]}; nothing was written`)
  if (lines.length > 1) {
    throw ManifestError.lines(`${lines.length} references a static pod cannot have (the kubelet rejects them); nothing was written:`, lines)
  }
}

/** One line per reference: "spec.containers[0].env[1].valueFrom.secretKeyRef: a static pod cannot reference a Secret (...)". */
export function apiReferences(document: Json): string[] {
  const spec = object(object(document).spec)
  const out: string[] = []
  const refuse = (path: string, what: string) => out.push(`${path}: ${CANNOT} ${what} ${REJECTS}`)
  for (const key of ['serviceAccountName', 'serviceAccount']) {
    if (typeof spec[key] === 'string' && spec[key] !== '') refuse(`spec.${key}`, 'a ServiceAccount')
  }

  for (const index of list(spec.imagePullSecrets).keys()) refuse(`spec.imagePullSecrets[${index}]`, 'an image pull Secret')
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const [index, container] of list(spec[key]).entries()) containerReferences(object(container), `spec.${key}[${index}]`, refuse)
  }

  for (const [index, volume] of list(spec.volumes).entries()) volumeReferences(object(volume), `spec.volumes[${index}]`, refuse)
  return out
}

type Refuse = (path: string, what: string) => void

function containerReferences(container: JsonObject, path: string, refuse: Refuse): void {
  for (const [index, variable] of list(container.env).entries()) {
    const from = object(object(variable).valueFrom)
    const where = `${path}.env[${index}].valueFrom`
    if (present(from.configMapKeyRef)) refuse(`${where}.configMapKeyRef`, 'a ConfigMap')
    if (present(from.secretKeyRef)) refuse(`${where}.secretKeyRef`, 'a Secret')
  }

  for (const [index, source] of list(container.envFrom).entries()) {
    const from = object(source)
    if (present(from.configMapRef)) refuse(`${path}.envFrom[${index}].configMapRef`, 'a ConfigMap')
    if (present(from.secretRef)) refuse(`${path}.envFrom[${index}].secretRef`, 'a Secret')
  }
}

const VOLUME_SOURCES: ReadonlyArray<[string, string]> = [
  ['configMap', 'a ConfigMap'],
  ['secret', 'a Secret'],
  ['persistentVolumeClaim', 'a PersistentVolumeClaim'],
  ['ephemeral', 'an ephemeral volume (it makes a PersistentVolumeClaim)'],
]

const PROJECTED_SOURCES: ReadonlyArray<[string, string]> = [
  ['configMap', 'a ConfigMap'],
  ['secret', 'a Secret'],
  ['serviceAccountToken', 'a ServiceAccount token'],
]

function volumeReferences(volume: JsonObject, path: string, refuse: Refuse): void {
  for (const [key, what] of VOLUME_SOURCES) if (present(volume[key])) refuse(`${path}.${key}`, what)
  for (const [index, source] of list(object(volume.projected).sources).entries()) {
    for (const [key, what] of PROJECTED_SOURCES) {
      if (present(object(source)[key])) refuse(`${path}.projected.sources[${index}].${key}`, what)
    }
  }
}

function object(value: Json | undefined): JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {}
}

function list(value: Json | undefined): Json[] {
  return Array.isArray(value) ? value : []
}

function present(value: Json | undefined): boolean {
  return value !== undefined && value !== null
}
