/**
 * One SyncPod pass for a pod podctl made, the kubelet's way: observe (pod-observe.ts), compute the
 * actions (pod-actions.ts), carry them out — kill containers whose definition changed or whose
 * liveness/startup probe failed, start init containers, sidecars and app containers that should
 * run (with the crash back-off, kept in the pod directory so it outlives one `sync`), stop the
 * sandbox of a finished pod, recreate a dead or changed sandbox with attempt + 1 (recreate-pod.ts),
 * enforce activeDeadlineSeconds. Every step is an event; a failure of one step is reported, never half-made.
 */
import {existsSync} from 'node:fs'

import type {CriClient} from '../../cri/client.js'
import {asPodctlError, NotFoundError, type PodctlError} from '../../errors.js'
import type {Container, ContainerStatus, PodSandbox} from '../../../generated/runtime/v1/api.js'
import type {BackOff} from '../../kube/backoff.js'
import {type EventSink, normalEvent, type PodEvent, warningEvent} from '../../kube/events.js'
import {podDescription, podFullName, shortId, stableKey} from '../../kube/helpers.js'
import type {ContainerModel, PodModel} from '../../manifest/model.js'
import {sleep} from '../../util/concurrency.js'
import {nanosToMs} from '../../util/time.js'
import {ensureImageOptions, type ImageEnsurer, restartCountFromLogs, startContainer} from './container.js'
import {removeOneContainer} from './container-ops.js'
import {readBackOff, writeBackOff} from '../config/desired-state.js'
import {killContainer, killPod} from './kill.js'
import {
  type ComputeOptions,
  computePodActions,
  type ContainerToStart,
  isSidecar,
  type ObservedPod,
  type ObservedSandbox,
  type PodActions,
} from './pod-actions.js'
import {createTerminationMessageFile, etcHostsPath, volumeHostPaths} from '../volumes/pod-dirs.js'
import {observePod} from './pod-observe.js'
import {PodFailedError} from '../core/reasons.js'
import {finishRecreation, lostPodSuccessor, recreatePodSandbox, type Recreation, rollBackRecreation} from './recreate-pod.js'
import {generatePodSandboxConfig, podLogDirectory, type SandboxContext} from './sandbox.js'
import {awaitSidecarStartup} from './sidecars.js'
import {crashBackOff, firstOfStep, ranPastBackOff, restartDelay} from './crash-backoff.js'

/** How long one pass waits for an init container (or a sidecar) before it leaves the rest to the next pass. */
const INIT_WAIT_MS = 60_000
const INIT_POLL_MS = 200
/** Guard against a pass that never settles (init containers that keep changing). */
const MAX_STEPS = 32

export interface SyncSettings {
  logsRoot: string
  podDirRoot: string
  hostResolvConf: string
  nodeMemoryBytes: number
  runtimeHandler?: string
  /** Epoch ms: the deadline of this pass (--timeout). */
  deadline?: number
}

export interface SyncDeps {
  client: CriClient
  images: ImageEnsurer
  events: EventSink
  signal: AbortSignal
  /** Shared across passes in --watch; restored from and saved to the pod directory. */
  backOff?: BackOff
  probeFailures?: ComputeOptions['probeFailures']
  /** A ListContainers result to reuse for the first observation. */
  containers?: readonly Container[]
  /** Told before a container is killed (the supervisor stops its probes first). */
  onKill?: (containerId: string) => void
  /** Kill the pod and start it again with attempt + 1 (sync -f with a change the sandbox cannot absorb). */
  recreate?: boolean
  /**
   * Asked before a sandbox is recreated, with the sandboxes as this pass found them (not as an older
   * listing had them): false leaves the pod as it is (a supervisor gave up on a pod someone keeps stopping).
   */
  mayRecreate?: (found: readonly ObservedSandbox[]) => boolean
  /** Told when a recreation made a sandbox (RunPodSandbox answered), even if the pass then rolls it back. */
  onSandboxMade?: (sandboxId: string) => void
  /** The sandbox `run` just made (its IPs and node, for env and hooks): the containers are started in it. */
  sandbox?: SandboxContext
  /** What the pass is doing now (for a spinner). */
  onStep?: (text: string) => void
  now?: () => number
}

export interface PodSyncResult {
  pod: string
  namespace: string
  uid: string
  /** What the pass did, one line each ("started app (restart 2)", "killed web: definition changed", ...). */
  did: string[]
  /** The soonest a container in back-off may be restarted (epoch ms), when one waits. */
  backOffUntil?: number
  /** How many of `did` only say a container waits out its back-off: a pass that did nothing else changed nothing. */
  backOffWaits?: number
  failure?: PodctlError
  /** The pod's recorded termination was carried out instead of a sync (workers/pod-workers.ts): it is gone. */
  terminated?: true
}

/** One pass for one pod: observe, compute, act; repeated while init containers move the pod along. */
export async function syncPod(
  pod: PodModel,
  sandboxes: readonly PodSandbox[],
  settings: SyncSettings,
  deps: SyncDeps,
): Promise<PodSyncResult> {
  const now = deps.now ?? Date.now
  const backOff = deps.backOff ?? crashBackOff(now)
  if (!deps.backOff) backOff.restore(await readBackOff(settings.podDirRoot, pod.uid))
  const result: PodSyncResult = {pod: pod.name, namespace: pod.namespace, uid: pod.uid, did: []}
  const ctx: PassContext = {
    pod: await lostPodSuccessor(pod, sandboxes, settings, deps),
    settings,
    deps,
    backOff,
    result,
    now,
    made: deps.sandbox,
  }
  try {
    let containers = deps.containers
    let current = [...sandboxes]
    if (deps.recreate) current = await recreate(ctx, current)
    for (let step = 0; step < MAX_STEPS; step++) {
      const observed = await observePod(deps.client, current, {containers, signal: deps.signal})
      containers = undefined
      current = await withoutLostSandboxes(ctx, current, observed)
      const actions = computePodActions(ctx.pod, observed, {probeFailures: deps.probeFailures, now: now()})
      if (actions.createSandbox && deps.mayRecreate?.(observed.sandboxes) === false) break
      const next = await act(ctx, actions, current)
      if (next === 'done') break
      current = next
    }

    if (ctx.recreation) {
      await finishRecreation(deps.client, ctx.recreation, settings.podDirRoot)
      result.did.unshift(`recreated the pod sandbox (attempt ${ctx.recreation.attempt})`)
    }
  } catch (error) {
    const {events} = deps
    result.failure = ctx.recreation
      ? await rollBackRecreation(deps.client, ctx.recreation, error, {events, podDirRoot: settings.podDirRoot})
      : asPodctlError(error)
  }

  await writeBackOff(settings.podDirRoot, ctx.pod.uid, backOff.snapshot()).catch(() => {})
  return result
}

/**
 * The sandboxes the runtime still has of those listed before the pass (observePod leaves out one it no
 * longer knows). When none is left the pod was lost, not changed: it comes back as lostPodSuccessor says.
 */
async function withoutLostSandboxes(ctx: PassContext, listed: PodSandbox[], observed: ObservedPod): Promise<PodSandbox[]> {
  const kept = listed.filter((sandbox) => observed.sandboxes.some((seen) => seen.id === sandbox.id))
  if (kept.length === listed.length) return listed
  if (kept.length === 0) ctx.pod = await lostPodSuccessor(ctx.pod, kept, ctx.settings, {...ctx.deps, sandbox: ctx.made})
  return kept
}

interface PassContext {
  pod: PodModel
  settings: SyncSettings
  deps: SyncDeps
  backOff: BackOff
  result: PodSyncResult
  now: () => number
  /** The sandbox this pass knows more of than a listing says (made by run or by a recreation). */
  made?: SandboxContext
  /** The recreation this pass made, completed or rolled back at its end. */
  recreation?: Recreation
}

/** Carries out one set of actions; returns the sandboxes to observe again, or 'done' when the pass is over. */
async function act(ctx: PassContext, actions: PodActions, sandboxes: PodSandbox[]): Promise<PodSandbox[] | 'done'> {
  const {pod, deps, result} = ctx
  const object = podFullName(pod.name, pod.namespace)
  if (actions.killReason === 'DeadlineExceeded') {
    if (!actions.killPod) return 'done'
    deps.events(warningEvent('DeadlineExceeded', 'Pod was active on the node longer than the specified deadline', object))
    await killPod(deps.client, sandboxes, {events: deps.events, keep: true, signal: deps.signal})
    result.did.push('killed the pod: activeDeadlineSeconds exceeded (DeadlineExceeded)')
    return 'done'
  }

  if (actions.createSandbox) return recreate(ctx, sandboxes)
  if (actions.killPod) {
    await killPod(deps.client, sandboxes, {events: deps.events, keep: true, signal: deps.signal})
    const why =
      actions.killReason === 'InitFailed' ? 'an init container failed and restartPolicy is Never' : 'every container has terminated'
    deps.events(normalEvent('SandboxStopped', `Stopped the pod sandbox: ${why}`, object))
    result.did.push(`stopped the pod sandbox: ${why}`)
    return 'done'
  }

  for (const kill of actions.containersToKill) {
    const {containers} = await deps.client.runtime('listContainers', {filter: {id: kill.id}}, {signal: deps.signal})
    if (!containers[0]) continue
    deps.onKill?.(kill.id)
    // The kubelet's Killing message says why ("Container app failed liveness probe, will be restarted").
    const events: EventSink = (event: PodEvent) => deps.events(event.reason === 'Killing' ? {...event, message: kill.message} : event)
    await killContainer(deps.client, containers[0], {events, pod: object, signal: deps.signal, gracePeriodSeconds: kill.gracePeriodSeconds})
    result.did.push(`killed ${kill.name}: ${kill.message}`)
  }

  const sandboxId = actions.sandboxId
  if (!sandboxId) return 'done'
  const sandbox = sandboxContext(
    ctx,
    sandboxes.find((candidate) => candidate.id === sandboxId)!,
  )
  // Init containers in order: a regular one runs to completion before the pass looks again; a sidecar only has to start.
  let again = false
  for (const start of actions.initContainersToStart) {
    const spec = pod.initContainers.find((container) => container.name === start.name)!
    const id = await startWithBackOff(ctx, sandbox, spec, start)
    if (id === undefined) {
      if (isSidecar(spec)) continue
      break
    }

    again = true
    await waitForInit(ctx, id, isSidecar(spec) ? 'started' : 'exited')
  }

  for (const start of actions.containersToStart) {
    const spec = pod.containers.find((container) => container.name === start.name)!
    await startWithBackOff(ctx, sandbox, spec, start)
  }

  if (actions.waitingForInit) {
    await waitForInitByName(ctx, sandboxId, actions.waitingForInit)
    return sandboxes
  }

  return again ? sandboxes : 'done'
}

/**
 * A dead or changed sandbox: the kubelet kills the pod and creates its sandbox again with attempt + 1,
 * keeping its volumes (recreate-pod.ts); the same pass then starts its containers in it.
 */
async function recreate(ctx: PassContext, sandboxes: PodSandbox[]): Promise<PodSandbox[]> {
  const {settings, deps} = ctx
  if (ctx.recreation) throw new PodFailedError(`the new sandbox of pod ${podFullName(ctx.pod.name, ctx.pod.namespace)} is not ready`)
  const made = await recreatePodSandbox(deps.client, ctx.pod, sandboxes, settings, {
    events: deps.events,
    step: deps.onStep,
    backOff: ctx.backOff,
    podDirRoot: settings.podDirRoot,
    onCreated: deps.onSandboxMade,
  })
  ctx.recreation = made.recreation
  ctx.pod = made.recreation.pod
  ctx.made = made.recreation.sandbox
  ctx.result.uid = ctx.pod.uid
  return made.sandboxes
}

/** The SandboxContext of a sandbox that exists: its config regenerated from the recorded pod. */
function sandboxContext(ctx: PassContext, sandbox: PodSandbox): SandboxContext {
  const {pod, settings} = ctx
  if (ctx.made?.id === sandbox.id) return ctx.made
  const config = generatePodSandboxConfig(pod, {
    attempt: sandbox.metadata?.attempt ?? 0,
    logsRoot: settings.logsRoot,
    hostResolvConf: settings.hostResolvConf,
    podDirRoot: settings.podDirRoot,
  })
  const hosts = etcHostsPath(settings.podDirRoot, pod.uid)
  return {
    id: sandbox.id,
    config,
    runtimeHandler: settings.runtimeHandler ?? pod.runtimeClassName ?? '',
    etcHostsPath: existsSync(hosts) ? hosts : undefined,
    volumePaths: volumeHostPaths(pod, settings.podDirRoot),
  }
}

/**
 * The kubelet's doBackOff, then startContainer: a container is restarted only once the crash back-off
 * window from the moment its newest exited instance finished (start.backOffFrom) has passed; otherwise
 * a BackOff event and undefined. A container that ran 10 minutes starts its ladder over.
 */
async function startWithBackOff(
  ctx: PassContext,
  sandbox: SandboxContext,
  container: ContainerModel,
  start: ContainerToStart,
): Promise<string | undefined> {
  const {pod, deps, settings, result, backOff} = ctx
  const {previous, backOffFrom: exited} = start
  const object = `${podFullName(pod.name, pod.namespace)}/${container.name}`
  if (exited && exited.finishedAtMs !== null) {
    const key = stableKey(pod, container)
    if (ranPastBackOff(exited)) backOff.reset(key)
    const delay = restartDelay(backOff, key, exited, ctx.now())
    if (delay > 0) {
      const described = podDescription(pod.name, pod.namespace, pod.uid)
      if (firstOfStep(backOff, key, exited.finishedAtMs))
        deps.events(warningEvent('BackOff', `Back-off restarting failed container ${container.name} in pod ${described}`, object))
      const until = ctx.now() + delay
      result.backOffUntil = Math.min(result.backOffUntil ?? until, until)
      result.backOffWaits = (result.backOffWaits ?? 0) + 1
      result.did.push(`${container.name} in back-off for ${Math.ceil(delay / 1000)} s (exited ${exited.exitCode})`)
      return undefined
    }

    backOff.next(key, exited.finishedAtMs)
  }

  const restartCount = previous
    ? start.restartCount
    : Math.max(start.restartCount, await restartCountFromLogs(`${podLogDirectory(pod, settings.logsRoot)}/${container.name}`))
  deps.onStep?.(`starting ${start.type === 'init' ? 'init container' : 'container'} ${container.name}`)
  const started = await startContainer(deps.client, pod, container, sandbox, {
    type: start.type,
    attempt: restartCount,
    image: deps.images.ensureImage(ensureImageOptions(pod, container, sandbox, {deadline: settings.deadline, signal: deps.signal})),
    nodeMemoryBytes: settings.nodeMemoryBytes,
    terminationMessageFile: (name) => createTerminationMessageFile(settings.podDirRoot, pod.uid, name),
    events: deps.events,
    deadline: settings.deadline,
    podIP: sandbox.ips?.[0],
    signal: deps.signal,
    images: deps.images,
    imagePull: {deadline: settings.deadline},
  })
  const why = previous ? `restart ${restartCount}` : 'new'
  result.did.push(`started ${start.type === 'init' ? 'init container ' : ''}${container.name} (${why})`)
  if (previous) await pruneOlder(ctx, sandbox.id, container.name, started.containerId)
  return started.containerId
}

/**
 * Keeps the new instance and the newest exited one (the last termination state); older exited instances
 * go with their log files and links, as the kubelet's container GC (MaxPerPodContainer 1) removes them.
 */
async function pruneOlder(ctx: PassContext, sandboxId: string, name: string, keepId: string): Promise<void> {
  const {client, signal} = ctx.deps
  const {containers} = await client.runtime('listContainers', {filter: {podSandboxId: sandboxId}}, {signal})
  const exited = containers
    .filter((container) => container.metadata?.name === name && container.id !== keepId && container.state === 'CONTAINER_EXITED')
    .sort((a, b) => Number(BigInt(b.createdAt) - BigInt(a.createdAt)))
    .slice(1)
  await Promise.all(exited.map(async (container) => removeOneContainer(client, container))).catch(() => {})
}

async function waitForInitByName(ctx: PassContext, sandboxId: string, name: string): Promise<void> {
  const {containers} = await ctx.deps.client.runtime('listContainers', {filter: {podSandboxId: sandboxId}}, {signal: ctx.deps.signal})
  const running = containers.find((container) => container.metadata?.name === name && container.state !== 'CONTAINER_EXITED')
  if (running) await waitForInit(ctx, running.id, 'exited')
}

/** A sidecar with a startupProbe has started once its probe succeeds (sidecars.ts); without one, once it runs. */
async function sidecarStartup(ctx: PassContext, containerId: string, status: ContainerStatus, until: number): Promise<void> {
  const spec = ctx.pod.initContainers.find((container) => container.name === status.metadata?.name)
  if (!spec?.startupProbe) return
  ctx.deps.onStep?.(`waiting for sidecar ${spec.name} to start`)
  const startedAtMs = status.startedAt && status.startedAt !== '0' ? nanosToMs(status.startedAt) : Date.now()
  const {client, events, signal} = ctx.deps
  const podSandboxId = ctx.made?.id ?? ''
  const podIP = ctx.made?.ips?.[0]
  await awaitSidecarStartup(client, ctx.pod, spec, {
    containerId,
    startedAtMs,
    podSandboxId,
    podIP,
    events,
    signal,
    until,
    pollMs: INIT_POLL_MS,
  })
}

/** Polls the container until it has exited (or started, for a sidecar), within the pass's deadline. */
async function waitForInit(ctx: PassContext, containerId: string, until: 'started' | 'exited'): Promise<void> {
  const {client, signal} = ctx.deps
  const end = Math.min(ctx.settings.deadline ?? Number.POSITIVE_INFINITY, Date.now() + INIT_WAIT_MS)
  let told = false
  while (Date.now() < end) {
    const status = await client
      .runtime('containerStatus', {containerId, verbose: false}, {signal})
      .then((response) => response.status)
      .catch((error: unknown) => {
        if (error instanceof NotFoundError) return
        throw error
      })
    if (!status || status.state === 'CONTAINER_EXITED') return
    if (until === 'started' && status.state === 'CONTAINER_RUNNING') return sidecarStartup(ctx, containerId, status, end)
    if (!told) ctx.deps.onStep?.(`waiting for init container ${status.metadata?.name ?? shortId(containerId)}`)
    told = true
    await sleep(INIT_POLL_MS, signal)
  }
}
