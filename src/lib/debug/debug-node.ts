/**
 * `podctl debug node`: kubectl debug node/…'s pod on this node, run the way `podctl run` runs a pod
 * (run-pods.ts, its image pull, rollback and records): privileged, in the host's PID, network and IPC
 * namespaces, the host's `/` mounted at /host, restartPolicy Never. Its sandbox carries the debug
 * mark and this session (marks.ts); the pod is killed and forgotten when the session ends, or later
 * by reap.ts when the session was killed.
 */
import {hostname} from 'node:os'

import type {CriClient} from '../cri/client.js'
import {InterruptedError, RuntimeError} from '../errors.js'
import type {EventSink} from '../kube/events.js'
import {podFullName} from '../kube/helpers.js'
import type {PodModel} from '../manifest/model.js'
import {nodeSettings} from '../kubelet/core/node-settings.js'
import {podSandboxes} from '../kubelet/kuberuntime/sandbox.js'
import {loadPodsToRun} from '../kubelet/volumes/pod-objects.js'
import {runPods} from '../kubelet/run/run-pods.js'
import {describeFailure} from '../kubelet/run/run-result.js'
import {podWorkers} from '../kubelet/workers/pod-workers.js'
import {debugMarks, debugNameSuffix} from './marks.js'

export interface DebugNodeRequest {
  image: string
  namespace: string
  command: readonly string[]
  interactive: boolean
  tty: boolean
  description: string
}

export interface DebugNodeSettings {
  logsRoot: string
  podDirRoot: string
  claimsRoot: string
  events: EventSink
  signal: AbortSignal
  /** Epoch ms: the deadline of the start (image pull, sandbox, container). */
  deadline?: number
}

export interface StartedDebugPod {
  pod: Pick<PodModel, 'name' | 'namespace' | 'uid'>
  containerId: string
}

/** The container's name in the debug pod, as kubectl debug node/… names it. */
export const NODE_DEBUG_CONTAINER = 'debugger'

/** kubectl debug node/…'s pod spec, with the image, command and streams asked for. */
export function nodeDebugManifest(request: DebugNodeRequest, node = hostname()): Record<string, unknown> {
  const command = request.command.length > 0 ? {command: [...request.command]} : {}
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name: `node-debugger-${dnsLabel(node)}-${debugNameSuffix()}`, namespace: request.namespace},
    spec: {
      hostPID: true,
      hostNetwork: true,
      hostIPC: true,
      restartPolicy: 'Never',
      // Killed at once when the session ends: nothing in it has anything to save.
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: NODE_DEBUG_CONTAINER,
          image: request.image,
          ...command,
          stdin: request.interactive,
          stdinOnce: request.interactive,
          tty: request.tty,
          securityContext: {privileged: true},
          volumeMounts: [{name: 'host-root', mountPath: '/host'}],
        },
      ],
      volumes: [{name: 'host-root', hostPath: {path: '/'}}],
    },
  }
}

/** Runs the debug pod until its container has started; rolled back (nothing left) when the start fails. */
export async function startDebugPod(client: CriClient, request: DebugNodeRequest, settings: DebugNodeSettings): Promise<StartedDebugPod> {
  // Through run -f's loader, as a manifest on stdin: the pod gets every default a manifest's pod gets.
  const manifest = JSON.stringify(nodeDebugManifest(request))
  const input = {stdin: async () => manifest, stdinSource: '<podctl debug node>'}
  const {pods} = await loadPodsToRun({filename: ['-'], 'claims-root': settings.claimsRoot}, undefined, input)
  // Added after loading: session labels are not label values a manifest may hold (pid:[…]).
  const marks = debugMarks('node', request.description)
  const pod = {...pods[0], labels: {...pods[0].labels, ...marks.labels}, annotations: {...pods[0].annotations, ...marks.annotations}}
  const node = await nodeSettings({logsRoot: settings.logsRoot, podDirRoot: settings.podDirRoot, settleMs: 0})
  const run = {...node, wait: 'none' as const, replace: false, keepOnFailure: false, removeLogsOnRollback: true, remove: false}
  const deps = {events: settings.events, signal: settings.signal, parallel: 1, refusedPullRetries: 0}
  const [outcome] = await runPods(client, [pod], {...run, deadline: settings.deadline}, deps)
  if (outcome.failure) throw describeFailure(outcome)
  const container = outcome.result.containers.find((entry) => entry.name === NODE_DEBUG_CONTAINER && entry.id !== '')
  if (!container) {
    await removeDebugPod(client, pod, settings)
    if (settings.signal.aborted) throw new InterruptedError('debug node interrupted; its pod was removed')
    throw new RuntimeError(`pod ${podFullName(pod.name, pod.namespace)}: its debug container did not start; the pod was removed`)
  }

  return {pod, containerId: container.id}
}

/** Kills the debug pod at once and forgets it (its directory, record and logs go with it). */
export async function removeDebugPod(
  client: CriClient,
  pod: Pick<PodModel, 'name' | 'namespace' | 'uid'>,
  settings: Pick<DebugNodeSettings, 'logsRoot' | 'podDirRoot'>,
): Promise<void> {
  const sandboxes = await podSandboxes(client, pod, {cleanup: true})
  const options = {podDirRoot: settings.podDirRoot, podLogsRoot: settings.logsRoot, force: true, forget: true, cleanup: true}
  await podWorkers.terminate(client, podFullName(pod.name, pod.namespace), sandboxes, {...options, requestedBy: 'podctl debug node'})
}

/** The host's name as a DNS label (pod names are DNS subdomains; kubectl uses the node's name). */
function dnsLabel(name: string): string {
  const label = name
    .toLowerCase()
    .replaceAll(/[^a-z\d-]+/g, '-')
    .replaceAll(/^-+|-+$/g, '')
  return (label || 'node').slice(0, 30)
}
