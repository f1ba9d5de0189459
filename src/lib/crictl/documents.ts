/**
 * The documents crictl v1.37 prints for -o json|yaml|go-template, built the way crictl builds them:
 * a list answer is one protojson message ({"items": …}, {"containers": …}, {"images": …},
 * {"stats": …}); a status (inspect, inspectp, inspecti, info, imagefsinfo) goes through
 * outputStatusData: {"status": …, <info key>: …} per object (an object for one, an array for
 * several), decoded and re-encoded by Go's encoding/json (every key sorted, HTML characters
 * escaped), then json.Indent'ed, converted to YAML or run through the template.
 */
import type {ContainerStatus, Image, PodSandboxStatus, StatusResponse} from '../../generated/runtime/v1/api.js'
import {PROTOJSON_MESSAGES} from '../../generated/runtime/v1/protojson-schema.js'
import {compareGoStrings, goIndent, goMarshal, goRfc3339Nano} from './go-json.js'
import {jsonToYaml} from './go-yaml.js'
import {renderGoTemplate} from './go-template.js'
import {type ProtojsonMessageName, toProtojson} from './protojson.js'

export type CrictlFormat = 'json' | 'yaml'

/** A protojson message as crictl prints it with -o json (as is) or -o yaml (sigs.k8s.io/yaml of that JSON). */
export function crictlMessage(type: ProtojsonMessageName, message: object, format: CrictlFormat): string {
  const json = toProtojson(type, message)
  return format === 'yaml' ? jsonToYaml(json) : json
}

/** One object of outputStatusData: its status (decoded JSON), the runtime's verbose info, and info's handlers and features. */
export interface StatusData {
  status?: unknown
  info?: Readonly<Record<string, string>>
  runtimeHandlers?: unknown
  features?: unknown
}

/** A status failure in crictl's words (the caller prefixes what it was doing). */
export class StatusDataError extends Error {}

function statusMap(data: StatusData): Record<string, unknown> {
  const map: Record<string, unknown> = {}
  if (data.status !== undefined) map.status = data.status
  if (data.runtimeHandlers !== undefined && data.runtimeHandlers !== null) map.runtimeHandlers = data.runtimeHandlers
  if (data.features !== undefined && data.features !== null) map.features = data.features
  for (const key of Object.keys(data.info ?? {}).sort(compareGoStrings)) {
    const value = data.info![key]
    if (value.startsWith('{')) {
      try {
        map[key] = JSON.parse(value) as unknown
      } catch (error) {
        throw new StatusDataError(`unmarshal status info JSON: ${(error as Error).message}`)
      }
    } else {
      // crictl's strings.Trim(val, `"`): every quote at either end goes.
      map[key] = value.replace(/^"+/, '').replace(/"+$/, '')
    }
  }

  return map
}

/** crictl's outputStatusData for json, yaml or go-template (with `template`); nothing for no objects. */
export function outputStatusData(statuses: readonly StatusData[], format: string, template = ''): string | undefined {
  if (statuses.length === 0) return undefined
  const maps = statuses.map((data) => statusMap(data))
  const json = goMarshal(maps.length === 1 ? maps[0] : maps)
  switch (format) {
    case 'yaml':
      return jsonToYaml(json)
    case 'json':
      return goIndent(json)
    case 'go-template':
      return renderGoTemplate(template, json)
    default:
      throw new StatusDataError(`unsupported format: ${JSON.stringify(format)}`)
  }
}

/** crictl's marshalMapInOrder over a status: every field of the message (absent ones null), times replaced. */
function statusInOrder(type: ProtojsonMessageName, status: object, times: Record<string, string>): Record<string, unknown> {
  const parsed = JSON.parse(toProtojson(type, status)) as Record<string, unknown>
  const map: Record<string, unknown> = {}
  for (const [name] of PROTOJSON_MESSAGES[type]) map[name] = parsed[name] ?? null
  return Object.assign(map, times)
}

/** inspect's status: createdAt always; startedAt unless created, finishedAt once exited (Go's zero time otherwise). */
export function containerStatusValue(status: ContainerStatus): Record<string, unknown> {
  const started = status.state !== 'CONTAINER_CREATED'
  const finished = status.state === 'CONTAINER_EXITED' || (status.state === 'CONTAINER_UNKNOWN' && BigInt(status.finishedAt) > 0n)
  return statusInOrder('ContainerStatus', status, {
    createdAt: goRfc3339Nano(status.createdAt),
    startedAt: goRfc3339Nano(started ? status.startedAt : undefined),
    finishedAt: goRfc3339Nano(finished ? status.finishedAt : undefined),
  })
}

/** inspectp's status: createdAt as RFC 3339. */
export function podSandboxStatusValue(status: PodSandboxStatus): Record<string, unknown> {
  return statusInOrder('PodSandboxStatus', status, {createdAt: goRfc3339Nano(status.createdAt)})
}

/** inspecti's status: the Image as protojson writes it. */
export function imageStatusValue(image: Image): unknown {
  return JSON.parse(toProtojson('Image', image))
}

/** A CRI message as Go's encoding/json writes the generated struct: snake_case names, zero values left out (omitempty). */
function goStructValue(type: string, value: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined
  const out: Record<string, unknown> = {}
  for (const [name, fieldType, shape] of PROTOJSON_MESSAGES[type] ?? []) {
    const field = value[name]
    const snake = name.replaceAll(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)
    if (shape === 'one' && fieldType in PROTOJSON_MESSAGES) {
      const nested = goStructValue(fieldType, field as Record<string, unknown> | undefined)
      if (nested !== undefined) out[snake] = nested
    } else if (field !== undefined && field !== '' && field !== false && field !== 0 && !(Array.isArray(field) && field.length === 0)) {
      out[snake] = field
    }
  }

  return out
}

/** crictl info's objects: the status, runtimeHandlers and features through encoding/json, and the info keys. */
export function runtimeStatusData(response: StatusResponse): StatusData {
  const handlers = response.runtimeHandlers.map((handler) => goStructValue('RuntimeHandler', handler as unknown as Record<string, unknown>))
  return {
    status: JSON.parse(toProtojson('RuntimeStatus', response.status ?? {conditions: []})),
    // json.Marshal of a nil slice is null, which crictl leaves out.
    runtimeHandlers: handlers.length === 0 ? undefined : handlers,
    features: goStructValue('RuntimeFeatures', response.features as unknown as Record<string, unknown> | undefined),
    info: response.info,
  }
}
