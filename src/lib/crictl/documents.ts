/**
 * The documents crictl v1.29 prints for -o json and -o yaml, built the way crictl builds them:
 * a list answer is one jsonpb message ({"items": …}, {"containers": …}, {"images": …},
 * {"stats": …}); a status (inspect, inspectp, inspecti, info, imagefsinfo) is
 * {"status": …, <info key>: …} with the runtime's verbose info keys sorted and inserted as parsed
 * JSON (as a string when a value is not JSON), laid out by json.Indent. Container and pod statuses
 * are first re-marshalled by Go's encoding/json (nested keys sorted) with their timestamps as
 * RFC 3339 in the local time zone.
 */
import type {ContainerStatus, Image, PodSandboxStatus} from '../../generated/runtime/v1/api.js'
import {compareGoStrings, goIndent, goJsonString, goMarshal, goRfc3339Nano, isJson} from './go-json.js'
import {jsonToYaml} from './go-yaml.js'
import {type JsonpbMessageName, toJsonpb} from './jsonpb.js'

export type CrictlFormat = 'json' | 'yaml'

/** A jsonpb message as crictl prints it with -o json (as is) or -o yaml (sigs.k8s.io/yaml of that JSON). */
export function crictlMessage(type: JsonpbMessageName, message: object, format: CrictlFormat): string {
  const json = toJsonpb(type, message)
  return format === 'yaml' ? jsonToYaml(json) : json
}

/**
 * crictl's outputStatusInfo: `status` (JSON text) and each info key, in sorted order, as one
 * document; json.Indent'ed for -o json, converted for -o yaml.
 */
export function crictlStatusInfo(status: string, info: Readonly<Record<string, string>> | undefined, format: CrictlFormat): string {
  const keys = Object.keys(info ?? {}).sort(compareGoStrings)
  // crictl inserts a value that is not JSON between quotes as it is, without escaping it.
  const members = keys.map((key) => `"${key}":${isJson(info![key]) ? info![key] : `"${info![key]}"`}`)
  const document = `{"status":${[status, ...members].join(',')}}`
  return format === 'yaml' ? jsonToYaml(document) : goIndent(document)
}

/**
 * crictl's marshalMapInOrder: the status's fields in declaration order, each value re-marshalled by
 * encoding/json from the jsonpb text, with the timestamps replaced by `times`.
 */
function marshalInOrder(type: JsonpbMessageName, status: object, times: Record<string, string>): string {
  const parsed = JSON.parse(toJsonpb(type, status)) as Record<string, unknown>
  Object.assign(parsed, times)
  const members = Object.keys(parsed).map((key) => `${goJsonString(key)}:${goMarshal(parsed[key])}`)
  return `{${members.join(',')}}`
}

/** inspect's status: createdAt always; startedAt unless created, finishedAt once exited (Go's zero time otherwise). */
export function containerStatusJson(status: ContainerStatus): string {
  const started = status.state !== 'CONTAINER_CREATED'
  const finished = status.state === 'CONTAINER_EXITED' || (status.state === 'CONTAINER_UNKNOWN' && BigInt(status.finishedAt) > 0n)
  return marshalInOrder('ContainerStatus', status, {
    createdAt: goRfc3339Nano(status.createdAt),
    startedAt: goRfc3339Nano(started ? status.startedAt : undefined),
    finishedAt: goRfc3339Nano(finished ? status.finishedAt : undefined),
  })
}

/** inspectp's status: createdAt as RFC 3339. */
export function podSandboxStatusJson(status: PodSandboxStatus): string {
  return marshalInOrder('PodSandboxStatus', status, {createdAt: goRfc3339Nano(status.createdAt)})
}

/** inspecti's status: the Image as jsonpb writes it. */
export function imageStatusJson(image: Image): string {
  return toJsonpb('Image', image)
}

/**
 * Go's sort.Sort as it orders short lists: insertion sort (pdqsort's for 12 items or fewer), which
 * decides the order even when `less` is not consistent (crictl's image order mixes tags, digests and
 * IDs). Longer lists are sorted stably, which agrees with Go whenever `less` is a true order.
 */
export function goSort<T>(items: readonly T[], less: (a: T, b: T) => boolean): T[] {
  const out = [...items]
  if (out.length > 12) return out.sort((a, b) => (less(a, b) ? -1 : less(b, a) ? 1 : 0))
  for (let i = 1; i < out.length; i++) {
    for (let j = i; j > 0 && less(out[j], out[j - 1]); j--) [out[j], out[j - 1]] = [out[j - 1], out[j]]
  }

  return out
}

/** crictl's list order for pods and containers: newest first by createdAt. */
export function newestFirst<T extends {createdAt: string}>(items: readonly T[]): T[] {
  return goSort(items, (a, b) => BigInt(a.createdAt) > BigInt(b.createdAt))
}

/** crictl's image order: by first tag when both have one, else by first digest, else by ID. */
export function byImageRef(images: readonly Image[]): Image[] {
  return goSort(images, (a, b) => {
    if (a.repoTags.length > 0 && b.repoTags.length > 0) return compareGoStrings(a.repoTags[0], b.repoTags[0]) < 0
    if (a.repoDigests.length > 0 && b.repoDigests.length > 0) return compareGoStrings(a.repoDigests[0], b.repoDigests[0]) < 0
    return compareGoStrings(a.id, b.id) < 0
  })
}

/** crictl's stats order: by the ID in the attributes. */
export function byAttributesId<T extends {attributes?: {id: string}}>(stats: readonly T[]): T[] {
  return goSort(stats, (a, b) => compareGoStrings(a.attributes?.id ?? '', b.attributes?.id ?? '') < 0)
}
