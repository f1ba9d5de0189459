/**
 * `run -f` of a workload whose template changed since its pods were started: the new template names
 * new pods (manifest/workload-names.ts), and the pods of the old one still run. `run` refuses that up
 * front (exit 8, nothing created), naming them and how to apply the change (`sync -f` rolls it out);
 * with --replace they are terminated through their workers once the new pods run.
 */
import type {CriClient} from '../../cri/client.js'
import {AlreadyExistsError} from '../../errors.js'
import {type EventSink, normalEvent} from '../../kube/events.js'
import {podFullName} from '../../kube/helpers.js'
import type {PodModel} from '../../manifest/model.js'
import {rollouts} from '../config/superseded.js'
import {recordsOfRuntime} from '../records/gone-pods.js'
import {sandboxesByFullName} from '../kuberuntime/sandbox.js'
import {killPods} from '../workers/kill-pods.js'

/** The recorded pods of this runtime that the run's workloads no longer name (an older template, more replicas). */
export async function otherTemplatePods(pods: readonly PodModel[], podDirRoot: string, runtime: string | undefined): Promise<PodModel[]> {
  if (!pods.some((pod) => pod.owner)) return []
  const records = await recordsOfRuntime(podDirRoot, runtime)
  return rollouts(pods, records).flatMap((rollout) => [...rollout.steps.flatMap((step) => step.replaces ?? []), ...rollout.leftover])
}

export function refuseOtherTemplates(superseded: readonly PodModel[]): void {
  const workloads = [...new Set(superseded.map((pod) => `${pod.owner!.kind} ${pod.owner!.name}`))].join(', ')
  const names = superseded.map((pod) => podFullName(pod.name, pod.namespace)).join(', ')
  throw new AlreadyExistsError(
    `${workloads} already runs pods of another template (${names}); apply the change with: podctl sync -f FILE ` +
      '(it replaces them one by one), or pass --replace to start the new pods and then kill those',
  )
}

/** --replace: the old template's pods terminated through their workers, now that the new ones run. */
export async function retireOtherTemplates(
  client: CriClient,
  superseded: readonly PodModel[],
  settings: {podDirRoot: string; logsRoot: string; deadline?: number},
  deps: {events: EventSink; signal: AbortSignal; parallel: number},
): Promise<void> {
  const listed = await sandboxesByFullName(client, superseded)
  const pods = superseded.map((pod) => {
    const fullName = podFullName(pod.name, pod.namespace)
    deps.events(normalEvent('Replaced', `${pod.owner!.kind} ${pod.owner!.name} has a new template: killing its old pod`, fullName))
    return {fullName, sandboxes: (listed.get(fullName) ?? []).filter((sandbox) => sandbox.metadata?.uid === pod.uid)}
  })
  const outcome = await killPods(client, pods, {
    requestedBy: 'podctl run --replace (a new template)',
    forget: true,
    parallel: deps.parallel,
    events: deps.events,
    signal: deps.signal,
    podDirRoot: settings.podDirRoot,
    podLogsRoot: settings.logsRoot,
    retryUntil: settings.deadline,
  })
  if (outcome.failures[0]) throw outcome.failures[0].error
}
