/**
 * Whether a runtime gives each container event to every GetContainerEvents subscriber or to one of
 * them. Read from the runtimes' code:
 * - containerd 1.7 sends every event into one channel that all streams read: two listeners split the
 *   events between them. containerd 2.0 broadcasts (its eventq sends each event to every subscriber).
 * - CRI-O up to 1.27 does the same as containerd 1.7 (every stream ranges over ContainerEventsChan);
 *   1.28 broadcasts. CRI-O sends no event at all unless `enable_pod_events = true`: the stream then
 *   ends at once, without an error.
 * Where events are split, a listener starves the others (the kubelet's Evented PLEG, a supervisor,
 * `podctl events`): each sees only part of what happened.
 */
import type {VersionResponse} from '../../generated/runtime/v1/api.js'
import {majorMinor, olderThan, type Release, runtimeNamed} from './runtime-releases.js'

/** Which releases split the events, by runtime name (as Version's runtime_name says it). */
const SPLITTING: Record<string, {before: Release; since: Release; fixed: string}> = {
  containerd: {since: [1, 7], before: [2, 0], fixed: 'containerd 2.0'},
  'cri-o': {since: [0, 0], before: [1, 28], fixed: 'CRI-O 1.28'},
}

/**
 * Why this runtime splits its container events between subscribers ("cri-o 1.26.4 gives each container
 * event to one subscriber only; CRI-O 1.28 gives each to all"), or undefined when it gives each to all
 * (or is not known to split).
 */
export function splitEventsReason(version: Pick<VersionResponse, 'runtimeName' | 'runtimeVersion'> | undefined): string | undefined {
  const rule = version && SPLITTING[version.runtimeName]
  const release = version && majorMinor(version.runtimeVersion)
  if (!rule || !release || olderThan(release, rule.since) || !olderThan(release, rule.before)) return undefined
  return `${runtimeNamed(version)} gives each container event to one subscriber only (${rule.fixed} gives each to all)`
}

/** What a stream that the runtime ended at once, with no event and no error, most likely means. */
export const EVENTS_DISABLED_HINT = 'CRI-O sends container events only with enable_pod_events = true in its [crio.runtime] table'
