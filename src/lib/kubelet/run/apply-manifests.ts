/**
 * `sync -f FILE…`: each pod of the manifests applied to the pod of that name (workers/apply-pod.ts), or
 * its plan shown with --dry-run. A pod the runtime lost keeps its recorded uid — its pod directory,
 * its volumes' data — when the manifest names none, as the pod it replaces would.
 */
import type {PodModel} from '../../manifest/model.js'
import {loadPodManifest} from '../../manifest/load.js'
import {recordsOfRuntime} from '../kuberuntime/gone-pods.js'
import type {PodSyncResult, SyncDeps, SyncSettings} from '../kuberuntime/sync-pod.js'
import {type ApplyPlan, applyPod, planApply} from '../workers/apply-pod.js'
import {sandboxesByFullName} from './run-pods.js'

export async function applyManifests(
  files: readonly string[],
  settings: SyncSettings,
  deps: SyncDeps,
  {dryRun}: {dryRun: boolean},
): Promise<Array<PodSyncResult | ApplyPlan>> {
  const pods = await loadPodManifest(files)
  const existing = await sandboxesByFullName(deps.client, pods)
  const records = await recordsOfRuntime(settings.podDirRoot, deps.client.runtimeEndpoint)
  const results: Array<PodSyncResult | ApplyPlan> = []
  for (const manifestPod of pods) {
    const sandboxes = existing.get(`${manifestPod.name}_${manifestPod.namespace}`) ?? []
    const pod = sandboxes.length === 0 ? withRecordedUid(manifestPod, records) : manifestPod
    results.push(dryRun ? await planApply(deps.client, pod, sandboxes, settings) : await applyPod(pod, sandboxes, settings, deps))
  }

  return results
}

/** The uid of the pod of that name recorded for this runtime, for a manifest that names none. */
function withRecordedUid(pod: PodModel, records: readonly PodModel[]): PodModel {
  const record = records.find((candidate) => candidate.name === pod.name && candidate.namespace === pod.namespace)
  return record && pod.uidGenerated ? {...pod, uid: record.uid} : pod
}
