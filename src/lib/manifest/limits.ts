/**
 * Limits the API server enforces (or that the CRI's int64 fields impose), checked while a manifest
 * or a crictl config is read, so nothing beyond them reaches RunPodSandbox.
 */
import {FieldReader} from './fields.js'
import type {ContainerModel} from './model.js'
import {INT64_MAX} from './pod-fields.js'
import {parseQuantity, quantityMilliValue, quantityValue} from './quantity.js'

/** apimachinery's TotalAnnotationSizeLimitB: keys and values of all annotations together. */
export const MAX_ANNOTATIONS_BYTES = 256 * 1024

export function checkAnnotationSize(r: FieldReader, path: string, annotations: Record<string, string>): void {
  let size = 0
  for (const [key, value] of Object.entries(annotations)) size += Buffer.byteLength(key) + Buffer.byteLength(value)
  if (size > MAX_ANNOTATIONS_BYTES)
    r.fail(path, `are too long: ${size} bytes, must have at most ${MAX_ANNOTATIONS_BYTES} bytes (keys and values together)`)
}

/**
 * The pod's CPU and memory, added up over all its containers, must fit the CRI's int64 fields once
 * converted (memory in bytes; CPU as CFS quota over a 100 ms period and as shares, both about 1000x
 * the millicores); else RunPodSandbox fails with "invalid int64" after the pod was partly made.
 */
export function checkResourceTotals(r: FieldReader, containers: readonly ContainerModel[], path: string): void {
  const sum = (pick: (container: ContainerModel) => string | undefined, value: (text: string) => bigint) =>
    containers.reduce((total, container) => {
      const text = pick(container)
      return text === undefined ? total : total + value(text)
    }, 0n)
  const bytes = (text: string) => quantityValue(parseQuantity(text)!)
  const milli = (text: string) => quantityMilliValue(parseQuantity(text)!)
  const maxMilli = INT64_MAX / 1024n
  const checks: Array<[string, bigint, bigint, string]> = [
    ['memory', sum((c) => c.resources.limits.memory, bytes), INT64_MAX, `${INT64_MAX} bytes (8Ei)`],
    ['memory', sum((c) => c.resources.requests.memory, bytes), INT64_MAX, `${INT64_MAX} bytes (8Ei)`],
    ['cpu', sum((c) => c.resources.limits.cpu, milli), maxMilli, `${maxMilli}m`],
    ['cpu', sum((c) => c.resources.requests.cpu, milli), maxMilli, `${maxMilli}m`],
  ]
  for (const [resource, total, max, shown] of checks) {
    if (total > max) r.fail(path, `ask for more ${resource} than the runtime can set: at most ${shown} for the whole pod`)
  }
}
