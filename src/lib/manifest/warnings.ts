/**
 * The summary lines `run` prints before it starts (one line per concern, whatever the number of
 * pods) and their --strict refusals: fields with no effect on a single node, and fields dropped
 * because podctl's Kubernetes version does not know them (newer, or behind an alpha feature gate).
 */
import {escapeControl, ManifestError} from './fields.js'
import type {PodModel} from './model.js'

/** "spec.nodeSelector, spec.tolerations (scheduling: …); status (read-back metadata …)": paths grouped by reason. */
function describeIgnored(pod: PodModel): string {
  const byReason = new Map<string, string[]>()
  for (const {path, reason} of pod.ignoredFields ?? []) byReason.set(reason, [...(byReason.get(reason) ?? []), path])
  return [...byReason].map(([reason, paths]) => `${paths.join(', ')}${reason ? ` (${reason})` : ''}`).join('; ')
}

/** The one warning line for every pod of the input: each field with no effect on a single node, by path; undefined when none. */
export function ignoredFieldsWarning(pods: readonly PodModel[]): string | undefined {
  // The replicas of a workload share their template's source: its fields are named once.
  const parts = unique(pods.filter((pod) => pod.ignoredFields?.length).map((pod) => `${pod.source}: ${describeIgnored(pod)}`))
  return parts.length > 0 ? `ignored on a single node: ${parts.join('; ')}; --strict refuses them` : undefined
}

const DROPPED = "dropped (not known to podctl's Kubernetes version, as an API server without the feature gate drops them)"

/** The one warning line naming every dropped field by path (prefixed by its pod's source when several pods drop some). */
export function droppedFieldsWarning(pods: readonly PodModel[]): string | undefined {
  const dropping = pods.filter((pod) => pod.droppedFields?.length)
  if (dropping.length === 0) return undefined
  const parts =
    dropping.length === 1 && pods.length === 1
      ? [dropping[0].droppedFields!.join(', ')]
      : unique(dropping.map((pod) => `${pod.source}: ${pod.droppedFields!.join(', ')}`))
  // The paths hold keys of the manifest: shown escaped, as in errors.
  return escapeControl(`${DROPPED}: ${parts.join('; ')}; --strict refuses them`)
}

/** --strict: a field with no effect here, or one dropped, is refused (exit 2), every one of them in one error. */
export function refuseIgnoredFields(pods: readonly PodModel[]): void {
  const lines = unique(
    pods.flatMap((pod) => [
      ...(pod.ignoredFields ?? []).map(({path, reason}) => `${pod.source}: ${path} has no effect on a single node (${reason})`),
      ...(pod.droppedFields ?? []).map(
        (path) => `${pod.source}: ${path} is not known to podctl's Kubernetes version (it would be dropped)`,
      ),
    ]),
  )
  if (lines.length === 1) throw new ManifestError(`${lines[0]}; --strict refuses it`)
  if (lines.length > 1) throw ManifestError.lines(`--strict refuses ${lines.length} fields with no effect on a single node:`, lines)
}

function unique(lines: readonly string[]): string[] {
  return [...new Set(lines)]
}
