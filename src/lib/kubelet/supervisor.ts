/**
 * `sync --watch` and `run --supervise`: the kubelet's sync loop in the foreground. Every second one
 * ListPodSandbox and one ListContainers (containerd 1.6 has no container event stream for podctl
 * to rely on) show which pods changed; those are synced at once (reconciler.ts), the others on
 * their back-off deadline or every RESYNC_MS. A probe manager runs the pods' probes; a liveness or
 * startup failure wakes the loop. A runtime that goes away is waited for with a growing pause and
 * synced again when it is back. Ctrl-C (the signal) ends the loop cleanly.
 *
 * One supervisor per pod: each turn takes (or keeps) the pod's supervisor.lock (supervisor-lock.ts).
 * A pod another live supervisor holds is left to it — one AlreadySupervised warning, no sync, no
 * probes — and taken over (TookOver) on the first turn after that supervisor stops. The locks are
 * released when the loop ends, however it ends.
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
import {type SupervisorHolder, SupervisorLocks} from './supervisor-lock.js'
import type {SyncTarget} from './sync-pods.js'

/** How often the runtime is listed: a container exit is seen within this. */
export const WATCH_POLL_MS = 1000
/** A pod nothing happened to is synced again this often (the kubelet resyncs every minute; podctl is cheaper). */
const RESYNC_MS = 10_000
const RECONNECT_MAX_MS = 15_000
/**
 * Every selected pod has another supervisor. podctl stays, as a standby: under systemd (Restart=)
 * or in a second terminal, exiting would only be restarted or retyped, while waiting means the pods
 * stay supervised when the other supervisor stops.
 */
const STANDBY_MESSAGE = 'Every selected pod is supervised by another process; waiting to take over when it stops (Ctrl-C to stop)'

export interface SuperviseDeps extends Omit<SyncDeps, 'backOff' | 'probeFailures' | 'containers' | 'recreate' | 'onKill'> {
  parallel: number
  /** The prober (ProbeManager); none → no probes run. */
  prober?: ContainerProbes & StatusProber
  pollMs?: number
  /**
   * The supervisor locks, when the caller holds them past the loop (run --supervise keeps its pods
   * until they are killed) and releases them itself; default: `podctl sync --watch`'s, released here.
   */
  locks?: SupervisorLocks
}

/** What one pod's turn shares with the loop. */
interface Turn {
  states: Map<string, PodState>
  probed: Set<string>
  locks: SupervisorLocks
}

interface PodState {
  /** Containers handed to the prober. */
  registered: Set<string>
  fingerprint: string
  nextDue: number
  backOff: BackOff
  pod?: PodModel
  /** Another supervisor that holds the pod's lock (told once per holder); undefined while this one holds it. */
  heldBy?: SupervisorHolder
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
  const locks = deps.locks ?? new SupervisorLocks(settings.podDirRoot, 'podctl sync --watch')
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
  let standby = false
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
        await settleLimit(targets, deps.parallel, (target) => superviseOne(target, containers, {states, probed, locks}, settings, deps))
        const allHeld = targets.length > 0 && targets.every((target) => states.get(target.fullName)?.heldBy)
        if (allHeld && !standby) events(normalEvent('Standby', STANDBY_MESSAGE, 'supervisor'))
        standby = allHeld
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
    // The pods are no longer supervised: status says so again; then (not before: a supervisor taking
    // over must not have its status.json cleared) another supervisor may take them.
    await Promise.all([...states.values()].map((state) => state.pod && releaseStatus(settings.podDirRoot, state.pod.uid)))
    if (!deps.locks) await locks.release()
  }
}

/** One pod's turn: sync it if it changed, is due, or a probe failed; then the status manager's record. */
async function superviseOne(
  target: SyncTarget,
  listed: readonly Container[],
  {states, probed, locks}: Turn,
  settings: Omit<SyncSettings, 'deadline'>,
  deps: SuperviseDeps,
): Promise<PodSyncResult | undefined> {
  const sandboxes = [...target.sandboxes].sort(newestFirst)
  const uid = sandboxes[0]?.metadata?.uid ?? ''
  const ids = new Set(sandboxes.map((sandbox) => sandbox.id))
  const containers = listed.filter((container) => ids.has(container.podSandboxId))
  const state = await podState({fullName: target.fullName, uid}, {states, locks}, settings.podDirRoot, deps)
  if (!state.pod) return undefined
  if (!(await claimPod(target.fullName, state, locks, deps))) return undefined
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
  if (result.uid !== state.pod.uid) {
    // Recreated under a new uid: its lock is in the new pod directory.
    await locks.release(state.pod.uid)
    state.pod = {...state.pod, uid: result.uid}
    if (!(await claimPod(target.fullName, state, locks, deps))) return result
  }

  state.fingerprint = result.did.length === 0 ? print : ''
  state.nextDue = Math.min(result.backOffUntil ?? Number.POSITIVE_INFINITY, now + RESYNC_MS)
  await recordStatus(deps.client, state.pod, settings, deps.prober, state.registered).catch(() => {})
  return result
}

/** The pod's state, new on its first turn and whenever its uid changed (the old uid's lock is let go). */
async function podState(
  {fullName, uid}: {fullName: string; uid: string},
  {states, locks}: Omit<Turn, 'probed'>,
  podDirRoot: string,
  deps: SuperviseDeps,
): Promise<PodState> {
  const known = states.get(fullName)
  if (known && known.pod?.uid === uid) return known
  if (known?.pod) await locks.release(known.pod.uid)
  const state: PodState = {
    registered: new Set(),
    fingerprint: '',
    nextDue: 0,
    backOff: crashBackOff(deps.now),
    pod: await readDesiredPod(podDirRoot, uid),
  }
  states.set(fullName, state)
  if (!state.pod) deps.events(normalEvent('NotManaged', 'podctl run did not record this pod; left alone', fullName))
  return state
}

/**
 * Takes (or keeps) the pod's supervisor lock. Held by another live supervisor: one warning per
 * holder, this process's probes of the pod stop, and false (the pod is left to the holder).
 */
async function claimPod(fullName: string, state: PodState, locks: SupervisorLocks, deps: SuperviseDeps): Promise<boolean> {
  const claim = await locks.take(state.pod!.uid)
  if (!claim.held) {
    const other = claim.holder
    if (state.heldBy?.token !== other.token) {
      const message =
        `Pod is supervised by pid ${other.pid} (${other.holder}) since ${other.since}; ` +
        'podctl leaves it to that process and takes over when it stops'
      deps.events(warningEvent('AlreadySupervised', message, fullName))
      for (const id of state.registered) deps.prober?.removeContainer(id)
      state.registered.clear()
    }

    state.heldBy = other
    return false
  }

  if (state.heldBy) {
    const other = state.heldBy
    deps.events(
      normalEvent('TookOver', `pid ${other.pid} (${other.holder}) no longer supervises the pod; podctl supervises it now`, fullName),
    )
    state.heldBy = undefined
    state.fingerprint = ''
    state.nextDue = 0
  }

  return true
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
