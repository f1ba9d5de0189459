/**
 * `run --supervise`: the pods `run` just started are supervised (supervisor.ts) until Ctrl-C or
 * SIGTERM, then killed the kubelet's way, so nothing is left behind: a CI job or a terminal
 * session that owns its pods for as long as it runs.
 */
import {existsSync} from 'node:fs'

import type {CriClient} from '../../cri/client.js'
import {type EventSink, normalEvent} from '../../kube/events.js'
import {ImageManager} from '../../images/image-manager.js'
import {killPods} from '../workers/kill-pods.js'
import type {SyncSettings} from '../kuberuntime/sync-pod.js'
import {podSandboxes} from '../kuberuntime/sandbox.js'
import type {RuntimeOwnerCheck} from './runtime-owner-watch.js'
import {superviseSelection} from './supervisor.js'
import {SupervisorLocks} from '../config/supervisor-lock.js'
import {desiredPodPath, readDesiredPod} from '../config/desired-state.js'
import {removePodRecord} from '../records/gone-pods.js'
import type {SyncTarget} from '../workers/sync-pods.js'
import type {SupervisorMetrics} from '../workers/supervisor-metrics.js'

export interface SupervisedPod {
  pod: string
  namespace: string
  uid: string
}

export interface RunSuperviseDeps {
  events: EventSink
  /** Aborted by Ctrl-C/SIGTERM: supervision ends and the pods are killed. */
  signal: AbortSignal
  parallel: number
  /** Whether a kubelet owns the runtime now (supervisor.ts pauses while one does). */
  runtimeOwner?: RuntimeOwnerCheck
  /** --metrics-address: the supervisor reports here. */
  metrics?: SupervisorMetrics
}

export async function superviseRunPods(
  client: CriClient,
  pods: readonly SupervisedPod[],
  settings: Omit<SyncSettings, 'deadline'>,
  deps: RunSuperviseDeps,
): Promise<void> {
  // A pod the runtime lost comes back while it is still recorded (lost-pods.ts); a killed one is let go.
  const select = async (): Promise<SyncTarget[]> =>
    (
      await Promise.all(
        pods.map(async (pod) => {
          const sandboxes = await podSandboxes(client, {name: pod.pod, namespace: pod.namespace, uid: pod.uid})
          const recorded = sandboxes.length > 0 || existsSync(desiredPodPath(settings.podDirRoot, pod.uid))
          return recorded ? [{fullName: `${pod.pod}_${pod.namespace}`, sandboxes, ...(sandboxes.length > 0 ? {} : {lostUid: pod.uid})}] : []
        }),
      )
    ).flat()
  const images = new ImageManager(client, deps.events, {parallel: deps.parallel, recordPullsIn: settings.podDirRoot})
  // The pods' supervisor locks are held until they are killed: another supervisor waiting for them
  // must not take over a pod that is being killed (it would start it again).
  const locks = new SupervisorLocks(settings.podDirRoot, 'podctl run --supervise')
  try {
    await superviseSelection(select, settings, {
      client,
      images,
      events: deps.events,
      signal: deps.signal,
      locks,
      runtimeOwner: deps.runtimeOwner,
      metrics: deps.metrics,
    })
    deps.events(normalEvent('Stopping', 'Supervision ended: killing the supervised pods', 'supervisor'))
    const selected = await select()
    const targets = selected.filter((target) => target.sandboxes.length > 0).map(({fullName, sandboxes}) => ({fullName, sandboxes}))
    const outcome = await killPods(client, targets, {
      parallel: deps.parallel,
      events: deps.events,
      podDirRoot: settings.podDirRoot,
      // Nothing is left behind: the pods' log directories go with them, as kill's do.
      podLogsRoot: settings.logsRoot,
      cleanup: true,
      forget: true,
      requestedBy: 'podctl run --supervise (stopped)',
      // This supervisor held the pods; its workers have let go of their pass locks.
    })
    // A pod the runtime lost at the end has only its record left: that goes too.
    for (const {lostUid} of selected) {
      const record = lostUid ? await readDesiredPod(settings.podDirRoot, lostUid) : undefined
      if (record) await removePodRecord(record, settings)
    }

    if (outcome.failures.length > 0) throw outcome.failures[0].error
  } finally {
    await locks.release()
  }
}
