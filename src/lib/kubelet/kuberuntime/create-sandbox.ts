/**
 * The first steps of SyncPod for a pod that needs a new sandbox, shared by `run` (sync-pod.ts) and
 * SyncPod's recreation (sync-pod.ts): the pod's volumes, RunPodSandbox with the given
 * attempt, and the kubelet-managed /etc/hosts. What it returns is the context every container of
 * the pod is started in (SyncPod's later passes start them).
 */
import type {CriClient} from '../../cri/client.js'
import type {EventSink} from '../../kube/events.js'
import type {PodModel} from '../../manifest/model.js'
import {recordSandboxAttempt} from '../config/desired-state.js'
import {nodeDownwardContext} from '../core/env.js'
import {setUpVolumes, volumeHostPaths, writePodEtcHosts} from '../volumes/pod-dirs.js'
import {createPodSandbox, generatePodSandboxConfig, type SandboxContext} from './sandbox.js'

export interface CreateSandboxSettings {
  logsRoot: string
  podDirRoot: string
  hostResolvConf: string
  nodeMemoryBytes: number
  /** Overrides spec.runtimeClassName. */
  runtimeHandler?: string
}

export interface CreateSandboxHooks {
  events: EventSink
  /** What the step is doing now (for a spinner). */
  step?: (text: string) => void
  /** Called as soon as RunPodSandbox answers, so a later failure can still roll the sandbox back. */
  onCreated?: (sandboxId: string) => void
}

/** Volumes, RunPodSandbox (not cancelled mid-call: the runtime would finish it anyway) and /etc/hosts. */
export async function createSandboxForPod(
  client: CriClient,
  pod: PodModel,
  attempt: number,
  settings: CreateSandboxSettings,
  hooks: CreateSandboxHooks,
): Promise<SandboxContext & {ips: string[]}> {
  hooks.step?.('setting up volumes')
  const node = await nodeDownwardContext(settings.nodeMemoryBytes, settings.podDirRoot)
  await setUpVolumes(pod, settings.podDirRoot, {...node, podIPs: []})
  const config = generatePodSandboxConfig(pod, {
    attempt,
    logsRoot: settings.logsRoot,
    hostResolvConf: settings.hostResolvConf,
    podDirRoot: settings.podDirRoot,
  })
  const runtimeHandler = settings.runtimeHandler ?? pod.runtimeClassName ?? ''
  hooks.step?.('creating the pod sandbox')
  const created = await createPodSandbox(client, pod, config, {runtimeHandler, events: hooks.events, onCreated: hooks.onCreated})
  // Best effort: only a pod the runtime later loses reads it back (its attempt + 1).
  await recordSandboxAttempt(settings.podDirRoot, pod.uid, {id: created.sandboxId, attempt}).catch(() => {})
  const etcHostsPath = created.ips.length > 0 ? await writePodEtcHosts(settings.podDirRoot, pod, created.ips) : undefined
  const volumePaths = volumeHostPaths(pod, settings.podDirRoot)
  return {id: created.sandboxId, config, runtimeHandler, etcHostsPath, volumePaths, ips: created.ips, node}
}
