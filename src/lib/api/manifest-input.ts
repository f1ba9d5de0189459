/**
 * The forms a manifest takes in the API: YAML or JSON text, a path, an object (or several: ConfigMaps
 * and Secrets beside the pod), or {file} for files and directories as `run -f` reads them. Text and
 * objects go through the same loader as a manifest on stdin, named `<manifest>` in messages.
 */
import {loadPodsToRun} from '../kubelet/volumes/pod-objects.js'
import type {PodModel} from '../manifest/model.js'
import {UsageError} from '../errors.js'

/**
 * A Kubernetes object (a Pod, Deployment, ConfigMap, Secret, List, ...): plain JSON, or the model class
 * of a typed client (@kubernetes/client-node's V1Pod, V1Deployment), which has no index signature.
 */
export type ManifestObject =
  | Readonly<Record<string, unknown>>
  | {readonly apiVersion?: unknown; readonly kind?: unknown; readonly metadata?: unknown; readonly spec?: unknown}

/**
 * A manifest: YAML or JSON text (several lines, or one starting with `{` or `[`), else a path to a file
 * or directory (a string of one line); one object or several; or `{file}` with one path or several.
 */
export type ManifestInput = string | ManifestObject | readonly ManifestObject[] | {readonly file: string | readonly string[]}

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
  const files = filesOf(input)
  if (files) {
    const {pods, warnings} = await loadPodsToRun({...flags, filename: files})
    return {pods, warnings}
  }

  const text = manifestText(input)
  const {pods, warnings} = await loadPodsToRun({...flags, filename: ['-']}, undefined, {stdin: async () => text, stdinSource: SOURCE})
  return {pods, warnings}
}

/** The paths the input names: `{file}`, or text of one line that is not a JSON or YAML flow object or list. */
function filesOf(input: ManifestInput): string[] | undefined {
  if (typeof input === 'string') return isPath(input) ? [input] : undefined
  if (Array.isArray(input) || !('file' in input) || Object.keys(input).length !== 1) return undefined
  const {file} = input as {file: string | readonly string[]}
  return typeof file === 'string' ? [file] : [...file]
}

function isPath(text: string): boolean {
  const trimmed = text.trim()
  return trimmed !== '' && !trimmed.includes('\n') && !/^[[{]/.test(trimmed)
}

/** JSON is YAML: objects become one document each. */
function manifestText(input: ManifestInput): string {
  if (typeof input === 'string') return input
  const objects: readonly unknown[] = Array.isArray(input) ? input : [input]
  if (objects.length === 0) throw new UsageError('manifest: no object given; pass a Pod (and its ConfigMaps and Secrets)')
  return objects.map((object) => JSON.stringify(object)).join('\n---\n')
}
