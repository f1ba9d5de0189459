/**
 * `sync --watch` and `run --supervise`: the kubelet's sync loop in the foreground. One
 * ListPodSandbox and one ListContainers show which pods changed; those are synced at once
 * (reconciler.ts), the others on their back-off deadline or every RESYNC_MS. Where the runtime has
 * a container event stream (container-event-stream.ts), an event of a supervised pod wakes the loop
 * at once and the listing runs every EVENTS_RELIST_MS as a safety net; otherwise (containerd 1.6)
 * it runs every second. A probe manager runs the pods' probes; a liveness or startup failure wakes
 * the loop. A runtime that goes away is waited for with a growing pause and synced again when it
 * is back. Ctrl-C (the signal) ends the loop cleanly.
 *
 * One supervisor per pod: each turn takes (or keeps) the pod's supervisor.lock (supervisor-lock.ts).
 * A pod another live supervisor holds is left to it — one AlreadySupervised warning, no sync, no
 * probes — and taken over (TookOver) on the first turn after that supervisor stops. The locks are
 * released when the loop ends, however it ends.
 */
import {stat} from 'node:fs/promises'

import {asPodctlError, InterruptedError, RuntimeUnreachableError} from '../errors.js'
import type {Container, PodSandbox} from '../../generated/runtime/v1/api.js'
import type {BackOff} from '../kube/backoff.js'
import {ContainerEventStream, type EventStreamTiming} from './container-event-stream.js'
import {normalEvent, warningEvent} from '../kube/events.js'
import {newestFirst, podFullName} from '../kube/helpers.js'
import {settleLimit} from '../util/concurrency.js'
import {ProbeManager} from '../prober/manager.js'
import {desiredPodPath, readDesiredPod} from './desired-state.js'
import {type FollowedPod, followRecord} from './supervised-record.js'
import {crashBackOff, type PodSyncResult, type SyncDeps, syncPodOnce, type SyncSettings} from './reconciler.js'
import {type ContainerProbes, recordStatus, releaseStatus, type StatusProber} from './status-manager.js'
import {tryLockPod} from './pod-lock.js'
import {type SupervisorHolder, SupervisorLocks} from './supervisor-lock.js'
import type {SyncTarget} from './sync-pods.js'

/** How often the runtime is listed without an event stream: a container exit is seen within this. */
export const WATCH_POLL_MS = 1000
/**
 * How often it is listed beside a working event stream: what catches an event the runtime dropped
 * or a stream gone silent. The kubelet's Evented PLEG relists every 300s; a listing costs podctl
 * two RPCs, so 5s keeps the worst case of a lost event short while cutting the listings by five.
 */
export const EVENTS_RELIST_MS = 5000
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
  /** The listing period beside a working event stream (EVENTS_RELIST_MS). */
  relistMs?: number
  eventStreamTiming?: Partial<EventStreamTiming>
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

/** A pod's state in the loop: the record it follows (pod, registered, fingerprint, ...), and the rest. */
interface PodState extends FollowedPod {
  nextDue: number
  backOff: BackOff
  /** The uid the state was made for: a pod with no record (no `pod`) is told NotManaged once, not every turn. */
  uid: string
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
  const relistMs = deps.relistMs ?? EVENTS_RELIST_MS
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
  // Set by whatever wakes the loop, so a wake-up that comes during a pass is not lost.
  let pending = false
  const poke = () => {
    pending = true
    wake?.()
  }

  const probed = new Set<string>()
  // The pods of the last listing, by full name: an event of another pod does not wake the loop.
  const supervised = new Set<string>()
  const streamStop = new AbortController()
  const stream = new ContainerEventStream({
    client,
    events,
    signal: streamStop.signal,
    pollMs,
    relistMs,
    timing: deps.eventStreamTiming,
    // Leaving the stream: list at once, since an event may have been lost with it.
    onModeChange: (_mode, previous) => previous === 'events' && poke(),
    onEvent(event) {
      const metadata = event.podSandboxStatus?.metadata
      const sandboxId = event.podSandboxStatus?.id ?? ''
      const known = podOfSandbox.has(sandboxId) || podOfSandbox.has(event.containerId)
      if (known || (metadata && supervised.has(`${metadata.name}_${metadata.namespace}`))) poke()
    },
  })
  const unsubscribe = prober.onResult((id, kind, result) => {
    probed.add(id)
    // Beside an event stream the loop sleeps longer: a readiness change is recorded at once.
    if ((result === 'failure' && kind !== 'readiness') || stream.mode === 'events') poke()
  })
  let reconnectMs = 0
  let standby = false
  events(normalEvent('Supervising', `Watching pods; Ctrl-C to stop`))
  stream.start()
  try {
    while (!signal.aborted) {
      const started = Date.now()
      pending = false
      try {
        const targets = await select()
        supervised.clear()
        for (const target of targets) supervised.add(target.fullName)
        for (const target of targets) for (const sandbox of target.sandboxes) podOfSandbox.set(sandbox.id, target.fullName)
        const {containers} = await client.runtime('listContainers', {filter: {}}, {signal})
        if (reconnectMs > 0) events(normalEvent('RuntimeReady', 'The runtime answers again; syncing every pod', 'runtime'))
        if (reconnectMs > 0) for (const state of states.values()) state.nextDue = 0
        if (reconnectMs > 0) stream.runtimeRestarted()
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

      const due = stream.mode === 'events' ? nextListing(states, supervised, {started, pollMs, relistMs}) : started + pollMs
      const pause = pending ? 50 : Math.max(reconnectMs, due - Date.now(), 50)
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer)
          signal.removeEventListener('abort', done)
          resolve()
        }

        const timer = setTimeout(done, pause)
        wake = done
        // Ctrl-C during the pass: a listener added now would never fire, and the pause may be the 5s relist.
        if (signal.aborted) done()
        else signal.addEventListener('abort', done, {once: true})
      })
      wake = undefined
    }
  } finally {
    streamStop.abort()
    await stream.stopped()
    unsubscribe()
    await ownProber?.stop()
    // The pods are no longer supervised: status says so again; then (not before: a supervisor taking
    // over must not have its status.json cleared) another supervisor may take them.
    await Promise.all([...states.values()].map((state) => state.pod && releaseStatus(settings.podDirRoot, state.pod.uid)))
    if (!deps.locks) await locks.release()
  }
}

/**
 * When the next listing is due beside an event stream (epoch ms): the safety net, sooner for a
 * pod's back-off or resync deadline or after a pass that acted (it looks again), never sooner than
 * polling would list.
 */
function nextListing(
  states: Map<string, PodState>,
  supervised: Set<string>,
  {started, pollMs, relistMs}: {started: number; pollMs: number; relistMs: number},
): number {
  let due = started + relistMs
  for (const [name, state] of states) {
    if (state.pod && supervised.has(name)) due = Math.min(due, state.fingerprint === '' ? 0 : state.nextDue)
  }

  return Math.max(due, started + pollMs)
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
  if (!(await followRecord(target.fullName, state, {locks, podDirRoot: settings.podDirRoot}, deps))) return undefined
  if (!(await claimPod(target.fullName, state, locks, deps))) return undefined
  const probeFailures = probeFailuresOf(deps.prober, containers)
  const print = fingerprint(sandboxes, containers)
  const now = Date.now()
  const probeChanged = containers.some((container) => probed.delete(container.id))
  if (print === state.fingerprint && now < state.nextDue && probeFailures.size === 0) {
    if (probeChanged) await recordStatus(deps.client, state.pod, settings, deps.prober, state.registered).catch(() => {})
    return undefined
  }

  // About to act: under the pod's pass lock, which a `sync` or `sync -f` at work holds (then the next
  // turn acts), and with the record as it is now (an apply may have rewritten it meanwhile).
  const passLock = await tryLockPod(settings.podDirRoot, target.fullName)
  if (!passLock) return undefined
  try {
    if (!(await followRecord(target.fullName, state, {locks, podDirRoot: settings.podDirRoot}, deps))) return undefined
    return await syncTurn(target, {state, print, now, probeFailures, listed, sandboxes}, {locks, settings, deps})
  } finally {
    await passLock.release()
  }
}

/** The acting part of a pod's turn: SyncPod, then the status manager's record. */
async function syncTurn(
  target: SyncTarget,
  {
    state,
    print,
    now,
    probeFailures,
    listed,
    sandboxes,
  }: {
    state: PodState
    print: string
    now: number
    probeFailures: Map<string, 'liveness' | 'startup'>
    listed: readonly Container[]
    sandboxes: PodSandbox[]
  },
  {locks, settings, deps}: {locks: SupervisorLocks; settings: Omit<SyncSettings, 'deadline'>; deps: SuperviseDeps},
): Promise<PodSyncResult | undefined> {
  if (!state.pod) return undefined
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

  // A recreation records the pod again itself: that is not an apply to follow.
  if (result.did.length > 0)
    state.recordMtimeMs = (await stat(desiredPodPath(settings.podDirRoot, state.pod.uid)).catch(() => undefined))?.mtimeMs
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
  if (known && (known.pod?.uid ?? known.uid) === uid) return known
  if (known?.pod) await locks.release(known.pod.uid)
  const state: PodState = {
    registered: new Set(),
    fingerprint: '',
    nextDue: 0,
    backOff: crashBackOff(deps.now),
    uid,
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
