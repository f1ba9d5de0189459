/**
 * A whole `podctl debug` session: make the debug container (or debug pod), stream it to the user
 * until its process exits, and remove it, whatever ends the session (the process's exit, Ctrl-C,
 * SIGTERM, SIGHUP, an error): only --keep leaves a debug container, and then without a session
 * (the reaper leaves it alone too). First, whatever earlier sessions that were killed left behind
 * is removed (reap.ts).
 */
import type {CriClient} from '../cri/client.js'
import {RuntimeError} from '../errors.js'
import type {PodSandbox} from '../../generated/runtime/v1/api.js'
import {podFullName, shortId} from '../kube/helpers.js'
import type {AddedContainer} from '../kubelet/run/add-container.js'
import {type DebugContainerRequest, type DebugContainerSettings, removeDebugContainer, startDebugContainer} from './debug-container.js'
import {type DebugNodeRequest, type DebugNodeSettings, removeDebugPod, startDebugPod} from './debug-node.js'
import {reapGoneDebugSessions} from './reap.js'
import {runDebugSession} from './session.js'

export interface DebugOutcome {
  exitCode: number
  /** The debug container (in the pod, or of the debug pod). */
  containerId: string
  /** The pod, name_namespace. */
  pod: string
  /** Whether the debug container is still there (--keep). */
  kept: boolean
}

/** Removes what killed debug sessions left; a failure here never stops a new session. */
export async function reapBeforeDebug(client: CriClient, roots: {podDirRoot: string; podLogsRoot: string}): Promise<void> {
  await reapGoneDebugSessions(client, {...roots, requestedBy: 'podctl debug'}).catch(() => undefined)
}

/** `debug POD`: the debug container in `sandbox` (the pod's newest), its session, its removal unless `keep`. */
export async function debugInPod(
  client: CriClient,
  sandbox: PodSandbox,
  request: DebugContainerRequest & {keep: boolean},
  settings: DebugContainerSettings & {signal: AbortSignal},
): Promise<DebugOutcome> {
  const added: AddedContainer = await startDebugContainer(client, sandbox, request, settings)
  let exitCode: number
  try {
    exitCode = await runDebugSession(client, added.containerId, {...request, signal: settings.signal})
  } finally {
    if (!request.keep) await removeDebugContainer(client, added.containerId)
  }

  return {exitCode, containerId: added.containerId, pod: added.pod, kept: request.keep}
}

/** `debug node`: the debug pod, its session, and the pod killed and forgotten. */
export async function debugNode(client: CriClient, request: DebugNodeRequest, settings: DebugNodeSettings): Promise<DebugOutcome> {
  const {pod, containerId} = await startDebugPod(client, request, settings)
  let exitCode: number
  try {
    exitCode = await runDebugSession(client, containerId, {...request, signal: settings.signal})
  } finally {
    await removeDebugPod(client, pod, settings)
  }

  return {exitCode, containerId, pod: podFullName(pod.name, pod.namespace), kept: false}
}

/** The newest ready sandbox of the pod: a debug container goes only into a running pod. */
export function readySandbox(sandboxes: readonly PodSandbox[]): PodSandbox {
  const ready = sandboxes.find((sandbox) => sandbox.state === 'SANDBOX_READY')
  if (ready) return ready
  const newest = sandboxes[0]
  const name = podFullName(newest.metadata?.name ?? '', newest.metadata?.namespace ?? '')
  throw new RuntimeError(`pod ${name} (sandbox ${shortId(newest.id)}) is not ready; a debug container goes only into a running pod`)
}
