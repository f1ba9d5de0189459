/**
 * One garbage collection round, the kubelet's order: dead containers (container-gc.ts), then
 * sandboxes left empty (sandbox-gc.ts), then log directories of deleted pods and dead log links
 * (pod-logs-gc.ts), then, when asked, images (image-gc.ts). Failing removals are collected, never
 * thrown: a round always finishes; only a listing the runtime refuses fails it.
 */
import type {CriClient} from '../../cri/client.js'
import {asPodctlError} from '../../errors.js'
import type {Container, Image, PodSandbox} from '../../../generated/runtime/v1/api.js'
import {runtimeSandboxImage} from '../../images/sandbox-image.js'
import {PodLabel} from '../../kube/labels.js'
import {containerLogsDir} from '../kuberuntime/container-logs-links.js'
import {type CollectedContainer, containerLogPath, containersToRemove, describeContainer, removeDeadContainer} from './container-gc.js'
import {bytesToFree, imageFsUsage, type ImageFsUsage} from './image-fs.js'
import {type CollectedImage, describeImage, freeSpace, imageCandidates, imageUsage, removeImage} from './image-gc.js'
import {ImageRecords} from './image-records.js'
import {deadContainerLogLinks, podLogDirectoriesToRemove, recordedPodUids, removePath} from './pod-logs-gc.js'
import {type ContainerGcPolicy, DEFAULT_CONTAINER_GC_POLICY, imageGcEnabled, type ImageGcPolicy} from './policy.js'
import {type CollectedSandbox, describeSandbox, removeSandbox, sandboxesToRemove} from './sandbox-gc.js'

export interface GcSettings {
  containers?: ContainerGcPolicy
  images: ImageGcPolicy
  /** Root of the pod log directories (--pod-logs-root). */
  logsRoot: string
  /** Root of the pod directories (--pod-dir-root): records keep a pod's logs, and image records live there. */
  podDirRoot: string
  /** The /var/log/containers links' directory (default $PODCTL_CONTAINER_LOGS_DIR, else /var/log/containers). */
  linksDir?: string
  /** Only this namespace's containers, sandboxes, log directories and links (images are the node's). */
  namespace?: string
}

export interface GcOptions {
  /** Decide, remove nothing. */
  dryRun?: boolean
  /** Run image GC in this round (a supervisor does every ImageGCPeriod); default true. */
  images?: boolean
  /** First-seen and last-used times of images; default memory only. */
  imageRecords?: ImageRecords
  signal?: AbortSignal
  now?: () => number
}

export interface GcFailure {
  /** What could not be removed: "container ID", "sandbox ID", "image REF", a path. */
  object: string
  message: string
}

export interface ImageGcResult {
  /** False when the high threshold is 100 or the round skipped images. */
  ran: boolean
  highThresholdPercent: number
  lowThresholdPercent: number
  usageBefore?: ImageFsUsage
  usageAfter?: ImageFsUsage
  /** What reaching the low threshold needed (0 when usage is below the high threshold). */
  bytesToFree: number
  freedBytes: number
  removed: CollectedImage[]
}

export interface GcResult {
  dryRun: boolean
  containers: CollectedContainer[]
  sandboxes: CollectedSandbox[]
  podLogDirectories: string[]
  containerLogLinks: string[]
  images: ImageGcResult
  failures: GcFailure[]
}

function inNamespace(namespace: string | undefined) {
  return (object: {labels: Record<string, string>}) => namespace === undefined || object.labels[PodLabel.namespace] === namespace
}

export async function collectGarbage(client: CriClient, settings: GcSettings, options: GcOptions = {}): Promise<GcResult> {
  const now = options.now ?? Date.now
  const {signal} = options
  const dryRun = Boolean(options.dryRun)
  const failures: GcFailure[] = []
  const attempt = async <T>(object: string, work: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await work()
    } catch (error) {
      failures.push({object, message: asPodctlError(error).message})
      return undefined
    }
  }

  const scoped = inNamespace(settings.namespace)
  const listed: Container[] = (await client.runtime('listContainers', {filter: {}}, {signal})).containers
  const doomed = containersToRemove(listed.filter(scoped), settings.containers ?? DEFAULT_CONTAINER_GC_POLICY, now())
  const containers: CollectedContainer[] = []
  for (const container of doomed) {
    const removed = dryRun
      ? describeContainer(container, await containerLogPath(client, container.id, signal))
      : await attempt(`container ${container.id}`, () => removeDeadContainer(client, container, signal))
    if (removed) containers.push(removed)
  }

  const gone = new Set(containers.map((container) => container.id))
  const remaining = listed.filter((container) => !gone.has(container.id))
  const sandboxList: PodSandbox[] = (await client.runtime('listPodSandbox', {filter: {}}, {signal})).items
  const sandboxes: CollectedSandbox[] = []
  for (const sandbox of sandboxesToRemove(sandboxList.filter(scoped), remaining)) {
    const removed = dryRun ? describeSandbox(sandbox) : await attempt(`sandbox ${sandbox.id}`, () => removeSandbox(client, sandbox, signal))
    if (removed) sandboxes.push(removed)
  }

  const removedSandboxes = new Set(sandboxes.map((sandbox) => sandbox.id))
  const liveUids = new Set(sandboxList.filter((sandbox) => !removedSandboxes.has(sandbox.id)).map((sandbox) => sandbox.metadata?.uid ?? ''))
  const scope = {logsRoot: settings.logsRoot, liveUids, recordedUids: await recordedPodUids(settings.podDirRoot), nowMs: now()}
  const podLogDirectories: string[] = []
  for (const directory of await podLogDirectoriesToRemove({...scope, namespace: settings.namespace})) {
    if (dryRun || (await attempt(directory.path, async () => removePath(directory.path).then(() => true))))
      podLogDirectories.push(directory.path)
  }

  const containerLogLinks: string[] = []
  for (const link of await deadContainerLogLinks(settings.linksDir ?? containerLogsDir(), remaining, settings.namespace)) {
    if (dryRun || (await attempt(link, async () => removePath(link).then(() => true)))) containerLogLinks.push(link)
  }

  const images = await collectImages(client, settings.images, {...options, dryRun, now, attempt})
  return {dryRun, containers, sandboxes, podLogDirectories, containerLogLinks, images, failures}
}

type Attempt = <T>(object: string, work: () => Promise<T>) => Promise<T | undefined>

async function collectImages(
  client: CriClient,
  policy: ImageGcPolicy,
  options: GcOptions & {dryRun: boolean; now: () => number; attempt: Attempt},
): Promise<ImageGcResult> {
  const {attempt} = options
  const result: ImageGcResult = {
    ran: false,
    highThresholdPercent: policy.highThresholdPercent,
    lowThresholdPercent: policy.lowThresholdPercent,
    bytesToFree: 0,
    freedBytes: 0,
    removed: [],
  }
  if (!imageGcEnabled(policy) || options.images === false) return result
  result.ran = true
  const {signal} = options
  const records = options.imageRecords ?? new ImageRecords()
  // Containers listed again, just before deciding: one created since the round began keeps its image too.
  const [{images}, {containers}, status] = await Promise.all([
    client.image('listImages', {}, {signal}),
    client.runtime('listContainers', {filter: {}}, {signal}),
    client.runtime('status', {verbose: true}, {signal}).catch(() => undefined),
  ])
  const sandboxImage = await runtimeSandboxImage(client, status?.info)
  const inUse = imageUsage(containers, sandboxImage ? [sandboxImage] : [])
  const known = await records.detect(images, inUse, options.now())
  if (!options.dryRun) await records.save()
  result.usageBefore = await imageFsUsage(client, signal)
  if (result.usageBefore.usagePercent < policy.highThresholdPercent) return result
  result.bytesToFree = Math.max(0, bytesToFree(result.usageBefore, policy.lowThresholdPercent))
  const candidates = imageCandidates(images, {inUse, records: known, minAgeMs: policy.minAgeMs, nowMs: options.now()})
  const remove = (image: Image) =>
    options.dryRun
      ? Promise.resolve(describeImage(image))
      : attempt(`image ${describeImage(image).ref}`, () => removeImage(client, image, signal))
  Object.assign(result, await freeSpace(candidates, result.bytesToFree, remove))
  if (!options.dryRun && result.removed.length > 0) result.usageAfter = await imageFsUsage(client, signal)
  return result
}
