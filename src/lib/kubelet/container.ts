/**
 * The kubelet's startContainer (kuberuntime_container.go) for one container: ensure the image,
 * generateContainerConfig, CreateContainer, StartContainer, then the postStart hook — with its
 * events (Created, Started, Failed, FailedPostStartHook) and error names (CreateContainerConfigError,
 * CreateContainerError, RunContainerError, PostStartHookError).
 */
import {readdir} from 'node:fs/promises'

import type {CriClient, RuntimeRequest} from '../cri/client.js'
import {InterruptedError, PodctlError} from '../errors.js'
import type {ContainerModel, ContainerType, PodModel} from '../manifest/model.js'
import type {MountPropagation, SecurityProfile_ProfileType} from '../../generated/runtime/v1/api.js'
import {normalEvent, warningEvent, type EventSink} from '../kube/events.js'
import {buildContainerLogsPath, podDescription, podFullName, restartCountFromLogFiles} from '../kube/helpers.js'
import {newContainerAnnotations, newContainerLabels} from '../kube/labels.js'
import type {EnsureImageOptions, EnsureImageResult} from '../images/image-manager.js'
import {containerOomScoreAdj, effectiveResources, linuxResources} from './resources.js'
import {asPodFailure, PodFailedError, PodFailureReason} from './reasons.js'
import {podNamespaceOptions, type SandboxConfig} from './sandbox.js'

export type ContainerConfig = NonNullable<RuntimeRequest<'createContainer'>['config']>

/** securitycontext defaults for the default proc mount (what the kubelet sends for every container). */
export const DEFAULT_MASKED_PATHS = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
]
export const DEFAULT_READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger']

export interface ContainerConfigOptions {
  type: ContainerType
  /** The restart count: ContainerMetadata.attempt, the restartCount annotation and the log file name. */
  attempt: number
  /** The image ID from the ensure-image flow. */
  imageRef: string
  /** The image's user (ImageStatus image.uid / image.username): used when runAsUser is not set. */
  imageUser?: {uid?: number; username?: string}
  /** Host path of each volume, by name. */
  volumePaths: Map<string, string>
  /** Host file with the kubelet-managed /etc/hosts, when the pod has an IP. */
  etcHostsPath?: string
  /** Host file mounted at terminationMessagePath. */
  terminationMessageFile?: string
  nodeMemoryBytes: number
}

/**
 * The kubelet's calcRestartCountByLogDir: a container with no status yet continues after the
 * highest `N.log` (or rotated `N.log.*`) in its log directory, so a replaced pod never appends to
 * an earlier attempt's log file.
 */
export async function restartCountFromLogs(containerLogDirectory: string): Promise<number> {
  try {
    const entries = await readdir(containerLogDirectory, {withFileTypes: true})
    return restartCountFromLogFiles(entries.filter((entry) => !entry.isDirectory()).map((entry) => entry.name))
  } catch {
    return 0
  }
}

/** `$(VAR)` references as the kubelet expands them (third_party/forked/golang/expansion): unknown stay, `$$` is `$`. */
export function expandReferences(input: string, lookup: (name: string) => string | undefined): string {
  let out = ''
  let index = 0
  while (index < input.length) {
    const char = input[index]
    if (char !== '$' || index + 1 >= input.length) {
      out += char
      index++
      continue
    }

    const next = input[index + 1]
    if (next === '$') {
      out += '$'
      index += 2
    } else if (next === '(') {
      const close = input.indexOf(')', index + 2)
      if (close < 0) {
        out += '$('
        index += 2
      } else {
        const name = input.slice(index + 2, close)
        out += lookup(name) ?? `$(${name})`
        index = close + 1
      }
    } else {
      out += `$${next}`
      index += 2
    }
  }

  return out
}

/** The container's environment in order, each value expanded against the variables before it. */
export function containerEnvironment(container: ContainerModel): Array<{name: string; value: string}> {
  const defined = new Map<string, string>()
  return container.env.map(({name, value}) => {
    const expanded = expandReferences(value, (ref) => defined.get(ref))
    defined.set(name, expanded)
    return {name, value: expanded}
  })
}

/** Mounts in the kubelet's order: volumeMounts, the managed /etc/hosts, the termination-message file. */
export function containerMounts(container: ContainerModel, options: ContainerConfigOptions): NonNullable<ContainerConfig['mounts']> {
  const privateMount = 'PROPAGATION_PRIVATE' as MountPropagation
  const mounts: NonNullable<ContainerConfig['mounts']> = container.volumeMounts.map((mount) => ({
    containerPath: mount.mountPath,
    hostPath: options.volumePaths.get(mount.name) ?? '',
    readonly: mount.readOnly,
    selinuxRelabel: false,
    propagation: privateMount,
  }))
  const mountsEtcHosts = container.volumeMounts.some((mount) => mount.mountPath === '/etc/hosts')
  if (options.etcHostsPath && !mountsEtcHosts) {
    mounts.push({containerPath: '/etc/hosts', hostPath: options.etcHostsPath, readonly: false, selinuxRelabel: false, propagation: privateMount})
  }

  if (options.terminationMessageFile) {
    mounts.push({
      containerPath: container.terminationMessagePath,
      hostPath: options.terminationMessageFile,
      readonly: false,
      selinuxRelabel: false,
      propagation: privateMount,
    })
  }

  return mounts
}

/** The kubelet's generateContainerConfig + generateLinuxContainerConfig. */
export function generateContainerConfig(pod: PodModel, container: ContainerModel, options: ContainerConfigOptions): ContainerConfig {
  const env = containerEnvironment(container)
  const values = new Map(env.map(({name, value}) => [name, value]))
  const expand = (text: string) => expandReferences(text, (name) => values.get(name))
  const sc = container.securityContext
  const resources = effectiveResources(container)
  const runAsUser = sc?.runAsUser ?? options.imageUser?.uid
  return {
    metadata: {name: container.name, attempt: options.attempt},
    image: {image: options.imageRef, userSpecifiedImage: container.image},
    command: container.command.map(expand),
    args: container.args.map(expand),
    workingDir: container.workingDir ?? '',
    labels: newContainerLabels(pod, container),
    annotations: newContainerAnnotations(pod, container, options.type, options.attempt),
    devices: [],
    CDIDevices: [],
    mounts: containerMounts(container, options),
    logPath: container.logPath ?? buildContainerLogsPath(container.name, options.attempt),
    stdin: false,
    stdinOnce: false,
    tty: false,
    linux: {
      resources: {
        ...linuxResources(resources.cpuRequestMilli, resources.cpuLimitMilli, resources.memoryLimitBytes),
        oomScoreAdj: String(containerOomScoreAdj(pod, container, options.nodeMemoryBytes)),
      },
      securityContext: {
        ...(sc?.capabilities ? {capabilities: {addCapabilities: sc.capabilities.add, dropCapabilities: sc.capabilities.drop}} : {}),
        privileged: sc?.privileged ?? false,
        namespaceOptions: podNamespaceOptions(pod),
        ...(runAsUser === undefined ? {} : {runAsUser: {value: String(runAsUser)}}),
        ...(sc?.runAsGroup === undefined ? {} : {runAsGroup: {value: String(sc.runAsGroup)}}),
        runAsUsername: sc?.runAsUser === undefined && options.imageUser?.uid === undefined ? (options.imageUser?.username ?? '') : '',
        readonlyRootfs: sc?.readOnlyRootFilesystem ?? false,
        noNewPrivs: sc?.allowPrivilegeEscalation === false,
        maskedPaths: DEFAULT_MASKED_PATHS,
        readonlyPaths: DEFAULT_READONLY_PATHS,
        // Without a seccompProfile the kubelet (SeccompDefault off) runs containers Unconfined.
        seccomp: {profileType: 'Unconfined' as SecurityProfile_ProfileType},
      },
    },
    envs: env.map(({name, value}) => ({key: name, value: Buffer.from(value, 'utf8')})),
  }
}

/** The kubelet's verifyRunAsNonRoot; undefined when allowed, else the reason (CreateContainerConfigError). */
export function verifyRunAsNonRoot(pod: PodModel, container: ContainerModel, imageUser?: {uid?: number; username?: string}): string | undefined {
  const sc = container.securityContext
  if (!sc?.runAsNonRoot) return undefined
  const where = `(pod: "${podDescription(pod.name, pod.namespace, pod.uid)}", container: ${container.name})`
  if (sc.runAsUser !== undefined) return sc.runAsUser === 0 ? `container's runAsUser breaks non-root policy ${where}` : undefined
  if (imageUser?.uid === 0) return `container has runAsNonRoot and image will run as root ${where}`
  if (imageUser?.uid === undefined && imageUser?.username) {
    return `container has runAsNonRoot and image has non-numeric user (${imageUser.username}), cannot verify user is non-root ${where}`
  }

  return undefined
}

// ---------------------------------------------------------------------------------------------
// startContainer

export interface ImageEnsurer {
  ensureImage(options: EnsureImageOptions): Promise<EnsureImageResult>
}

export interface StartContainerContext {
  client: CriClient
  images: ImageEnsurer
  pod: PodModel
  container: ContainerModel
  type: ContainerType
  attempt: number
  sandboxId: string
  sandboxConfig: SandboxConfig
  runtimeHandler: string
  /** Everything generateContainerConfig needs besides the image. */
  volumePaths: Map<string, string>
  etcHostsPath?: string
  /** Makes the termination-message file (skipped when undefined, e.g. in tests). */
  terminationMessageFile?: (containerName: string) => Promise<string>
  nodeMemoryBytes: number
  auth?: EnsureImageOptions['auth']
  authSource?: string
  events: EventSink
  /** Epoch ms; bounds image back-off and the postStart hook. */
  deadline?: number
  signal?: AbortSignal
  /** An already-ensured image (init/app pulls may run ahead in parallel). */
  ensured?: Promise<EnsureImageResult>
  /** Called as soon as CreateContainer returns, so a later failure can still clean up. */
  onCreated?: (containerId: string) => void
}

export interface StartedContainer {
  containerId: string
  imageRef: string
}

/** The object events name (as podctl kill does): `name_namespace/container`. */
export function containerObject(pod: PodModel, container: ContainerModel): string {
  return `${podFullName(pod.name, pod.namespace)}/${container.name}`
}

export async function startContainer(ctx: StartContainerContext): Promise<StartedContainer> {
  const {client, pod, container, events, signal} = ctx
  const object = containerObject(pod, container)
  const failed = (message: string) => events(warningEvent('Failed', `Error: ${message}`, object))

  // 1. Image.
  let ensured: EnsureImageResult
  try {
    ensured = await (ctx.ensured ??
      ctx.images.ensureImage({
        image: container.image,
        policy: container.imagePullPolicy,
        podUid: pod.uid,
        sandboxConfig: ctx.sandboxConfig,
        runtimeHandler: ctx.runtimeHandler,
        auth: ctx.auth,
        authSource: ctx.authSource,
        deadline: ctx.deadline,
        signal,
        eventObject: object,
      }))
  } catch (error) {
    if (error instanceof PodctlError && !(error instanceof InterruptedError)) failed(error.code)
    throw error
  }

  // 2. Create: the image's user (for runAsUser and runAsNonRoot), then the config, then CreateContainer.
  const imageUser = await imageUserOf(client, ensured.imageRef, signal)
  const nonRoot = verifyRunAsNonRoot(pod, container, imageUser)
  if (nonRoot) {
    failed(nonRoot)
    throw new PodFailedError(nonRoot, {reason: PodFailureReason.CreateContainerConfigError, container: container.name})
  }

  let terminationMessageFile: string | undefined
  try {
    terminationMessageFile = await ctx.terminationMessageFile?.(container.name)
  } catch (error) {
    const message = `cannot create the termination message file: ${(error as Error).message}; pass --pod-dir-root to use another directory`
    failed(message)
    throw new PodFailedError(message, {reason: PodFailureReason.CreateContainerConfigError, container: container.name})
  }

  const config = generateContainerConfig(pod, container, {
    type: ctx.type,
    attempt: ctx.attempt,
    imageRef: ensured.imageRef,
    imageUser,
    volumePaths: ctx.volumePaths,
    etcHostsPath: ctx.etcHostsPath,
    terminationMessageFile,
    nodeMemoryBytes: ctx.nodeMemoryBytes,
  })

  let containerId: string
  try {
    const response = await client.runtime(
      'createContainer',
      {podSandboxId: ctx.sandboxId, config, sandboxConfig: ctx.sandboxConfig},
      {signal},
    )
    containerId = response.containerId
  } catch (error) {
    const message = (error as Error).message
    failed(message)
    throw asPodFailure(error, message, {reason: PodFailureReason.CreateContainerError, container: container.name})
  }

  ctx.onCreated?.(containerId)
  events(normalEvent('Created', `Created container: ${container.name}`, object))

  // 3. Start.
  try {
    await client.runtime('startContainer', {containerId}, {signal})
  } catch (error) {
    const message = (error as Error).message
    failed(message)
    throw asPodFailure(error, message, {reason: PodFailureReason.RunContainerError, container: container.name, containerId})
  }

  events(normalEvent('Started', `Started container ${container.name}`, object))

  // 4. postStart.
  const hook = container.lifecycle.postStart
  if (hook) {
    const failure = await runExecHook(client, containerId, hook.exec.command, ctx.deadline, signal)
    if (failure !== undefined) {
      events(warningEvent('FailedPostStartHook', 'PostStartHook failed', object))
      throw new PodFailedError(
        `Exec lifecycle hook (${goList(hook.exec.command)}) for Container "${container.name}" in Pod "${podDescription(pod.name, pod.namespace, pod.uid)}" failed - error: ${failure}`,
        {reason: PodFailureReason.PostStartHookError, container: container.name, containerId},
      )
    }
  }

  return {containerId, imageRef: ensured.imageRef}
}

/** The kubelet's getImageUser: ImageStatus → uid (numeric user) or username; best effort. */
async function imageUserOf(client: CriClient, imageRef: string, signal?: AbortSignal): Promise<{uid?: number; username?: string} | undefined> {
  try {
    const {image} = await client.image('imageStatus', {image: {image: imageRef}}, {signal})
    if (!image) return undefined
    return {uid: image.uid ? Number(image.uid.value) : undefined, username: image.username || undefined}
  } catch (error) {
    if (error instanceof InterruptedError) throw error
    return undefined
  }
}

/**
 * Runs an exec hook with ExecSync; resolves undefined on success, else the failure text
 * ("command 'x' exited with 1: <stderr>", as the kubelet's CRI client words it).
 */
export async function runExecHook(
  client: CriClient,
  containerId: string,
  command: string[],
  deadline: number | undefined,
  signal?: AbortSignal,
): Promise<string | undefined> {
  // The kubelet gives hooks no timeout of their own; podctl bounds them by the run's deadline.
  const remainingSeconds = deadline === undefined ? 0 : Math.max(1, Math.ceil((deadline - Date.now()) / 1000))
  try {
    const response = await client.runtime(
      'execSync',
      {containerId, cmd: command, timeout: String(remainingSeconds)},
      {signal, timeoutMs: remainingSeconds === 0 ? undefined : remainingSeconds * 1000 + 10_000},
    )
    if (response.exitCode === 0) return undefined
    const stderr = Buffer.from(response.stderr ?? []).toString('utf8').trim().split('\n')[0]?.slice(0, 200) ?? ''
    return `command '${command.join(' ')}' exited with ${response.exitCode}: ${stderr}`
  } catch (error) {
    if (error instanceof InterruptedError) throw error
    return (error as Error).message
  }
}

/** Go's %v of a []string: [a b c]. */
function goList(values: string[]): string {
  return `[${values.join(' ')}]`
}
