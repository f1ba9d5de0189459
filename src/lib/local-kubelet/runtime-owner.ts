/**
 * The check every command that creates or restarts pods makes first: a kubelet that uses this runtime
 * means refusing (KubeletOwnsRuntime, nothing created), or with --force going on with a warning.
 */
import {KubeletOwnsRuntimeError} from '../errors.js'
import {type DetectOptions, kubeletOfRuntime, type KubeletSighting} from './detect.js'

/** The way out besides --force for commands other than run (whose own is --static). */
export const KUBELET_WAY = 'let the kubelet run the pod (podctl run --static)'

export interface OwnerCheck {
  /** --force: go on beside the kubelet (one about to be stopped). */
  force: boolean
  /** The ways out this command offers besides --force; default run's --static. */
  instead?: string
}

/** Who else owns the runtime now, as one line ("kubelet pid 42 uses the runtime at … (…)"), or undefined. */
export type RuntimeOwner = () => Promise<string | undefined>

/**
 * Throws KubeletOwnsRuntime when a kubelet uses `endpoint`; with force, warns instead. Returns the check
 * a supervisor repeats while it runs (runtimeOwnerCheck, past the kubelet --force went past).
 */
export async function refuseBesideKubelet(
  {runtimeEndpoint: endpoint}: {runtimeEndpoint: string},
  check: OwnerCheck & {warn: (line: string) => void},
  options?: DetectOptions,
): Promise<RuntimeOwner> {
  const kubelet = await kubeletOfRuntime(endpoint, options)
  if (!kubelet) return runtimeOwnerCheck(endpoint, undefined, options)
  if (check.force) {
    check.warn(
      `--force: ${nameOf(kubelet)} uses this runtime and will kill the pods podctl starts within about 2 s unless it is stopped first`,
    )
    return runtimeOwnerCheck(endpoint, kubelet, options)
  }

  const instead = check.instead ?? 'hand the pod to the kubelet with --static'
  throw new KubeletOwnsRuntimeError(
    `${describeKubelet(kubelet, endpoint)}: it kills every pod it did not start within about 2 s, so nothing was created; ` +
      `${instead}, or run anyway with --force`,
  )
}

/**
 * For a supervisor (sync --watch, run --supervise): who owns the runtime now. The kubelet the user
 * went past with --force does not count (they said it is about to stop); another one does.
 */
export function runtimeOwnerCheck(endpoint: string, forcedPast?: KubeletSighting, options?: DetectOptions): RuntimeOwner {
  return async () => {
    const kubelet = await kubeletOfRuntime(endpoint, options)
    if (!kubelet || (forcedPast && (kubelet.pid ?? kubelet.evidence) === (forcedPast.pid ?? forcedPast.evidence))) return
    return describeKubelet(kubelet, endpoint)
  }
}

/** "kubelet pid 4242 uses the runtime at ENDPOINT (EVIDENCE)". */
export function describeKubelet(kubelet: KubeletSighting, endpoint: string): string {
  return `${nameOf(kubelet)} uses the runtime at ${endpoint} (${kubelet.evidence})`
}

export function nameOf(kubelet: KubeletSighting): string {
  return kubelet.pid === undefined ? 'a kubelet' : `kubelet pid ${kubelet.pid}`
}
