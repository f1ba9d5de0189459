/**
 * `podctl runp`: the first steps of the kubelet's SyncPod alone (volumes, createPodSandbox, the
 * managed /etc/hosts), leaving a Ready sandbox with no containers for `podctl create` to fill. The
 * sandbox carries the kubelet's labels and podctl's annotations, as one made by `run` does, so
 * kill/stopp/rmp/status treat it alike. A failure after anything was made rolls it all back.
 */
import type {CriClient} from '../../cri/client.js'
import {AlreadyExistsError, asPodctlError, InterruptedError, type PodctlError} from '../../errors.js'
import {discardEvents, type EventSink} from '../../kube/events.js'
import {podFullName, shortId} from '../../kube/helpers.js'
import type {ContainerPortModel, PodModel} from '../../manifest/model.js'
import type {Protocol} from '../../../generated/runtime/v1/api.js'
import {podWorkers} from '../workers/pod-workers.js'
import {removePodDirectory, setUpVolumes, writeEtcHosts} from '../volumes/pod-dirs.js'
import {lockPods} from '../config/pod-lock.js'
import {sandboxOwnership} from '../../kube/ownership.js'
import {withMessage} from '../core/reasons.js'
import {sandboxesByFullName} from '../kuberuntime/sandbox.js'
import {createPodSandbox, generatePodSandboxConfig, podHostname, podSandboxes} from '../kuberuntime/sandbox.js'

export interface SandboxRunSettings {
  logsRoot: string
  podDirRoot: string
  /** The host's resolv.conf, for the pod's DNS. */
  hostResolvConf: string
  /** Overrides the manifest's runtimeClassName. */
  runtimeHandler?: string
  /** crictl's port_mappings (a Pod manifest's come from its containers' ports). */
  ports?: readonly ContainerPortModel[]
  events?: EventSink
  signal?: AbortSignal
}

export interface SandboxRunResult {
  sandboxId: string
  /** name_namespace */
  pod: string
  name: string
  namespace: string
  uid: string
  attempt: number
  runtimeHandler: string
  ips: string[]
  logDirectory: string
}

/** RunPodSandbox for a pod that does not exist yet (a pod of the same name is refused, exit 8). */
export async function runSandbox(client: CriClient, pod: PodModel, settings: SandboxRunSettings): Promise<SandboxRunResult> {
  const fullName = podFullName(pod.name, pod.namespace)
  const locks = await lockPods(settings.podDirRoot, [fullName], {signal: settings.signal})
  try {
    const existing = (await sandboxesByFullName(client, [pod])).get(fullName) ?? []
    if (existing.length > 0) {
      throw new AlreadyExistsError(
        `pod "${pod.name}" already exists in namespace "${pod.namespace}" (sandbox ${shortId(existing[0].id)}); ` +
          `remove it first with: podctl rmp -f ${pod.name} -n ${pod.namespace}`,
      )
    }

    return await createWithRollback(client, pod, settings)
  } finally {
    await locks.release()
  }
}

async function createWithRollback(client: CriClient, pod: PodModel, settings: SandboxRunSettings): Promise<SandboxRunResult> {
  const events = settings.events ?? discardEvents
  const attempt = pod.attempt ?? 0
  const config = generatePodSandboxConfig(pod, {
    attempt,
    logsRoot: settings.logsRoot,
    hostResolvConf: settings.hostResolvConf,
    podDirRoot: settings.podDirRoot,
  })
  if (settings.ports && settings.ports.length > 0) {
    config.portMappings = settings.ports.map((port) => ({
      protocol: port.protocol as Protocol,
      containerPort: port.containerPort,
      hostPort: port.hostPort ?? 0,
      hostIp: port.hostIP ?? '',
    }))
  }

  const runtimeHandler = settings.runtimeHandler ?? pod.runtimeClassName ?? ''
  try {
    await setUpVolumes(pod, settings.podDirRoot)
    const created = await createPodSandbox(client, pod, config, {runtimeHandler, events})
    if (created.ips.length > 0) await writeEtcHosts(settings.podDirRoot, pod.uid, created.ips, podHostname(pod))
    // Ctrl-C while the sandbox was being made: it is not cancelled mid-call (the runtime would finish it anyway), it is rolled back.
    if (settings.signal?.aborted) throw new InterruptedError(`runp of pod ${podFullName(pod.name, pod.namespace)} was interrupted`)
    return {
      sandboxId: created.sandboxId,
      pod: podFullName(pod.name, pod.namespace),
      name: pod.name,
      namespace: pod.namespace,
      uid: pod.uid,
      attempt,
      runtimeHandler,
      ips: created.ips,
      logDirectory: config.logDirectory ?? '',
    }
  } catch (error) {
    throw await rollBack(client, pod, settings, asPodctlError(error))
  }
}

/**
 * Whatever podctl made of the pod goes (by its uid label, so a sandbox whose ID never came back goes
 * too; kube/ownership.ts, since a crictl config's uid may be another tool's pod's), and its directory.
 */
async function rollBack(client: CriClient, pod: PodModel, settings: SandboxRunSettings, failure: PodctlError): Promise<PodctlError> {
  try {
    const sandboxes = (await podSandboxes(client, pod, {cleanup: true})).filter((sandbox) => sandboxOwnership(sandbox).ours)
    const kill = {
      requestedBy: 'a rollback of podctl runp',
      cleanup: true,
      force: true,
      podDirRoot: settings.podDirRoot,
      lock: false,
    } as const
    if (sandboxes.length > 0) await podWorkers.terminate(client, `${pod.name}_${pod.namespace}`, sandboxes, kill)
    await removePodDirectory(settings.podDirRoot, pod.uid, client.runtimeEndpoint)
    return withMessage(failure, `${failure.message} (rolled back)`)
  } catch (error) {
    return withMessage(
      failure,
      `${failure.message}; rolling back failed (${asPodctlError(error).message}): ` +
        `remove the pod with: podctl rmp -f ${pod.name} -n ${pod.namespace}`,
    )
  }
}
