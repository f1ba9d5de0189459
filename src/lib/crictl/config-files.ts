/**
 * crictl's pod and container config files (util.go loadPodSandboxConfig, loadContainerConfig): YAML
 * or JSON read by sigs.k8s.io/yaml into the CRI's Go structs, so keys are the proto field names
 * (snake_case, matched without regard to case as encoding/json matches them; a camelCase key is
 * ignored), int64s are numbers, enums their numbers, KeyValue values plain strings; then crictl's
 * checks and its UID for a pod without one.
 */
import {randomUUID} from 'node:crypto'
import {readFile} from 'node:fs/promises'

import type {ContainerConfig, PodSandboxConfig} from '../../generated/runtime/v1/api.js'
import {PROTOJSON_ENUMS, PROTOJSON_MESSAGES} from '../../generated/runtime/v1/protojson-schema.js'
import {warning} from './log.js'
import {CrictlError} from './session.js'

const snake = (name: string) => name.replaceAll(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

function typeError(value: unknown, path: string, goType: string): CrictlError {
  const kind = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value === 'object' ? 'object' : typeof value
  return new CrictlError(
    `error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${kind} into Go struct field ${path} of type ${goType}`,
  )
}

/**
 * A value where text is wanted: sigs.k8s.io/yaml writes a YAML bool or number into a string field as its
 * text (`namespace: n` is YAML 1.1's false, and crictl sends "false"; `count: 12` sends "12").
 */
function textOf(value: unknown, path: string): string {
  if (typeof value === 'string') return value
  if (typeof value === 'boolean' || typeof value === 'number') return String(value)
  throw typeError(value, path, 'string')
}

/** One value of a field, as the ts-proto request object wants it. */
function convert(type: string, value: unknown, path: string): unknown {
  switch (type) {
    case 'string':
      return textOf(value, path)
    case 'bool':
      if (typeof value !== 'boolean') throw typeError(value, path, 'bool')
      return value
    case 'int64':
    case 'uint64':
    case 'int32':
    case 'uint32':
      if (typeof value !== 'number' || !Number.isInteger(value)) throw typeError(value, path, type)
      return type.endsWith('64') ? String(value) : value
    case 'double':
    case 'float':
      if (typeof value !== 'number') throw typeError(value, path, `${type}64`)
      return value
    case 'bytes':
      // cri-api's KeyValue takes its value as a plain string (api_json.go).
      return Buffer.from(textOf(value, path))
    default:
      if (type in PROTOJSON_ENUMS) {
        const names = PROTOJSON_ENUMS[type]
        if (typeof value === 'number' && names[value] !== undefined) return names[value]
        if (typeof value === 'string' && names.includes(value)) return value
        throw typeError(value, path, `v1.${type}`)
      }

      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw typeError(value, path, `v1.${type}`)
      return message(type, value as Record<string, unknown>, path)
  }
}

function message(type: string, document: Record<string, unknown>, path: string): Record<string, unknown> {
  const fields = PROTOJSON_MESSAGES[type] ?? []
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(document)) {
    // The key is matched with the field's json tag, its .proto name (`CDI_devices`, which snake_case
    // of the JSON name `CDIDevices` would miss), and named so in errors, as encoding/json does.
    const field = fields.find((candidate) => candidate[3].toLowerCase() === key.toLowerCase())
    if (!field || value === null) continue
    const [name, fieldType, shape, protoName] = field
    const at = `${path}.${protoName}`
    if (shape === 'list') {
      if (!Array.isArray(value)) throw typeError(value, at, `[]*v1.${fieldType}`)
      out[name] = value.map((item) => convert(fieldType, item, at))
    } else if (shape === 'map') {
      if (typeof value !== 'object' || Array.isArray(value)) throw typeError(value, at, 'map[string]string')
      out[name] = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, convert(fieldType, v, at)]))
    } else {
      out[name] = convert(fieldType, value, at)
    }
  }

  return out
}

async function readDocument(path: string): Promise<Record<string, unknown>> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new CrictlError(`config at ${path} not found`)
    throw new CrictlError(`read ${path}: ${(error as Error).message}`)
  }

  const {parse} = await import('yaml')
  let document: unknown
  try {
    document = parse(text, {version: '1.1'})
  } catch (error) {
    throw new CrictlError(`error converting YAML to JSON: ${(error as Error).message.split('\n')[0]}`)
  }

  if (document === null || document === undefined) return {}
  if (typeof document !== 'object' || Array.isArray(document))
    throw new CrictlError('error unmarshaling JSON: while decoding JSON: json: cannot unmarshal into Go value')
  return document as Record<string, unknown>
}

/** fmt's %q of a metadata message (prototext, as crictl quotes it in its error). */
function metadataText(metadata: Record<string, unknown> | undefined): string {
  const parts = Object.entries(metadata ?? {})
    .filter(([, value]) => value !== '' && value !== 0)
    .map(([key, value]) => `${snake(key)}:${typeof value === 'string' ? JSON.stringify(value) : String(value)}`)
  return JSON.stringify(parts.join(' '))
}

/** loadPodSandboxConfig. */
export async function loadPodSandboxConfig(path: string): Promise<PodSandboxConfig> {
  const config = message('PodSandboxConfig', await readDocument(path), 'PodSandboxConfig') as Record<
    string,
    Record<string, unknown> | undefined
  >
  if (!config.metadata) throw new CrictlError('metadata is not set')
  if (!config.metadata.uid) config.metadata.uid = randomUUID()
  if (!config.metadata.name || !config.metadata.namespace) {
    throw new CrictlError(`name or namespace is not in metadata ${metadataText(config.metadata)}`)
  }

  if (config.linux && !config.linux.cgroupParent) warning('cgroup_parent is not set. Use `runtime-config` to get the runtime cgroup driver')
  return config as unknown as PodSandboxConfig
}

/** loadContainerConfig. */
export async function loadContainerConfig(path: string): Promise<ContainerConfig> {
  const config = message('ContainerConfig', await readDocument(path), 'ContainerConfig') as Record<
    string,
    Record<string, unknown> | undefined
  >
  if (!config.metadata) throw new CrictlError('metadata is not set')
  if (!config.metadata.name) throw new CrictlError(`name is not in metadata ${metadataText(config.metadata)}`)
  if (!config.image) throw new CrictlError('image is not set')
  if (!config.image.image) throw new CrictlError(`image field is not set in image ${metadataText(config.image)}`)
  return config as unknown as ContainerConfig
}
