/**
 * The kubelet's startContainer (kuberuntime_container.go) for one container: ensure the image,
 * generateContainerConfig, CreateContainer, StartContainer, then the postStart hook — with its
 * events (Created, Started, Failed, FailedPostStartHook) and error names (CreateContainerConfigError,
 * CreateContainerError, RunContainerError, PostStartHookError).
 */
import {mkdir, readdir} from 'node:fs/promises'
import {dirname} from 'node:path'

import type {CriClient} from '../../cri/client.js'
import {InterruptedError, PodctlError} from '../../errors.js'
import type {ContainerModel, ContainerType, PodModel} from '../../manifest/model.js'
import {type EventSink, normalEvent, warningEvent} from '../../kube/events.js'
import {podDescription, podFullName, restartCountFromLogFiles} from '../../kube/helpers.js'
import {podDirectoryOf} from '../../kube/labels.js'
import type {EnsureImageOptions, EnsureImageResult} from '../../images/image-manager.js'
import {generateContainerConfig} from './container-config.js'
import {resizedResources} from './resize.js'
import {runContainerOptions} from './container-env.js'
import {podPullSecrets} from '../volumes/pod-objects.js'
import {createContainerLogLink} from './container-logs-links.js'
import {runPostStart} from '../lifecycle/hooks.js'
import {asPodFailure, PodFailedError, PodFailureReason} from '../core/reasons.js'
import type {SandboxContext} from './sandbox.js'
import {verifyRunAsNonRoot as verifyEffectiveRunAsNonRoot} from '../core/security-context.js'

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

/** The kubelet's verifyRunAsNonRoot over the effective (pod + container) context; undefined when allowed, else the reason. */
export function verifyRunAsNonRoot(
  pod: PodModel,
  container: ContainerModel,
  imageUser?: {uid?: number; username?: string},
): string | undefined {
  return verifyEffectiveRunAsNonRoot(pod, container, imageUser, podDescription(pod.name, pod.namespace, pod.uid))
}

// ---------------------------------------------------------------------------------------------
// startContainer

export interface ImageEnsurer {
  ensureImage(options: EnsureImageOptions): Promise<EnsureImageResult>
}

export interface StartContainerOptions {
  type: ContainerType
  /** The restart count (ContainerMetadata.attempt). */
  attempt: number
  /** The container's image being ensured; pulls of every container start ahead, in parallel. */
  image: Promise<EnsureImageResult>
  nodeMemoryBytes: number
  /** Makes the termination-message file (skipped when undefined, e.g. in tests). */
  terminationMessageFile?: (containerName: string) => Promise<string>
  events: EventSink
  /** Epoch ms; bounds the postStart hook. */
  deadline?: number
  /** The pod's IP, for httpGet hooks without a host. */
  podIP?: string
  signal?: AbortSignal
  /** Called as soon as CreateContainer returns, so a later failure can still clean up. */
  onCreated?: (containerId: string) => void
  /** false: stop after CreateContainer (`podctl create` without --start); default true. */
  start?: boolean
  /** Ensures the images of the image volumes the container mounts (the kubelet's getImageVolumes). */
  images?: ImageEnsurer
  /** The pull's credentials and deadline, for those images as for the container's. */
  imagePull?: Pick<EnsureImageOptions, 'auth' | 'authSource' | 'deadline'>
}

/** The EnsureImageExists request for one container of a pod in its sandbox. */
export function ensureImageOptions(
  pod: PodModel,
  container: ContainerModel,
  sandbox: Pick<SandboxContext, 'config' | 'runtimeHandler'>,
  options: Pick<EnsureImageOptions, 'auth' | 'authSource' | 'deadline' | 'signal'>,
): EnsureImageOptions {
  return {
    image: container.image,
    policy: container.imagePullPolicy,
    podUid: pod.uid,
    sandboxConfig: sandbox.config,
    runtimeHandler: sandbox.runtimeHandler,
    ...podPullSecrets(pod),
    ...options,
    eventObject: containerObject(pod, container),
  }
}

export interface StartedContainer {
  containerId: string
  imageRef: string
}

/** The object events name (as podctl kill does): `name_namespace/container`. */
export function containerObject(pod: PodModel, container: ContainerModel): string {
  return `${podFullName(pod.name, pod.namespace)}/${container.name}`
}

export async function startContainer(
  client: CriClient,
  pod: PodModel,
  container: ContainerModel,
  sandbox: SandboxContext,
  options: StartContainerOptions,
): Promise<StartedContainer> {
  const {events, signal} = options
  const object = containerObject(pod, container)
  const failed = (message: string) => events(warningEvent('Failed', `Error: ${message}`, object))

  // 1. Image.
  let ensured: EnsureImageResult
  try {
    ensured = await options.image
  } catch (error) {
    if (error instanceof PodctlError && !(error instanceof InterruptedError)) failed(error.code)
    throw error
  }

  const imageVolumes = await ensureImageVolumes(pod, container, sandbox, options).catch((error: unknown) => {
    if (error instanceof PodctlError && !(error instanceof InterruptedError)) failed(error.code)
    throw error
  })

  // 2. Create: the image's user (for runAsUser and runAsNonRoot), then the config, then CreateContainer.
  const imageUser = await getImageUser(client, ensured.imageRef, signal)
  const nonRoot = verifyRunAsNonRoot(pod, container, imageUser)
  if (nonRoot) {
    failed(nonRoot)
    throw new PodFailedError(nonRoot, {reason: PodFailureReason.CreateContainerConfigError, container: container.name})
  }

  const runOptions = await runContainerOptions(pod, container, sandbox, {nodeMemoryBytes: options.nodeMemoryBytes, events, object})
  let terminationMessageFile: string | undefined
  try {
    terminationMessageFile = await options.terminationMessageFile?.(container.name)
  } catch (error) {
    const message = `cannot create the termination message file: ${(error as Error).message}; pass --pod-dir-root to use another directory`
    failed(message)
    throw new PodFailedError(message, {reason: PodFailureReason.CreateContainerConfigError, container: container.name})
  }

  const config = generateContainerConfig(pod, container, {
    type: options.type,
    attempt: options.attempt,
    imageRef: ensured.imageRef,
    imageUser,
    volumePaths: sandbox.volumePaths,
    etcHostsPath: sandbox.etcHostsPath,
    terminationMessageFile,
    nodeMemoryBytes: options.nodeMemoryBytes,
    env: runOptions.env,
    subPaths: runOptions.subPaths,
    usernsOptions: sandbox.config.linux?.securityContext?.namespaceOptions?.usernsOptions,
    imageVolumes,
    resized: resizedIn(sandbox, container.name),
  })

  await createContainerLogDirectory(sandbox.config.logDirectory, config.logPath, container.name, failed)
  let containerId: string
  try {
    // Never cancelled mid-call (like RunPodSandbox): the runtime finishes anyway, and a container
    // it half-made behind a cancelled call is one the rollback cannot see or remove yet.
    const response = await client.runtime('createContainer', {podSandboxId: sandbox.id, config, sandboxConfig: sandbox.config})
    containerId = response.containerId
  } catch (error) {
    const message = (error as Error).message
    failed(message)
    throw asPodFailure(error, message, {reason: PodFailureReason.CreateContainerError, container: container.name})
  }

  options.onCreated?.(containerId)
  events(normalEvent('Created', `Created container: ${container.name}`, object))
  const logDirectory = sandbox.config.logDirectory
  if (logDirectory && config.logPath)
    await createContainerLogLink(pod, {name: container.name, id: containerId, logPath: `${logDirectory}/${config.logPath}`})
  if (options.start === false) return {containerId, imageRef: ensured.imageRef}

  // 3. Start, unless interrupted meanwhile. Not cancelled mid-call either: containerd keeps a
  // container whose start was cancelled "starting" for seconds, refusing to stop or remove it.
  if (signal?.aborted) throw new InterruptedError(`interrupted before container ${container.name} was started`)
  try {
    await client.runtime('startContainer', {containerId})
  } catch (error) {
    const message = (error as Error).message
    failed(message)
    throw asPodFailure(error, message, {reason: PodFailureReason.RunContainerError, container: container.name, containerId})
  }

  events(normalEvent('Started', `Started container ${container.name}`, object))

  // 4. postStart.
  const hook = container.lifecycle.postStart
  if (hook) {
    const failure = await runPostStart(client, hook, {
      pod,
      container,
      containerId,
      podIP: options.podIP,
      deadline: options.deadline,
      signal,
      events,
      object,
    })
    if (failure !== undefined) {
      events(warningEvent('FailedPostStartHook', 'PostStartHook failed', object))
      throw new PodFailedError(failure, {reason: PodFailureReason.PostStartHookError, container: container.name, containerId})
    }
  }

  return {containerId, imageRef: ensured.imageRef}
}

/** The container's resources as an in-place resize left them (resize.ts), recorded in the pod's directory. */
function resizedIn(sandbox: SandboxContext, name: string): ContainerModel['resources'] | undefined {
  return resizedResources(podDirectoryOf((sandbox.config.annotations ?? {}) as Record<string, string>))[name]
}

/**
 * The kubelet's getImageVolumes for one container: the image of each image volume it mounts, ensured
 * with the volume's pull policy (the default follows the tag, as for containers) and the pod's pull
 * secrets, its events and errors those of an image pull (ErrImagePull, ErrImageNeverPull, ...).
 */
async function ensureImageVolumes(
  pod: PodModel,
  container: ContainerModel,
  sandbox: SandboxContext,
  options: StartContainerOptions,
): Promise<Map<string, {imageRef: string; reference: string}>> {
  const mounted = new Set(container.volumeMounts.map((mount) => mount.name))
  const volumes = pod.volumes.filter((volume) => volume.image && mounted.has(volume.name))
  const out = new Map<string, {imageRef: string; reference: string}>()
  if (volumes.length === 0) return out
  if (!options.images)
    throw new PodFailedError('image volumes need the image manager', {reason: PodFailureReason.CreateContainerConfigError})
  await Promise.all(
    volumes.map(async ({name, image}) => {
      const source = {...container, image: image!.reference, imagePullPolicy: image!.pullPolicy}
      const ensured = await options.images!.ensureImage(
        ensureImageOptions(pod, source, sandbox, {...options.imagePull, signal: options.signal}),
      )
      out.set(name, {imageRef: ensured.imageRef, reference: image!.reference})
    }),
  )
  return out
}

/**
 * The kubelet's generateContainerConfig makes `<pod log directory>/<container>/` before CreateContainer:
 * containerd makes it itself, CRI-O (conmon) does not, and fails every CreateContainer without it
 * ("Failed to open log file"). A crictl config's own log_path may name another sub-directory: its
 * directory is made the same way.
 */
async function createContainerLogDirectory(
  podLogDirectory: string | undefined,
  logPath: string | undefined,
  containerName: string,
  failed: (message: string) => void,
): Promise<void> {
  if (!podLogDirectory || !logPath) return
  try {
    await mkdir(dirname(`${podLogDirectory}/${logPath}`), {recursive: true, mode: 0o755})
  } catch (error) {
    const message = `create container log directory for container ${containerName} failed: ${(error as Error).message}`
    failed(message)
    throw new PodFailedError(message, {reason: PodFailureReason.CreateContainerConfigError, container: containerName})
  }
}

/** The kubelet's getImageUser: ImageStatus → uid (numeric user) or username; best effort. */
async function getImageUser(
  client: CriClient,
  imageRef: string,
  signal?: AbortSignal,
): Promise<{uid?: number; username?: string} | undefined> {
  try {
    const {image} = await client.image('imageStatus', {image: {image: imageRef}}, {signal})
    if (!image) return undefined
    return {uid: image.uid ? Number(image.uid.value) : undefined, username: image.username || undefined}
  } catch (error) {
    if (error instanceof InterruptedError) throw error
    return undefined
  }
}
