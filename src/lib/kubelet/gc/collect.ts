/**
 * One garbage collection round: first the library's pods whose session is gone (session-gc.ts), then,
 * the kubelet's order: dead containers (container-gc.ts), then
 * sandboxes left empty (sandbox-gc.ts), then log directories of deleted pods and dead log links
 * (pod-logs-gc.ts), then, when asked, images (image-gc.ts). Unlike the kubelet, which owns its
 * node, every step removes only what podctl can prove it made on this runtime (core/ownership.ts,
 * core/owned-logs.ts, images/pull-records.ts) and says why (explain.ts). Failing removals are
 * collected, never thrown: a round always finishes; only a listing the runtime refuses fails it.
 */
import type {CriClient} from '../../cri/client.js'
import {PodLabel} from '../../kube/labels.js'
import {readPodRecords} from '../core/pod-records.js'
import {containerLogsDir} from '../kuberuntime/container-logs-links.js'
import {collectContainers, type CollectedContainer} from './container-gc.js'
import type {GcLeftAlone, GcReason} from './explain.js'
import {collectImages, type ImageGcResult, type ImageRoundOptions} from './image-gc.js'
import {collectDeadLinks, collectPodLogDirectories, recordedPodUids} from './pod-logs-gc.js'
import {type ContainerGcPolicy, DEFAULT_CONTAINER_GC_POLICY, type ImageGcPolicy} from './policy.js'
import {type GcFailure, type GcRound, newRound} from './round.js'
import {type CollectedSandbox, collectSandboxes} from './sandbox-gc.js'
import {collectGoneSessionPods, type PodReaper, type ReapedPod} from './session-gc.js'

export type {ImageGcResult} from './image-gc.js'
export type {GcFailure} from './round.js'
export type {PodReaper, ReapedPod} from './session-gc.js'

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

export interface GcOptions extends ImageRoundOptions {
  /** Decide, remove nothing. */
  dryRun?: boolean
  signal?: AbortSignal
  now?: () => number
  /** Kills a library pod whose session is gone (workers/gone-sessions.ts's sessionReaper); none: such pods are not looked for. */
  reapPod?: PodReaper
}

export interface GcResult {
  dryRun: boolean
  /** The library's pods whose session (test process) is gone, killed with their grace period. */
  pods: ReapedPod[]
  containers: CollectedContainer[]
  sandboxes: CollectedSandbox[]
  podLogDirectories: string[]
  containerLogLinks: string[]
  images: ImageGcResult
  failures: GcFailure[]
  /** Why each object went (or would go): whose it is, and the rule that collects it. */
  reasons: GcReason[]
  /** Objects of other tools or runtimes the kubelet's rules would have taken, counted by why they stay. */
  leftAlone: GcLeftAlone[]
}

/** Adds to the round the records of the pods `uids` it has not looked for yet (`looked`: those it has). */
async function readRecordsOf(round: GcRound, uids: Iterable<string>, looked: Set<string>): Promise<void> {
  const missing = [...new Set(uids)].filter((uid) => uid !== '' && !looked.has(uid))
  if (missing.length === 0) return
  for (const uid of missing) looked.add(uid)
  const read = await readPodRecords(round.podDirRoot, round.client.runtimeEndpoint, missing)
  round.records = new Map([...round.records, ...read])
}

export async function collectGarbage(client: CriClient, settings: GcSettings, options: GcOptions = {}): Promise<GcResult> {
  const {signal} = options
  const {namespace, podDirRoot, logsRoot} = settings
  const round = newRound(client, {dryRun: Boolean(options.dryRun), signal, nowMs: (options.now ?? Date.now)(), namespace, podDirRoot})
  const pods = options.reapPod ? await collectGoneSessionPods(round, options.reapPod) : []
  const listed = (await client.runtime('listContainers', {filter: {}}, {signal})).containers
  const looked = new Set<string>()
  await readRecordsOf(
    round,
    listed.map((container) => container.labels[PodLabel.uid] ?? ''),
    looked,
  )
  const containers = await collectContainers(round, listed, settings.containers ?? DEFAULT_CONTAINER_GC_POLICY)

  const gone = new Set(containers.map((container) => container.id))
  const remaining = listed.filter((container) => !gone.has(container.id))
  const sandboxList = (await client.runtime('listPodSandbox', {filter: {}}, {signal})).items
  await readRecordsOf(
    round,
    sandboxList.map((sandbox) => sandbox.metadata?.uid ?? ''),
    looked,
  )
  const sandboxes = await collectSandboxes(round, sandboxList, remaining)

  const removedSandboxes = new Set(sandboxes.map((sandbox) => sandbox.id))
  const liveUids = new Set(sandboxList.filter((sandbox) => !removedSandboxes.has(sandbox.id)).map((sandbox) => sandbox.metadata?.uid ?? ''))
  const linksDir = settings.linksDir ?? containerLogsDir()
  const recordedUids = await recordedPodUids(podDirRoot)
  const logs = await collectPodLogDirectories(round, {logsRoot, linksDir, liveUids, recordedUids})
  const deadLinks = await collectDeadLinks(round, {linksDir, logsRoot, remaining, alreadyGone: logs.links})

  const images = await collectImages(round, settings.images, options)
  return {
    dryRun: round.dryRun,
    pods,
    containers,
    sandboxes,
    podLogDirectories: logs.directories,
    containerLogLinks: [...logs.links, ...deadLinks],
    images,
    failures: round.failures,
    reasons: round.explanation.reasons,
    leftAlone: round.explanation.leftAloneList(),
  }
}
