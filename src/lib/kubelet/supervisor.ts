/**
 * `sync --watch` and `run --supervise`: the kubelet's sync loop in the foreground. Every second one
 * ListPodSandbox and one ListContainers (containerd 1.6 has no container event stream for podctl
 * to rely on) show which pods changed; those are synced at once (reconciler.ts), the others on
 * their back-off deadline or every RESYNC_MS. A probe manager runs the pods' probes; a liveness or
 * startup failure wakes the loop. A runtime that goes away is waited for with a growing pause and
 * synced again when it is back. Ctrl-C (the signal) ends the loop cleanly.
 */
import {asPodctlError, InterruptedError, RuntimeUnreachableError} from '../errors.js'
import type {Container, PodSandbox} from '../../generated/runtime/v1/api.js'
import type {BackOff} from '../kube/backoff.js'
import {normalEvent, warningEvent} from '../kube/events.js'
import {newestFirst, podFullName} from '../kube/helpers.js'
import type {PodModel} from '../manifest/model.js'
import {settleLimit} from '../util/concurrency.js'
import {ProbeManager} from '../prober/manager.js'
import {readDesiredPod} from './desired-state.js'
import {crashBackOff, type PodSyncResult, type SyncDeps, syncPodOnce, type SyncSettings} from './reconciler.js'
import {type ContainerProbes, recordStatus, releaseStatus, type StatusProber} from './status-manager.js'
import type {SyncTarget} from './sync-pods.js'

/** How often the runtime is listed: a container exit is seen within this. */
export const WATCH_POLL_MS = 1000
/** A pod nothing happened to is synced again this often (the kubelet resyncs every minute; podctl is cheaper). */
const RESYNC_MS = 10_000
const RECONNECT_MAX_MS = 15_000

export interface SuperviseDeps extends Omit<SyncDeps, 'backOff' | 'probeFailures' | 'containers' | 'recreate' | 'onKill'> {
  parallel: number
  /** The prober (ProbeManager); none → no probes run. */
  prober?: ContainerProbes & StatusProber
  pollMs?: number
}

interface PodState {
  /** Containers handed to the prober. */
  registered: Set<string>
  fingerprint: string
  nextDue: number
  backOff: BackOff
  pod?: PodModel
}

/** What changed in one pod since the last look: its sandboxes' and containers' IDs and states. */
function fingerprint(sandboxes: readonly PodSandbox[], containers: readonly Container[]): string {
  const parts = [...sandboxes.map((s) => `${s.id}:${s.state}`), ...containers.map((c) => `${c.id}:${c.state}`)]
  return parts.sort().join(',')
}

/**
 * Runs until the signal aborts. `select` lists the pods to supervise (its own ListPodSandbox);
 * the pods' lock-free passes never overlap for one pod (one pass at a time, at most `parallel` pods).
 */
export async function superviseSelection(
  select: () => Promise<SyncTarget[]>,
  settings: Omit<SyncSettings, 'deadline'>,
  deps: SuperviseDeps,
): Promise<void> {
  const {client, events, signal} = deps
  const pollMs = deps.pollMs ?? WATCH_POLL_MS
  const states = new Map<string, PodState>()
  // Probe events (Unhealthy, ...) name the pod by its sandbox.
  const podOfSandbox = new Map<string, string>()
  const ownProber = deps.prober
    ? undefined
    : new ProbeManager({
        client,
        onEvent(event) {
          const object = `${podOfSandbox.get(event.podSandboxId) ?? event.podSandboxId}/${event.containerName}`
          events(
            event.type === 'Warning' ? warningEvent(event.reason, event.message, object) : normalEvent(event.reason, event.message, object),
          )
        },
      })
  const prober = deps.prober ?? ownProber!
  deps = {...deps, prober}
  let wake: (() => void) | undefined
  const probed = new Set<string>()
  const unsubscribe = prober.onResult((id, kind, result) => {
    probed.add(id)
    if (result === 'failure' && kind !== 'readiness') wake?.()
  })
  let reconnectMs = 0
  events(normalEvent('Supervising', `Watching pods; Ctrl-C to stop`))
  try {
    while (!signal.aborted) {
      const started = Date.now()
      try {
        const targets = await select()
        for (const target of targets) for (const sandbox of target.sandboxes) podOfSandbox.set(sandbox.id, target.fullName)
        const {containers} = await client.runtime('listContainers', {filter: {}}, {signal})
        if (reconnectMs > 0) events(normalEvent('RuntimeReady', 'The runtime answers again; syncing every pod', 'runtime'))
        if (reconnectMs > 0) for (const state of states.values()) state.nextDue = 0
        reconnectMs = 0
        await settleLimit(targets, deps.parallel, (target) => superviseOne(target, containers, {states, probed}, settings, deps))
      } catch (error) {
        if (signal.aborted) break
        const failure = asPodctlError(error)
        if (failure instanceof RuntimeUnreachableError) {
          reconnectMs = Math.min(Math.max(pollMs, reconnectMs * 2), RECONNECT_MAX_MS)
          events(warningEvent('RuntimeUnavailable', `${failure.message}; trying again in ${Math.round(reconnectMs / 1000)}s`, 'runtime'))
        } else {
          events(warningEvent('SyncFailed', failure.message, 'supervisor'))
        }
      }

      const pause = Math.max(reconnectMs, pollMs - (Date.now() - started), 50)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pause)
        wake = () => {
          clearTimeout(timer)
          resolve()
        }

        signal.addEventListener('abort', wake, {once: true})
      })
      wake = undefined
    }
  } finally {
    unsubscribe()
    await ownProber?.stop()
    // The pods are no longer supervised: status says so again.
    await Promise.all([...states.values()].map((state) => state.pod && releaseStatus(settings.podDirRoot, state.pod.uid)))
  }
}

/** One pod's turn: sync it if it changed, is due, or a probe failed; then the status manager's record. */
async function superviseOne(
  target: SyncTarget,
  listed: readonly Container[],
  {states, probed}: {states: Map<string, PodState>; probed: Set<string>},
  settings: Omit<SyncSettings, 'deadline'>,
  deps: SuperviseDeps,
): Promise<PodSyncResult | undefined> {
  const sandboxes = [...target.sandboxes].sort(newestFirst)
  const uid = sandboxes[0]?.metadata?.uid ?? ''
  const ids = new Set(sandboxes.map((sandbox) => sandbox.id))
  const containers = listed.filter((container) => ids.has(container.podSandboxId))
  let state = states.get(target.fullName)
  if (!state || state.pod?.uid !== uid) {
    state = {
      registered: new Set(),
      fingerprint: '',
      nextDue: 0,
      backOff: crashBackOff(deps.now),
      pod: await readDesiredPod(settings.podDirRoot, uid),
    }
    states.set(target.fullName, state)
    if (!state.pod) deps.events(normalEvent('NotManaged', 'podctl run did not record this pod; left alone', target.fullName))
  }

  if (!state.pod) return undefined
  const probeFailures = probeFailuresOf(deps.prober, containers)
  const print = fingerprint(sandboxes, containers)
  const now = Date.now()
  const probeChanged = containers.some((container) => probed.delete(container.id))
  if (print === state.fingerprint && now < state.nextDue && probeFailures.size === 0) {
    if (probeChanged) await recordStatus(deps.client, state.pod, settings, deps.prober, state.registered).catch(() => {})
    return undefined
  }

  const registered = state.registered
  const onKill = (id: string) => {
    deps.prober?.removeContainer(id)
    registered.delete(id)
  }

  const result = await syncPodOnce(state.pod, sandboxes, settings, {
    ...deps,
    backOff: state.backOff,
    probeFailures,
    containers: listed,
    onKill,
  })
  if (result.failure instanceof InterruptedError) return result
  if (result.failure) deps.events(warningEvent('FailedSync', result.failure.message, podFullName(result.pod, result.namespace)))
  if (result.uid !== state.pod.uid) state.pod = {...state.pod, uid: result.uid}
  state.fingerprint = result.did.length === 0 ? print : ''
  state.nextDue = Math.min(result.backOffUntil ?? Number.POSITIVE_INFINITY, now + RESYNC_MS)
  await recordStatus(deps.client, state.pod, settings, deps.prober, state.registered).catch(() => {})
  return result
}

function probeFailuresOf(prober: StatusProber | undefined, containers: readonly Container[]): Map<string, 'liveness' | 'startup'> {
  const failures = new Map<string, 'liveness' | 'startup'>()
  if (!prober) return failures
  for (const container of containers) {
    if (container.state !== 'CONTAINER_RUNNING') continue
    if (prober.result(container.id, 'startup') === 'failure') failures.set(container.id, 'startup')
    else if (prober.result(container.id, 'liveness') === 'failure') failures.set(container.id, 'liveness')
  }

  return failures
}
