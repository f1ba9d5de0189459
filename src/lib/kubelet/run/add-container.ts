/**
 * `podctl create`: one container added to a pod that already runs (a debug container beside the
 * app), the kubelet's startContainer for it: the pod's identity (name, namespace, uid, namespaces,
 * grace period) is read back from the sandbox and its containers, not from the input, so the new
 * container carries the same io.kubernetes.* labels and annotations as its neighbours. Ensure the
 * image (pull policy), CreateContainer, and with `start` StartContainer and the postStart hook.
 * Nothing is left when a step fails: a container that was created and then failed is removed.
 */
import {existsSync} from 'node:fs'
import {dirname} from 'node:path'

import type {CriClient} from '../../cri/client.js'
import {AlreadyExistsError, asPodctlError, RuntimeError} from '../../errors.js'
import type {ContainerInput} from '../../manifest/granular.js'
import type {ContainerModel, PodModel, PullPolicy} from '../../manifest/model.js'
import type {Container, PodSandbox, PodSandboxStatus} from '../../../generated/runtime/v1/api.js'
import {discardEvents, type EventSink} from '../../kube/events.js'
import {buildPodLogsDirectory, podFullName, shortId, toKubeContainerState} from '../../kube/helpers.js'
import {ContainerAnnotation, containerName, podDirectoryOf, restartPolicyOf} from '../../kube/labels.js'
import {ensureImageOptions, type ImageEnsurer, restartCountFromLogs, startContainer} from '../kuberuntime/container.js'
import {killContainer} from '../kuberuntime/kill.js'
import {createTerminationMessageFile, etcHostsPath, setUpVolumes, volumeHostPaths} from '../volumes/pod-dirs.js'
import {withMessage} from '../core/reasons.js'
import type {SandboxConfig, SandboxContext} from '../kuberuntime/sandbox.js'

export interface AddContainerSettings {
  logsRoot: string
  podDirRoot: string
  nodeMemoryBytes: number
  images: ImageEnsurer
  /** --with-pull (Always) or --no-pull (Never); default the container's own imagePullPolicy, else the kubelet's default. */
  pullPolicy?: PullPolicy
  auth?: Parameters<ImageEnsurer['ensureImage']>[0]['auth']
  authSource?: string
  /** Also StartContainer and the postStart hook. */
  start: boolean
  /** Another name for the container than the input's (--name). */
  name?: string
  events?: EventSink
  deadline?: number
  signal?: AbortSignal
}

export interface AddedContainer {
  containerId: string
  name: string
  /** name_namespace */
  pod: string
  sandboxId: string
  attempt: number
  image: string
  imageRef: string
  started: boolean
}

export async function addContainer(
  client: CriClient,
  sandbox: PodSandbox,
  input: ContainerInput,
  settings: AddContainerSettings,
): Promise<AddedContainer> {
  const fullName = podFullName(sandbox.metadata?.name ?? '', sandbox.metadata?.namespace ?? '')
  if (sandbox.state !== 'SANDBOX_READY') {
    throw new RuntimeError(
      `pod ${fullName} (sandbox ${shortId(sandbox.id)}) is not ready; ` +
        'containers can be added only to a running pod (make one with podctl runp)',
    )
  }

  const container = containerToAdd(input, settings)
  const [{status, info}, {containers}] = await Promise.all([
    client.runtime('podSandboxStatus', {podSandboxId: sandbox.id, verbose: true}),
    client.runtime('listContainers', {filter: {podSandboxId: sandbox.id}}),
  ])
  const same = containers.filter((existing) => existing.podSandboxId === sandbox.id && containerName(existing) === container.name)
  const live = same.find((existing) => existing.state !== 'CONTAINER_EXITED')
  if (live) {
    throw new AlreadyExistsError(
      `pod ${fullName} already has a container "${container.name}" ` +
        `(${shortId(live.id)}, ${toKubeContainerState(live.state).toLowerCase()}); ` +
        `pick another name with --name, or remove it with: podctl rm -f ${shortId(live.id)}`,
    )
  }

  // The pod's own directory when podctl made it (runp/run recorded it), else --pod-dir-root.
  const recorded = podDirectoryOf(sandbox.annotations)
  const root = recorded ? dirname(recorded) : settings.podDirRoot
  const pod = podFromSandbox(sandbox, status, {...input, container}, containers)
  const config = sandboxConfigOf(sandbox, status, info, settings.logsRoot)
  const fromLogs = container.logPath === undefined ? await restartCountFromLogs(`${config.logDirectory}/${container.name}`) : 0
  const attempt = Math.max(fromLogs, container.attempt ?? 0, ...same.map((existing) => (existing.metadata?.attempt ?? 0) + 1))
  await setUpVolumes(pod, root)
  const hosts = etcHostsPath(root, pod.uid)
  const context: SandboxContext = {
    id: sandbox.id,
    config,
    runtimeHandler: sandbox.runtimeHandler,
    etcHostsPath: existsSync(hosts) ? hosts : undefined,
    volumePaths: volumeHostPaths(pod, root),
  }
  const {auth, authSource, deadline, signal} = settings
  const events = settings.events ?? discardEvents
  const image = settings.images.ensureImage(ensureImageOptions(pod, container, context, {auth, authSource, deadline, signal}))
  let createdId: string | undefined
  try {
    const made = await startContainer(client, pod, container, context, {
      type: 'app',
      attempt,
      image,
      nodeMemoryBytes: settings.nodeMemoryBytes,
      terminationMessageFile: recorded ? (name) => createTerminationMessageFile(root, pod.uid, name) : undefined,
      events,
      deadline,
      signal,
      start: settings.start === true,
      images: settings.images,
      imagePull: {auth, authSource, deadline},
      onCreated(id) {
        createdId = id
      },
    })
    return {
      containerId: made.containerId,
      name: container.name,
      pod: fullName,
      sandboxId: sandbox.id,
      attempt,
      image: container.image,
      imageRef: made.imageRef,
      started: settings.start === true,
    }
  } catch (error) {
    const failure = asPodctlError(error)
    if (createdId === undefined) throw failure
    throw await removeCreated(client, createdId, failure)
  }
}

/** The input's container as it will be made: renamed, with the pull flags' policy and its postStart hook recorded for `podctl start`. */
function containerToAdd(input: ContainerInput, settings: AddContainerSettings): ContainerModel {
  const container = {...input.container, name: settings.name ?? input.container.name}
  if (settings.pullPolicy) container.imagePullPolicy = settings.pullPolicy
  const hook = container.lifecycle.postStart
  if (hook && !settings.start) {
    container.extraAnnotations = {...container.extraAnnotations, [ContainerAnnotation.postStartHandler]: JSON.stringify(hook)}
  }

  return container
}

/** A container created for this command and then failed (start, postStart) is killed and removed: nothing stays half-made. */
async function removeCreated(client: CriClient, containerId: string, failure: ReturnType<typeof asPodctlError>) {
  try {
    const {containers} = await client.runtime('listContainers', {filter: {id: containerId}}, {cleanup: true})
    if (containers[0]?.state === 'CONTAINER_RUNNING') await killContainer(client, containers[0], {force: true, cleanup: true})
    await client.runtime('removeContainer', {containerId}, {cleanup: true})
    return withMessage(failure, `${failure.message} (container ${shortId(containerId)} removed)`)
  } catch (error) {
    return withMessage(
      failure,
      `${failure.message}; removing container ${shortId(containerId)} failed (${asPodctlError(error).message}): ` +
        `remove it with: podctl rm -f ${shortId(containerId)}`,
    )
  }
}

/**
 * The pod as the kubelet knows it, rebuilt from what the runtime stores: identity and labels from
 * the sandbox, namespaces from its status, the restart policy podctl recorded, and the grace
 * period of the input's pod or of the containers already there.
 */
export function podFromSandbox(
  sandbox: PodSandbox,
  status: PodSandboxStatus | undefined,
  input: Pick<ContainerInput, 'pod' | 'volumes' | 'source'> & {container: ContainerModel},
  existing: readonly Container[],
): PodModel {
  const modes = status?.linux?.namespaces?.options
  const recordedGrace = existing
    .map((other) => other.annotations[ContainerAnnotation.podTerminationGracePeriod])
    .find((value) => value !== undefined && /^\d+$/.test(value))
  return {
    source: input.source,
    name: sandbox.metadata?.name ?? '',
    namespace: sandbox.metadata?.namespace ?? '',
    uid: sandbox.metadata?.uid ?? '',
    uidGenerated: false,
    labels: {...sandbox.labels},
    annotations: {...sandbox.annotations},
    restartPolicy: restartPolicyOf(sandbox.annotations),
    terminationGracePeriodSeconds:
      input.pod?.terminationGracePeriodSeconds ?? (recordedGrace === undefined ? undefined : Number(recordedGrace)),
    hostNetwork: modes?.network === 'NODE',
    hostPID: modes?.pid === 'NODE',
    hostIPC: modes?.ipc === 'NODE',
    shareProcessNamespace: modes?.pid === 'POD',
    dnsPolicy: 'Default',
    volumes: input.volumes,
    initContainers: [],
    containers: [input.container],
  }
}

/**
 * CreateContainer's sandbox_config: the runtime reads the log directory (the container's log path
 * is relative to it) and the cgroup parent from it. containerd's verbose status keeps the config the
 * sandbox was made with (Go JSON, snake_case); without it, the kubelet's log directory layout.
 */
export function sandboxConfigOf(
  sandbox: PodSandbox,
  status: PodSandboxStatus | undefined,
  info: Readonly<Record<string, string>> | undefined,
  logsRoot: string,
): SandboxConfig {
  const recorded = recordedConfig(info)
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined)
  const {name, namespace, uid, attempt} = {name: '', namespace: '', uid: '', attempt: 0, ...(status?.metadata ?? sandbox.metadata)}
  const linux = (recorded?.linux ?? {}) as Record<string, unknown>
  return {
    metadata: {name, namespace, uid, attempt},
    hostname: text(recorded?.hostname) ?? '',
    logDirectory: text(recorded?.log_directory) ?? buildPodLogsDirectory(logsRoot, namespace, name, uid),
    labels: {...sandbox.labels},
    annotations: {...sandbox.annotations},
    linux: {
      cgroupParent: text(linux.cgroup_parent) ?? '',
      securityContext: {namespaceOptions: status?.linux?.namespaces?.options},
    },
  }
}

function recordedConfig(info: Readonly<Record<string, string>> | undefined): Record<string, unknown> | undefined {
  for (const text of Object.values(info ?? {})) {
    try {
      const parsed = JSON.parse(text) as {config?: unknown; runtimeSpec?: {annotations?: Record<string, unknown>}}
      if (parsed && typeof parsed.config === 'object' && parsed.config !== null) return parsed.config as Record<string, unknown>
      const crio = parsed?.runtimeSpec?.annotations
      if (crio) return crioRecordedConfig(crio)
    } catch {
      // Not JSON: not the config.
    }
  }

  return undefined
}

/**
 * CRI-O keeps no config in its verbose status, but its infra container's spec annotations name the
 * sandbox's log file (in the pod's log directory) and cgroup parent. CRI-O places a container's log
 * in the log_directory of CreateContainer's sandbox_config, so it must be the pod's.
 */
function crioRecordedConfig(annotations: Record<string, unknown>): Record<string, unknown> {
  const logPath = annotations['io.kubernetes.cri-o.LogPath']
  const cgroupParent = annotations['io.kubernetes.cri-o.CgroupParent']
  return {
    ...(typeof logPath === 'string' && logPath.includes('/') ? {log_directory: logPath.slice(0, logPath.lastIndexOf('/'))} : {}),
    linux: typeof cgroupParent === 'string' ? {cgroup_parent: cgroupParent} : {},
  }
}
