/**
 * Nothing left behind: the debug containers and debug pods of `podctl debug` sessions that are gone
 * (SIGKILL, a lost SSH session, a reboot) are removed by the next `podctl debug` and by `podctl gc`.
 * Only what podctl can prove it made (kube/ownership.ts), that carries the debug mark (marks.ts),
 * and whose session is provably gone (kube/session.ts: not `alive`, not `unknown`) is taken.
 */
import type {CriClient} from '../cri/client.js'
import type {Container, PodSandbox} from '../../generated/runtime/v1/api.js'
import {podFullName, shortId} from '../kube/helpers.js'
import {containerName, PodLabel} from '../kube/labels.js'
import {hasPodctlContainerMark, sandboxOwnership} from '../kube/ownership.js'
import {currentVantage, describeSession, isOrphaned, sessionOf, type Vantage} from '../kube/session.js'
import {podWorkers} from '../kubelet/workers/pod-workers.js'
import {removeWithLogs} from './debug-container.js'
import {isDebugObject} from './marks.js'

export interface ReapDebugOptions {
  podDirRoot: string
  podLogsRoot: string
  /** Who reaps ("podctl gc", "podctl debug"). */
  requestedBy: string
  /** Say what would go; remove nothing. */
  dryRun?: boolean
  /** Only this namespace's (gc -n). */
  namespace?: string
}

export interface ReapedDebugObject {
  /** Container or sandbox ID. */
  id: string
  /** The container's name, or the pod's name_namespace. */
  name: string
  /** The pod, name_namespace. */
  pod: string
  /** Whose session it was: `pid 1234 (podctl debug web --target main)`. */
  session: string
}

export interface ReapedDebug {
  containers: ReapedDebugObject[]
  pods: ReapedDebugObject[]
  failures: Array<{object: string; message: string}>
}

/** Debug containers of gone sessions that podctl made. */
export function goneDebugContainers(containers: readonly Container[], vantage: Vantage = currentVantage()): Container[] {
  return containers.filter((c) => isDebugObject(c, 'container') && hasPodctlContainerMark(c) && isOrphaned(c, vantage))
}

/** Sandboxes of debug pods of gone sessions that podctl made, by pod (name_namespace). */
export function goneDebugPods(sandboxes: readonly PodSandbox[], vantage: Vantage = currentVantage()): Map<string, PodSandbox[]> {
  const pods = new Map<string, PodSandbox[]>()
  for (const sandbox of sandboxes) {
    if (!isDebugObject(sandbox, 'node') || !sandboxOwnership(sandbox).ours || !isOrphaned(sandbox, vantage)) continue
    const fullName = podFullName(sandbox.metadata?.name ?? '', sandbox.metadata?.namespace ?? '')
    pods.set(fullName, [...(pods.get(fullName) ?? []), sandbox])
  }

  return pods
}

/** Removes (or with dryRun, lists) what gone debug sessions left; a failure is kept and the rest goes on. */
export async function reapGoneDebugSessions(client: CriClient, options: ReapDebugOptions): Promise<ReapedDebug> {
  const [{containers}, {items}] = await Promise.all([
    client.runtime('listContainers', {filter: {}}),
    client.runtime('listPodSandbox', {filter: undefined}),
  ])
  const vantage = currentVantage()
  const inNamespace = (namespace: string | undefined) => options.namespace === undefined || namespace === options.namespace
  const result: ReapedDebug = {containers: [], pods: [], failures: []}
  const attempt = async (object: string, remove: () => Promise<unknown>, done: () => void) => {
    try {
      if (!options.dryRun) await remove()
      done()
    } catch (error) {
      result.failures.push({object, message: (error as Error).message})
    }
  }

  const containerRemovals = goneDebugContainers(containers, vantage)
    .filter((container) => inNamespace(container.labels[PodLabel.namespace]))
    .map(async (container) => {
      const reaped = describeContainer(container)
      const object = `debug container ${reaped.name} (${shortId(container.id)}) of pod ${reaped.pod}`
      await attempt(
        object,
        () => removeWithLogs(client, container),
        () => result.containers.push(reaped),
      )
    })
  const podKills = [...goneDebugPods(items, vantage)]
    .filter(([, sandboxes]) => inNamespace(sandboxes[0].metadata?.namespace))
    .map(async ([fullName, sandboxes]) => {
      const reaped = {id: sandboxes[0].id, name: fullName, pod: fullName, session: sessionText(sandboxes[0])}
      const kill = {podDirRoot: options.podDirRoot, podLogsRoot: options.podLogsRoot, force: true, forget: true, cleanup: true}
      const requestedBy = `${options.requestedBy}: its debug session is gone`
      const terminate = () => podWorkers.terminate(client, fullName, sandboxes, {...kill, requestedBy})
      await attempt(`debug pod ${fullName}`, terminate, () => result.pods.push(reaped))
    })
  await Promise.all([...containerRemovals, ...podKills])
  return result
}

function describeContainer(container: Container): ReapedDebugObject {
  const pod = podFullName(container.labels[PodLabel.name] ?? '', container.labels[PodLabel.namespace] ?? '')
  return {id: container.id, name: containerName(container), pod, session: sessionText(container)}
}

function sessionText(object: {labels: Readonly<Record<string, string>>; annotations: Readonly<Record<string, string>>}): string {
  const session = sessionOf(object)
  return session ? describeSession(session) : 'unknown'
}
