/** The library's defaults for test suites, where `podctl run` keeps the kubelet's. */
import type {PodModel} from '../manifest/model.js'

/**
 * Tests want seconds per pod: no settle after the last start (a crash is still seen by wait: 'ready'
 * or 'completed', and by the next call), and a short grace period for pods whose manifest sets none
 * (the kill's 2 s minimum, as the kubelet's minimumGracePeriodInSeconds).
 */
export const LIBRARY_SETTLE_MS = 0
export const LIBRARY_GRACE_PERIOD_SECONDS = 2

/** The pods, those whose manifest sets no terminationGracePeriodSeconds given `seconds`. */
export function withDefaultGrace(pods: readonly PodModel[], seconds: number): PodModel[] {
  return pods.map((pod) => (pod.terminationGracePeriodSeconds === undefined ? {...pod, terminationGracePeriodSeconds: seconds} : pod))
}
