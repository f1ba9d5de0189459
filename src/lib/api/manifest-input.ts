/**
 * The forms a manifest takes in the API: YAML or JSON text, an object (or several: ConfigMaps and
 * Secrets beside the pod), or {file} for files and directories as `run -f` reads them. Text and
 * objects go through the same loader as a manifest on stdin, named `<manifest>` in messages.
 */
import {loadPodsToRun} from '../kubelet/volumes/pod-objects.js'
import type {PodModel} from '../manifest/model.js'
import {UsageError} from '../errors.js'

/** A Kubernetes object as JSON (a Pod, Deployment, ConfigMap, Secret, List, ...). */
export type ManifestObject = Record<string, unknown>

export type ManifestInput = string | ManifestObject | readonly ManifestObject[] | {file: string | readonly string[]}

export interface LoadOptions {
  /** Namespace of pods whose manifest names none (a different one is refused), as run -n. */
  namespace?: string
  /** Refuse fields that have no effect on one node instead of warning about them, as run --strict. */
  strict?: boolean
  /** Replicas of every workload in the input, as run --replicas. */
  replicas?: number
  /** Host directories for volumes with no single-node plugin: {volumeName: dir}, as run --volume NAME=DIR. */
  volumes?: Readonly<Record<string, string>>
}

const SOURCE = '<manifest>'

export async function loadManifestInput(
  input: ManifestInput,
  options: LoadOptions & {claimsRoot: string},
): Promise<{pods: PodModel[]; warnings: string[]}> {
  const flags = {
    namespace: options.namespace,
    strict: options.strict,
    replicas: options.replicas,
    volume: Object.entries(options.volumes ?? {}).map(([name, dir]) => `${name}=${dir}`),
    'claims-root': options.claimsRoot,
  }
  if (isFileInput(input)) {
    const files = typeof input.file === 'string' ? [input.file] : [...input.file]
    const {pods, warnings} = await loadPodsToRun({...flags, filename: files})
    return {pods, warnings}
  }

  const text = manifestText(input)
  const {pods, warnings} = await loadPodsToRun({...flags, filename: ['-']}, undefined, {stdin: async () => text, stdinSource: SOURCE})
  return {pods, warnings}
}

function isFileInput(input: ManifestInput): input is {file: string | readonly string[]} {
  return typeof input === 'object' && !Array.isArray(input) && 'file' in input && Object.keys(input).length === 1
}

/** JSON is YAML: objects become one document each. */
function manifestText(input: Exclude<ManifestInput, {file: string | readonly string[]}>): string {
  if (typeof input === 'string') return input
  const objects = Array.isArray(input) ? input : [input]
  if (objects.length === 0) throw new UsageError('manifest: no object given; pass a Pod (and its ConfigMaps and Secrets)')
  return objects.map((object) => JSON.stringify(object)).join('\n---\n')
}
