/**
 * The forms `podctl export --as` prints a pod in (pod, deployment, static), the ConfigMap
 * documents printed beside it, and the names of the API objects it reads: Secrets are named
 * (with the keys it reads), never printed.
 */
import type {ManifestObject} from './container-manifest.js'
import type {ConfigMapObject, PodModel, VolumeModel} from './model.js'

export const EXPORT_FORMS = ['pod', 'deployment', 'static'] as const
export type ExportForm = (typeof EXPORT_FORMS)[number]

/** Labels a controller puts on the pods it makes: a Deployment's selector must not name them. */
const CONTROLLER_LABELS = new Set(['pod-template-hash', 'controller-revision-hash', 'statefulset.kubernetes.io/pod-name', 'pod-index'])

export interface ObjectReferences {
  configMaps: string[]
  /** Secret name → the keys read ('*' for all of them: envFrom, a volume without items, an image pull Secret). */
  secrets: Map<string, Set<string>>
}

/** The ConfigMaps and Secrets the pod names: env, envFrom, volumes (projected too) and imagePullSecrets. */
export function objectReferences(pod: PodModel): ObjectReferences {
  const configMaps = new Set<string>()
  const secrets = new Map<string, Set<string>>()
  const secret = (name: string, keys: readonly string[]) => {
    const known = secrets.get(name) ?? new Set<string>()
    for (const key of keys.length === 0 ? ['*'] : keys) known.add(key)
    secrets.set(name, known)
  }

  for (const container of [...pod.initContainers, ...pod.containers]) {
    for (const {valueFrom} of container.env) {
      if (valueFrom?.configMapKeyRef) configMaps.add(valueFrom.configMapKeyRef.name)
      if (valueFrom?.secretKeyRef) secret(valueFrom.secretKeyRef.name, [valueFrom.secretKeyRef.key])
    }

    for (const source of container.envFrom ?? []) {
      if (source.configMapRef) configMaps.add(source.configMapRef.name)
      if (source.secretRef) secret(source.secretRef.name, [])
    }
  }

  for (const volume of pod.volumes) volumeReferences(volume, configMaps, secret)
  for (const name of pod.imagePullSecrets ?? []) secret(name, [])
  return {configMaps: [...configMaps].sort(), secrets}
}

function volumeReferences(volume: VolumeModel, configMaps: Set<string>, secret: (name: string, keys: readonly string[]) => void): void {
  if (volume.configMap) configMaps.add(volume.configMap.name)
  if (volume.secret)
    secret(
      volume.secret.secretName,
      volume.secret.items.map((item) => item.key),
    )
  for (const source of volume.projected?.sources ?? []) {
    if (source.configMap) configMaps.add(source.configMap.name)
    if (source.secret)
      secret(
        source.secret.name,
        source.secret.items.map((item) => item.key),
      )
  }
}

/** "db-creds (keys password, user), registry (all keys)": the Secrets and keys a pod needs, for the note. */
export function describeSecrets(secrets: ReadonlyMap<string, ReadonlySet<string>>): string {
  return [...secrets.keys()]
    .sort()
    .map((name) => {
      const keys = secrets.get(name)!
      return keys.has('*') ? `${name} (all keys)` : `${name} (key${keys.size === 1 ? '' : 's'} ${[...keys].sort().join(', ')})`
    })
    .join(', ')
}

/** A v1 ConfigMap of the data `run` was given (ConfigMaps hold no credentials; Secrets are never printed). */
export function configMapManifest(configMap: ConfigMapObject): ManifestObject {
  const binary = Object.entries(configMap.binaryData)
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {name: configMap.name, namespace: configMap.namespace},
    ...(configMap.immutable ? {immutable: true} : {}),
    ...(Object.keys(configMap.data).length > 0 ? {data: {...configMap.data}} : {}),
    ...(binary.length > 0 ? {binaryData: Object.fromEntries(binary.map(([key, value]) => [key, value.toString('base64')]))} : {}),
  }
}

const objectOf = (value: unknown): ManifestObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as ManifestObject) : {}

/** The name a static pod's file gives it: the kubelet runs it as `<name>-<node>`, so that suffix comes off. */
export function staticPodName(name: string, nodeName: string): string {
  const suffix = `-${nodeName}`
  return nodeName !== '' && name.endsWith(suffix) && name.length > suffix.length ? name.slice(0, -suffix.length) : name
}

export interface FormOptions {
  /** The workload the pod came from, when the record knows (a Deployment keeps its name). */
  owner?: PodModel['owner']
  /** The pod's name is the kubelet's `<name>-<node>` of a static pod file. */
  staticName?: string
}

/**
 * The Pod in the form asked for. A Deployment has one replica, the pod's labels (less a controller's)
 * as its selector, or `app: NAME` when none are left; its pods always restart (restartPolicy Always).
 * A static pod is the Pod under the name of its file (the kubelet adds the node name itself).
 */
export function inForm(pod: ManifestObject, form: ExportForm, options: FormOptions = {}): {document: ManifestObject; notes: string[]} {
  const metadata = objectOf(pod.metadata)
  const named = options.staticName === undefined ? pod : {...pod, metadata: {...metadata, name: options.staticName}}
  if (form !== 'deployment') return {document: named, notes: []}
  const notes: string[] = []
  const spec = {...objectOf(pod.spec)}
  if (spec.restartPolicy !== undefined && spec.restartPolicy !== 'Always') {
    notes.push(`spec.restartPolicy ${String(spec.restartPolicy)} became Always: a Deployment only takes Always`)
    spec.restartPolicy = 'Always'
  }

  const podName = String(options.staticName ?? metadata.name ?? '')
  const name = options.owner?.kind === 'Deployment' ? options.owner.name : podName
  const labels = Object.fromEntries(Object.entries(objectOf(metadata.labels)).filter(([key]) => !CONTROLLER_LABELS.has(key)))
  const selector = Object.keys(labels).length > 0 ? labels : {app: name}
  const template = {
    metadata: {labels: {...labels, ...selector}, ...(metadata.annotations ? {annotations: metadata.annotations} : {})},
    spec,
  }
  const deploymentMetadata = {name, ...(metadata.namespace === undefined ? {} : {namespace: metadata.namespace}), labels: selector}
  const document = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: deploymentMetadata,
    spec: {replicas: 1, selector: {matchLabels: selector}, template},
  }
  return {document, notes}
}
