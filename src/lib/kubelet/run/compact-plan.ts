/**
 * `run --dry-run`'s text for people: each pod's plan with its PodSandboxConfig shown once, as
 * `sandboxConfig`, and the calls that send it again (RunPodSandbox's config, PullImage's and every
 * CreateContainer's sandbox_config, the image specs' annotations) pointing at it. The CRI sends the
 * whole config with each of those calls, which made a 2-replica Deployment ~450 lines, the same 45
 * lines three times per pod. The requests' fields at their protobuf default (empty strings and
 * lists, false, empty maps) are left out too, as the wire leaves them out: what remains is what the
 * pod sets. `-o json|yaml` keep the requests whole, every field, for scripts.
 */
import type {PlannedCall, PodPlan} from './run-plan.js'

/** What a call shows instead of the pod's sandbox config, and instead of its annotations. */
export const SANDBOX_CONFIG_REF = "<the pod's sandboxConfig>"
export const SANDBOX_ANNOTATIONS_REF = "<the pod's sandboxConfig.annotations>"

export interface CompactPodPlan extends Omit<PodPlan, 'calls'> {
  sandboxConfig?: unknown
  calls: PlannedCall[]
}

/** Every plan with its sandbox config hoisted: plans without a RunPodSandbox call are left as they are. */
export function compactPlans(plans: readonly PodPlan[]): CompactPodPlan[] {
  return plans.map((plan) => compactPlan(plan))
}

function compactPlan(plan: PodPlan): CompactPodPlan {
  const config = sandboxConfigOf(plan.calls)
  if (config === undefined) return plan
  const same = sameAs(config)
  const annotations = (config as {annotations?: unknown}).annotations
  const sameAnnotations = annotations === undefined ? () => false : sameAs(annotations)
  // The config before the calls that refer to it; the plan's other keys as they were.
  const {calls, probes, ...described} = plan
  return {
    ...described,
    sandboxConfig: withoutDefaults(config),
    calls: calls.map((call) => ({...call, request: withoutDefaults(referTo(call.request, same, sameAnnotations))})),
    ...(probes ? {probes} : {}),
  }
}

function sandboxConfigOf(calls: readonly PlannedCall[]): unknown {
  const run = calls.find((call) => call.rpc === 'RuntimeService/RunPodSandbox')
  return (run?.request as {config?: unknown} | undefined)?.config
}

/** Equal by value (the plan builds one object, but a copy would be the same config all the same). */
function sameAs(value: unknown): (other: unknown) => boolean {
  const text = JSON.stringify(value)
  return (other) => other === value || (typeof other === 'object' && other !== null && JSON.stringify(other) === text)
}

/** The request with the sandbox config (RunPodSandbox's config, sandboxConfig) and the image specs' annotations as references. */
function referTo(request: unknown, same: (value: unknown) => boolean, sameAnnotations: (value: unknown) => boolean): unknown {
  if (typeof request !== 'object' || request === null) return request
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(request)) {
    if ((key === 'config' || key === 'sandboxConfig') && same(value)) out[key] = SANDBOX_CONFIG_REF
    else if (key === 'image' && typeof value === 'object' && value !== null) out[key] = imageSpec(value, sameAnnotations)
    else out[key] = value
  }

  return out
}

function imageSpec(spec: object, sameAnnotations: (value: unknown) => boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {...spec}
  if ('annotations' in out && sameAnnotations(out.annotations)) out.annotations = SANDBOX_ANNOTATIONS_REF
  return out
}

/**
 * The value without the fields protobuf would not send (empty string, false, empty list or map),
 * an object emptied so left out in turn. Numbers (0 included) and null stay: they are read as shown.
 */
export function withoutDefaults(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutDefaults(item))
  // Only plain objects: a value of another kind (bytes the serializer shows as text) is shown as it is.
  if (!isPlainObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) {
    const kept = withoutDefaults(field)
    if (!isDefault(kept)) out[key] = kept
  }

  return out
}

function isPlainObject(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

function isDefault(value: unknown): boolean {
  if (value === '' || value === false || value === undefined) return true
  if (Array.isArray(value)) return value.length === 0
  return isPlainObject(value) && Object.keys(value).length === 0
}
