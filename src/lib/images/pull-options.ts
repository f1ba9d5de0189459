/**
 * `pull --pod-config FILE` and `--annotation KEY=VALUE`, as crictl pull takes them: the sandbox the
 * image is for (its metadata, labels and annotations, sent as PullImage's sandbox_config) and
 * annotations on the ImageSpec.
 */
import {readFile} from 'node:fs/promises'

import {UsageError} from '../errors.js'
import type {DeepPartial, PodSandboxConfig} from '../../generated/runtime/v1/api.js'

const stringMap = (value: unknown, where: string): Record<string, string> => {
  if (value === undefined || value === null) return {}
  if (typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`${where} must be a mapping of strings`)
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, String(item)]))
}

/** The parts of a crictl pod config (JSON or YAML, snake_case as crictl reads it) that PullImage uses. */
export async function readPullSandboxConfig(path: string): Promise<DeepPartial<PodSandboxConfig>> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new UsageError(`--pod-config ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String(error)}`)
  }

  const {parse} = await import('yaml')
  let document: unknown
  try {
    document = parse(text)
  } catch (error) {
    throw new UsageError(`--pod-config ${path} is not valid JSON or YAML: ${String((error as Error).message).split('\n')[0]}`)
  }

  if (!document || typeof document !== 'object' || Array.isArray(document)) {
    throw new UsageError(`--pod-config ${path} must be a crictl pod config (a mapping with metadata, labels, annotations, ...)`)
  }

  const config = document as Record<string, unknown>
  const metadata = (config.metadata ?? {}) as Record<string, unknown>
  return {
    metadata: {
      name: String(metadata.name ?? ''),
      uid: String(metadata.uid ?? ''),
      namespace: String(metadata.namespace ?? ''),
      attempt: Number(metadata.attempt ?? 0),
    },
    labels: stringMap(config.labels, `--pod-config ${path}: labels`),
    annotations: stringMap(config.annotations, `--pod-config ${path}: annotations`),
  } as DeepPartial<PodSandboxConfig>
}

/** `--annotation KEY=VALUE` (repeatable) → a map; a value may contain "=". */
export function parseAnnotations(values: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const value of values ?? []) {
    const eq = value.indexOf('=')
    if (eq <= 0) throw new UsageError(`--annotation "${value}" is not KEY=VALUE`)
    out[value.slice(0, eq)] = value.slice(eq + 1)
  }

  return out
}

/** The sandbox config PullImage gets: --pod-config's, with --annotation added to its annotations. */
export async function pullSandboxConfig(
  podConfig: string | undefined,
  annotations: readonly string[] | undefined,
): Promise<DeepPartial<PodSandboxConfig> | undefined> {
  const extra = parseAnnotations(annotations)
  if (podConfig === undefined && Object.keys(extra).length === 0) return undefined
  const base = podConfig === undefined ? {} : await readPullSandboxConfig(podConfig)
  return {...base, annotations: {...base.annotations, ...extra} as Record<string, string>}
}
