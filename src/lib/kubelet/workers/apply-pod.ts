/**
 * `sync -f FILE`: a changed manifest applied the kubelet's way. The container hash decides per
 * container (a changed one is killed and recreated with attempt + 1, an unchanged one keeps
 * running, a new one is started, a removed one killed); a change the sandbox cannot absorb
 * (network mode, hostname, DNS, ports, the pod's security context, runtime class) recreates the
 * pod with attempt + 1. diffPods says what changed; planApply shows what sync would do (--dry-run).
 */
import type {CriClient} from '../../cri/client.js'
import type {PodSandbox} from '../../../generated/runtime/v1/api.js'
import {normalEvent} from '../../kube/events.js'
import {newestFirst, podFullName} from '../../kube/helpers.js'
import {containerHash} from '../../kube/labels.js'
import type {ContainerModel, PodModel} from '../../manifest/model.js'
import {readDesiredPod, recordDesiredPod, recordOfAnotherRuntimeError} from '../config/desired-state.js'
import {computePodActions, type PodActions} from '../kuberuntime/pod-actions.js'
import {lockPods} from '../config/pod-lock.js'
import {observePod} from '../kuberuntime/pod-observe.js'
import type {PodSyncResult, SyncDeps, SyncSettings} from '../kuberuntime/sync-pod.js'
import {podWorkers} from './pod-workers.js'
import {generatePodSandboxConfig} from '../kuberuntime/sandbox.js'

export interface PodChanges {
  /** Sandbox fields that changed ("portMappings", "hostname", ...): the pod is recreated. */
  sandbox: string[]
  /** "container app: env changed", "container side: added", ... */
  containers: string[]
}

/** The parts of the sandbox config a running sandbox cannot take on (pkg/kubelet: they are fixed at RunPodSandbox). */
function sandboxShape(pod: PodModel, settings: Pick<SyncSettings, 'hostResolvConf' | 'runtimeHandler'>): Record<string, unknown> {
  const config = generatePodSandboxConfig(pod, {attempt: 0, logsRoot: '', hostResolvConf: settings.hostResolvConf, podDirRoot: ''})
  // Resources follow the containers' limits: a resource change recreates those containers, not the pod.
  const linux = {...config.linux, resources: undefined}
  return {
    hostname: config.hostname,
    dnsConfig: config.dnsConfig,
    portMappings: config.portMappings,
    linux,
    runtimeHandler: settings.runtimeHandler ?? pod.runtimeClassName ?? '',
    hostNetwork: pod.hostNetwork,
  }
}

function changedKeys(before: object, after: object): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)])
  const a = before as Record<string, unknown>
  const b = after as Record<string, unknown>
  return [...keys].filter((key) => JSON.stringify(a[key]) !== JSON.stringify(b[key])).sort()
}

function containerChanges(kind: string, before: readonly ContainerModel[], after: readonly ContainerModel[]): string[] {
  const lines: string[] = []
  const old = new Map(before.map((container) => [container.name, container]))
  for (const container of after) {
    const previous = old.get(container.name)
    if (!previous) lines.push(`${kind} ${container.name}: added`)
    else if (containerHash(previous) !== containerHash(container)) {
      lines.push(`${kind} ${container.name}: ${changedKeys(previous, container).join(', ')} changed`)
    }
  }

  const names = new Set(after.map((container) => container.name))
  for (const container of before) if (!names.has(container.name)) lines.push(`${kind} ${container.name}: removed`)
  return lines
}

/** What differs between the recorded pod and the new manifest. */
export function diffPods(
  recorded: PodModel,
  desired: PodModel,
  settings: Pick<SyncSettings, 'hostResolvConf' | 'runtimeHandler'>,
): PodChanges {
  return {
    sandbox: changedKeys(sandboxShape(recorded, settings), sandboxShape(desired, settings)),
    containers: [
      ...containerChanges('init container', recorded.initContainers, desired.initContainers),
      ...containerChanges('container', recorded.containers, desired.containers),
    ],
  }
}

export interface ApplyPlan {
  pod: string
  namespace: string
  uid: string
  exists: boolean
  changes: PodChanges
  /** The steps sync would take, one line each. */
  steps: string[]
}

/** The manifest's pod with the running pod's identity: a manifest without a uid means the pod that runs. */
function withIdentity(desired: PodModel, sandboxes: readonly PodSandbox[]): PodModel {
  const uid = [...sandboxes].sort(newestFirst)[0]?.metadata?.uid
  return desired.uidGenerated && uid ? {...desired, uid} : desired
}

/** The plan for one pod of the manifest against what runs (no change is made). */
export async function planApply(
  client: CriClient,
  desired: PodModel,
  sandboxes: readonly PodSandbox[],
  settings: SyncSettings,
): Promise<ApplyPlan> {
  const pod = withIdentity(desired, sandboxes)
  const base = {pod: pod.name, namespace: pod.namespace, uid: pod.uid}
  if (sandboxes.length === 0)
    return {...base, exists: false, changes: {sandbox: [], containers: []}, steps: ['run the pod (it does not exist)']}
  const recorded = await readDesiredPod(settings.podDirRoot, pod.uid, client.runtimeEndpoint)
  const changes = recorded ? diffPods(recorded, pod, settings) : {sandbox: [], containers: []}
  const newest = [...sandboxes].sort(newestFirst)[0]
  if (changes.sandbox.length > 0 || newest.metadata?.uid !== pod.uid) {
    const attempt = Math.max(...sandboxes.map((sandbox) => sandbox.metadata?.attempt ?? 0)) + 1
    return {...base, exists: true, changes, steps: [`kill the pod and create a new sandbox (attempt ${attempt}) with every container`]}
  }

  const observed = await observePod(client, sandboxes)
  return {...base, exists: true, changes, steps: describeActions(computePodActions(pod, observed, {now: Date.now()}))}
}

export function describeActions(actions: PodActions): string[] {
  if (actions.createSandbox) return [`kill the pod and create a new sandbox (attempt ${actions.attempt})`]
  if (actions.killPod) return [`stop the pod sandbox (${actions.killReason ?? 'done'})`]
  return [
    ...actions.containersToKill.map((kill) => `kill ${kill.name}: ${kill.message}`),
    ...actions.initContainersToStart.map((start) => `start init container ${start.name} (attempt ${start.restartCount})`),
    ...actions.containersToStart.map((start) => `start ${start.name} (attempt ${start.restartCount})`),
  ]
}

/**
 * Applies the manifest to one pod: records it, then recreates the pod or syncs it container by
 * container. `listed` is the pod's sandboxes, or how to list them once the pod's lock is held (the
 * pod then keeps the desired uid).
 */
export async function applyPod(
  desired: PodModel,
  listed: readonly PodSandbox[] | (() => Promise<PodSandbox[]>),
  settings: SyncSettings,
  deps: SyncDeps,
): Promise<PodSyncResult & {changes: PodChanges}> {
  const pod = typeof listed === 'function' ? desired : withIdentity(desired, listed)
  // The pod's pass lock, as `sync` takes it: a supervisor's turn (sync --watch) waits until the apply is done.
  const lock = await lockPods(settings.podDirRoot, [podFullName(pod.name, pod.namespace)], {
    deadline: settings.deadline,
    signal: deps.signal,
    onWait: (name, pid) => deps.events(normalEvent('Waiting', `Another podctl (pid ${pid}) is running pod ${name}; waiting for it`, name)),
  })
  try {
    // Listed under the lock when asked to: a supervisor's recreation that held it is seen.
    const sandboxes = typeof listed === 'function' ? await listed() : listed
    // The pod directory of this uid is another runtime's pod's: neither its record nor its pod is this apply's to change.
    const foreign = await recordOfAnotherRuntimeError(settings.podDirRoot, pod.uid, deps.client.runtimeEndpoint)
    if (foreign)
      return {pod: pod.name, namespace: pod.namespace, uid: pod.uid, did: [], failure: foreign, changes: {sandbox: [], containers: []}}
    const recorded = await readDesiredPod(settings.podDirRoot, pod.uid, deps.client.runtimeEndpoint)
    const changes = recorded ? diffPods(recorded, pod, settings) : {sandbox: [], containers: []}
    const newest = [...sandboxes].sort(newestFirst)[0]
    const recreate = sandboxes.length > 0 && (changes.sandbox.length > 0 || newest?.metadata?.uid !== pod.uid)
    if (sandboxes.length > 0 && newest?.metadata?.uid === pod.uid)
      await recordDesiredPod(settings.podDirRoot, pod, deps.client.runtimeEndpoint)
    const result = await podWorkers.sync(pod, sandboxes, settings, {...deps, recreate: recreate || sandboxes.length === 0})
    return {...result, changes}
  } finally {
    await lock.release()
  }
}
