/**
 * `podctl debug POD`: a debug container added to the pod's running sandbox through the path of
 * `podctl create` (run/add-container.ts: the kubelet's startContainer, the pod's labels, log
 * directory and /etc/hosts), the way `kubectl debug --target` adds an ephemeral container: in the
 * pod's network and IPC namespaces and, with a target, in the target container's PID namespace (CRI
 * NamespaceMode TARGET with target_id), so `ps` sees the target's processes even when its image has
 * no shell. It carries the debug mark and this session (marks.ts), so a killed session's container is
 * removed later (reap.ts).
 */

import type {CriClient} from '../cri/client.js'
import {NotFoundError, RuntimeError} from '../errors.js'
import type {Container, PodSandbox} from '../../generated/runtime/v1/api.js'
import {podFullName, shortId} from '../kube/helpers.js'
import {containerName} from '../kube/labels.js'
import type {ContainerModel, NamespaceOptionsModel} from '../manifest/model.js'
import {DEFAULT_TERMINATION_MESSAGE_PATH} from '../manifest/pod-fields.js'
import {addContainer, type AddContainerSettings, type AddedContainer} from '../kubelet/run/add-container.js'
import {removeOneContainer} from '../kubelet/kuberuntime/container-ops.js'
import {removeContainerLogLinks} from '../kubelet/kuberuntime/container-logs-links.js'
import {debugMarks, debugNameSuffix} from './marks.js'

export interface DebugContainerRequest {
  image: string
  /** --target: the container whose PID namespace the debug container joins. */
  target?: string
  /** --container: its name; default debugger-<5 random letters>, as kubectl debug names it. */
  name?: string
  /** The command; empty runs the image's own (a shell, for a debug image). */
  command: readonly string[]
  interactive: boolean
  tty: boolean
  /** For people, on the container: `podctl debug web --target main`. */
  description: string
  /** --keep: the container outlives the session, so it carries none (no reaper removes it). */
  keep?: boolean
}

export type DebugContainerSettings = Omit<AddContainerSettings, 'start' | 'name'>

/** Creates and starts the debug container in the pod's newest sandbox. */
export async function startDebugContainer(
  client: CriClient,
  sandbox: PodSandbox,
  request: DebugContainerRequest,
  settings: DebugContainerSettings,
): Promise<AddedContainer> {
  const targetId = request.target === undefined ? undefined : await runningContainerId(client, sandbox, request.target)
  const container = debugContainerModel(request, targetId)
  const input = {form: 'manifest' as const, container, volumes: [], source: '<podctl debug>'}
  return addContainer(client, sandbox, input, {...settings, start: true})
}

/** Kills and removes a debug container with its log file and /var/log/containers link; one already gone is fine. */
export async function removeDebugContainer(client: CriClient, containerId: string): Promise<void> {
  const [container] = (await client.runtime('listContainers', {filter: {id: containerId}}, {cleanup: true})).containers
  if (container) await removeWithLogs(client, container)
}

/** RemoveContainer (killed first), its log file, and the link startContainer made for it: nothing of it stays. */
export async function removeWithLogs(client: CriClient, container: Container): Promise<void> {
  await removeOneContainer(client, container, {force: true})
  await removeContainerLogLinks([container])
}

/** The kubelet's container model of the debug container (kubectl debug's ephemeral container, as one node has it). */
export function debugContainerModel(request: DebugContainerRequest, targetId?: string): ContainerModel {
  const marks = debugMarks('container', request.description, {session: !request.keep})
  // Like kubectl's ephemeral container: the pod's network and IPC; the target's PID namespace when one is named.
  const namespaceOptions: NamespaceOptionsModel | undefined = targetId ? {network: 'POD', pid: 'TARGET', ipc: 'POD', targetId} : undefined
  return {
    name: request.name ?? `debugger-${debugNameSuffix()}`,
    image: request.image,
    command: [...request.command],
    args: [],
    env: [],
    ports: [],
    resources: {limits: {}, requests: {}},
    lifecycle: {},
    volumeMounts: [],
    terminationMessagePath: DEFAULT_TERMINATION_MESSAGE_PATH,
    terminationMessagePolicy: 'File',
    // stdinOnce: the process sees the end of its stdin when the attach ends, as kubectl debug -i has it.
    stdin: request.interactive,
    stdinOnce: request.interactive,
    tty: request.tty,
    ...(namespaceOptions ? {namespaceOptions} : {}),
    extraLabels: marks.labels,
    extraAnnotations: marks.annotations,
  }
}

/** The ID of the running container `name` of the sandbox; NotFound names the ones there are. */
async function runningContainerId(client: CriClient, sandbox: PodSandbox, name: string): Promise<string> {
  const {containers} = await client.runtime('listContainers', {filter: {podSandboxId: sandbox.id}})
  const named = containers.filter((container) => containerName(container) === name)
  const running = named.find((container) => container.state === 'CONTAINER_RUNNING')
  if (running) return running.id
  const pod = podFullName(sandbox.metadata?.name ?? '', sandbox.metadata?.namespace ?? '')
  if (named.length > 0) {
    const id = shortId(named[0].id)
    throw new RuntimeError(`--target ${name}: container ${name} (${id}) of pod ${pod} is not running; its PID namespace is gone`)
  }

  const names = [...new Set(containers.map((container) => containerName(container)))].filter(Boolean)
  const has = names.length > 0 ? `; it has ${names.join(', ')}` : '; it has no containers'
  throw new NotFoundError(`--target ${name}: pod ${pod} has no container "${name}"${has}`)
}
