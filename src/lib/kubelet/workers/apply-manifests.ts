/**
 * `sync -f FILE…`: each pod of the manifests applied to the pod of that name (apply-pod.ts), or its
 * plan shown with --dry-run. A pod the runtime lost keeps its recorded uid — its pod directory, its
 * volumes' data — when the manifest names none, as the pod it replaces would. A workload whose
 * template changed names new pods (manifest/workload-names.ts): each new replica is applied, then
 * the pod it supersedes is terminated through its worker, one replica after another
 * (config/superseded.ts); replicas the workload no longer has go last.
 */
import {asPodctlError} from '../../errors.js'
import {podFullName} from '../../kube/helpers.js'
import type {PodModel} from '../../manifest/model.js'
import {loadPodManifest} from '../../manifest/load.js'
import {rollouts} from '../config/superseded.js'
import {recordsOfRuntime} from '../records/gone-pods.js'
import {sandboxesByFullName} from '../kuberuntime/sandbox.js'
import type {PodSyncResult, SyncDeps, SyncSettings} from '../kuberuntime/sync-pod.js'
import {type ApplyPlan, applyPod, planApply} from './apply-pod.js'
import {podWorkers} from './pod-workers.js'

export async function applyManifests(
  files: readonly string[],
  settings: SyncSettings,
  deps: SyncDeps,
  {dryRun}: {dryRun: boolean},
): Promise<Array<PodSyncResult | ApplyPlan>> {
  const pods = await loadPodManifest(files)
  const existing = await sandboxesByFullName(deps.client, pods)
  const records = await recordsOfRuntime(settings.podDirRoot, deps.client.runtimeEndpoint)
  const replaced = supersededBy(pods, records)
  const results: Array<PodSyncResult | ApplyPlan> = []
  for (const manifestPod of pods) {
    const sandboxes = existing.get(`${manifestPod.name}_${manifestPod.namespace}`) ?? []
    const pod = sandboxes.length === 0 ? withRecordedUid(manifestPod, records) : manifestPod
    const applied = dryRun ? await planApply(deps.client, pod, sandboxes, settings) : await applyPod(pod, sandboxes, settings, deps)
    results.push(applied)
    const old = replaced.get(podFullName(pod.name, pod.namespace)) ?? []
    if (!('failure' in applied && applied.failure))
      results.push(...(await retire(old, `replaced by ${pod.name}`, {settings, deps, dryRun})))
  }

  const leftover = replaced.get('') ?? []
  results.push(...(await retire(leftover, 'the workload has fewer replicas now', {settings, deps, dryRun})))
  return results
}

/** Each new pod's name → the recorded pods it supersedes; '' → those no new pod replaces. */
function supersededBy(pods: readonly PodModel[], records: readonly PodModel[]): Map<string, PodModel[]> {
  const out = new Map<string, PodModel[]>()
  for (const rollout of rollouts(pods, records)) {
    for (const {pod, replaces} of rollout.steps) if (replaces) out.set(podFullName(pod.name, pod.namespace), [replaces])
    if (rollout.leftover.length > 0) out.set('', [...(out.get('') ?? []), ...rollout.leftover])
  }

  return out
}

/** The superseded pods terminated through their workers (or, with --dry-run, the plan to). */
async function retire(
  pods: readonly PodModel[],
  why: string,
  {settings, deps, dryRun}: {settings: SyncSettings; deps: SyncDeps; dryRun: boolean},
): Promise<Array<PodSyncResult | ApplyPlan>> {
  const results: Array<PodSyncResult | ApplyPlan> = []
  for (const pod of pods) {
    const base = {pod: pod.name, namespace: pod.namespace, uid: pod.uid}
    const step = `kill the pod: its ${pod.owner?.kind ?? 'workload'} ${pod.owner?.name ?? ''} has a new template (${why})`
    if (dryRun) {
      results.push({...base, exists: true, changes: {sandbox: [], containers: []}, steps: [step]})
      continue
    }

    const fullName = podFullName(pod.name, pod.namespace)
    const listed = async () =>
      ((await sandboxesByFullName(deps.client, [pod])).get(fullName) ?? []).filter((s) => s.metadata?.uid === pod.uid)
    const result: PodSyncResult = {...base, did: [], terminated: true}
    try {
      await podWorkers.terminate(deps.client, fullName, listed, {
        requestedBy: `podctl sync -f (${why})`,
        forget: true,
        record: pod,
        events: deps.events,
        signal: deps.signal,
        podDirRoot: settings.podDirRoot,
        podLogsRoot: settings.logsRoot,
        retryUntil: settings.deadline,
        lock: {deadline: settings.deadline},
      })
      result.did.push(`terminated: ${step.slice('kill the pod: '.length)}`)
    } catch (error) {
      result.failure = asPodctlError(error)
    }

    results.push(result)
  }

  return results
}

/** The uid of the pod of that name recorded for this runtime, for a manifest that names none. */
function withRecordedUid(pod: PodModel, records: readonly PodModel[]): PodModel {
  const record = records.find((candidate) => candidate.name === pod.name && candidate.namespace === pod.namespace)
  return record && pod.uidGenerated ? {...pod, uid: record.uid} : pod
}
