/**
 * `sync --watch` and `run --supervise`: the kubelet's sync loop in the foreground, as a pod worker per
 * pod (pod-worker.ts, the kubelet's pod_workers.go) beside one shared listing. The listing
 * (ListPodSandbox + ListContainers) runs every second, whatever else happens, and hands each worker
 * its newest observation; it starts a worker for a pod that appears and ends the worker of a pod
 * that is gone. Each worker syncs its pod on a change, a probe result, its back-off expiry or a resync,
 * so one pod's 30 s kill, slow pull or hung hook delays no other pod. Where the runtime has a container
 * event stream (container-event-stream.ts), an event of a supervised pod makes the listing run at
 * once: events only wake workers early, and a missed one costs at most the next second's listing. A
 * probe manager runs the pods' probes; a result wakes the container's worker. A runtime that goes
 * away is waited for with a growing pause, and every pod is synced again when it is back. Ctrl-C
 * (the signal) ends the loop cleanly: each worker finishes the step in flight.
 *
 * One supervisor per pod: each worker takes (or keeps) the pod's supervisor.lock (supervisor-lock.ts).
 * A pod another live supervisor holds is left to it — one AlreadySupervised warning per holder,
 * however many of its pods it holds; no sync, no probes — and taken over (TookOver) on the first
 * listing after that supervisor stops; when every
 * pod is held elsewhere, podctl says Standby once. The locks are released when the loop ends, however it ends.
 */
import {asPodctlError, RuntimeUnreachableError} from '../../errors.js'
import type {Container} from '../../../generated/runtime/v1/api.js'
import {ContainerEventStream, type EventStreamTiming} from './container-event-stream.js'
import {normalEvent, warningEvent} from '../../kube/events.js'
import {newestFirst} from '../../kube/helpers.js'
import {probesFor} from '../../prober/shared-probes.js'
import {PodWorker, type WorkerContext, type WorkerDeps} from '../workers/pod-worker.js'
import type {SyncSettings} from '../kuberuntime/sync-pod.js'
import type {ContainerProbes, StatusProber} from '../status/status-manager.js'
import {SupervisorLocks} from '../config/supervisor-lock.js'
import type {SyncTarget} from '../workers/sync-pods.js'
import {type RuntimeOwnerCheck, RuntimeOwnerWatch} from './runtime-owner-watch.js'
import {keepSupervisorHeapSmall} from './heap-flags.js'
import type {SupervisorMetrics} from '../workers/supervisor-metrics.js'
import type {GarbageCollector} from '../gc/collector.js'

/** The pods a listing hands out (sync-pods.ts), for callers that build selections. */
export type {SyncTarget} from '../workers/sync-pods.js'

/** How often the runtime is listed: a container exit is seen within this, with or without an event stream. */
export const WATCH_POLL_MS = 1000
/**
 * The listing period beside a working event stream: the same second. The kubelet's Evented PLEG
 * relists every 300 s; here a lost event (another subscriber took it, a reconnect) must never cost
 * more than a second, and with a worker per pod a listing is only two RPCs.
 */
export const EVENTS_RELIST_MS = WATCH_POLL_MS
/** The shortest pause between two listings, when a worker or an event asks for one at once. */
const LISTING_GAP_MS = 50
const RECONNECT_MAX_MS = 15_000
/**
 * Every selected pod has another supervisor. podctl stays, as a standby: under systemd (Restart=)
 * or in a second terminal, exiting would only be restarted or retyped, while waiting means the pods
 * stay supervised when the other supervisor stops.
 */
const STANDBY_MESSAGE = 'Every selected pod is supervised by another process; waiting to take over when it stops (Ctrl-C to stop)'

export interface SuperviseDeps extends Omit<WorkerDeps, 'prober'> {
  /** The prober; none → a lease of the process's probes of this runtime (prober/shared-probes.ts). */
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
  /** Whether a kubelet owns the runtime now (runtime-owner-watch.ts); none → never checked. */
  runtimeOwner?: RuntimeOwnerCheck
  /** Where the loop, its workers and its own prober report (--metrics-address); none → nothing is counted. */
  metrics?: SupervisorMetrics
  /** The kubelet's garbage collection, once a minute while the loop runs (gc/collector.ts); none → none. */
  garbage?: GarbageCollector
}

/**
 * Runs until the signal aborts. `select` lists the pods to supervise (its own ListPodSandbox). Every
 * pod syncs in its own worker, never two passes at once for one pod and never waiting for another
 * pod; image pulls are bounded by `images` (the ImageManager's --parallel).
 */
export async function superviseSelection(
  select: () => Promise<SyncTarget[]>,
  settings: Omit<SyncSettings, 'deadline'>,
  deps: SuperviseDeps,
): Promise<void> {
  const {client, events, signal, metrics} = deps
  // A supervisor's process does little else for as long as it runs (heap-flags.ts).
  keepSupervisorHeapSmall()
  const pollMs = deps.pollMs ?? WATCH_POLL_MS
  const relistMs = deps.relistMs ?? EVENTS_RELIST_MS
  const locks = deps.locks ?? new SupervisorLocks(settings.podDirRoot, 'podctl sync --watch')
  // Probe events (Unhealthy, ...) name the pod by its sandbox.
  const podOfSandbox = new Map<string, string>()
  const ownProber = deps.prober
    ? undefined
    : probesFor(client).lease({
        onEvent(event) {
          const object = `${podOfSandbox.get(event.podSandboxId) ?? event.podSandboxId}/${event.containerName}`
          events(
            event.type === 'Warning' ? warningEvent(event.reason, event.message, object) : normalEvent(event.reason, event.message, object),
          )
        },
        onProbed: metrics && ((target, kind, outcome) => metrics.probeRan(target, kind, outcome.status)),
        onLate: metrics && ((lateMs) => metrics.late('probe', lateMs)),
      })
  const prober = deps.prober ?? ownProber!
  let wake: (() => void) | undefined
  let reconnectMs = 0
  // Set by whatever asks for a listing, so a request that comes during a listing is not lost.
  let pending = false
  const poke = () => {
    pending = true
    // A runtime that went away is waited for: requests do not cut its growing pause short.
    if (reconnectMs === 0) wake?.()
  }

  const workers = new Map<string, PodWorker>()
  // The pods of the last listing, by full name: an event of another pod does not wake the loop.
  let supervised = new Set<string>()
  let standby = false
  const toldHolders = new Set<string>()
  const context: WorkerContext = {
    settings,
    deps: {...deps, prober},
    locks,
    metrics,
    requestListing: poke,
    heldChanged() {
      const allHeld = supervised.size > 0 && [...supervised].every((name) => workers.get(name)?.held)
      if (allHeld && !standby) events(normalEvent('Standby', STANDBY_MESSAGE, 'supervisor'))
      standby = allHeld
    },
    heldElsewhere(fullName, other) {
      // A second supervisor of a whole directory would say it for each of its pods: one line names the holder.
      const key = `${other.pid}:${other.token}`
      if (toldHolders.has(key)) return
      toldHolders.add(key)
      const message =
        `Pod is supervised by pid ${other.pid} (${other.holder}) since ${other.since}; podctl leaves it, ` +
        'and every other pod that process supervises, to that process and takes over when it stops'
      events(warningEvent('AlreadySupervised', message, fullName))
    },
    runtimeUp: () => reconnectMs === 0,
    paused: () => ownerWatch?.owner !== undefined,
  }
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
  const unsubscribe = prober.onResult((id) => {
    for (const worker of workers.values()) if (worker.owns(id)) worker.probeResult(id)
  })
  const resyncAll = () => {
    for (const worker of workers.values()) worker.resync()
  }

  const ownerWatch = deps.runtimeOwner && new RuntimeOwnerWatch(deps.runtimeOwner, events, resyncAll)
  const runtimeBack = () => {
    events(normalEvent('RuntimeReady', 'The runtime answers again; syncing every pod', 'runtime'))
    resyncAll()
    stream.runtimeRestarted()
  }

  events(normalEvent('Supervising', `Watching pods; Ctrl-C to stop`))
  stream.start()
  const collecting = collectGarbage(deps.garbage, streamStop.signal, context.paused)
  try {
    while (!signal.aborted) {
      const started = Date.now()
      pending = false
      try {
        await ownerWatch?.tick()
        const targets = await select()
        const {containers} = await client.runtime('listContainers', {filter: {}}, {signal})
        if (reconnectMs > 0) runtimeBack()
        reconnectMs = 0
        supervised = new Set(targets.map((target) => target.fullName))
        handOut(targets, containers, started, {workers, podOfSandbox, context})
        metrics?.listed(targets, containers)
        context.heldChanged()
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

      const due = started + (stream.mode === 'events' ? relistMs : pollMs)
      const pause = Math.max(reconnectMs, pending ? LISTING_GAP_MS : due - Date.now(), LISTING_GAP_MS)
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer)
          signal.removeEventListener('abort', done)
          resolve()
        }

        const dueAt = Date.now() + pause
        const timer = setTimeout(() => {
          // Only a listing that waited for its time is late or not; one asked for early is not on a schedule.
          metrics?.late('listing', Date.now() - dueAt)
          done()
        }, pause)
        wake = done
        // Ctrl-C during the listing: a listener added now would never fire.
        if (signal.aborted) done()
        else signal.addEventListener('abort', done, {once: true})
      })
      wake = undefined
    }
  } finally {
    streamStop.abort()
    await Promise.all([stream.stopped(), collecting])
    unsubscribe()
    // Each worker finishes its step in flight and says in status.json that the pod is no longer
    // supervised; then (not before: a supervisor taking over must not have its status.json cleared)
    // another supervisor may take the pods.
    await Promise.all([...workers.values()].map((worker) => worker.done))
    await ownProber?.stop()
    if (!deps.locks) await locks.release()
  }
}

/** The collector's rounds for as long as the loop runs (none while a kubelet owns the runtime: it collects its own). */
async function collectGarbage(garbage: GarbageCollector | undefined, signal: AbortSignal, paused: () => boolean): Promise<void> {
  await garbage?.start(signal, paused)
}

/**
 * One listing to the workers: each listed pod's worker (a new one for a pod that appeared, or came
 * back after its worker ended) gets its observation; a worker whose pod is no longer listed is told
 * so (an empty observation) and ends once it has seen that after its last sync.
 */
function handOut(
  targets: readonly SyncTarget[],
  listed: readonly Container[],
  listedAt: number,
  {workers, podOfSandbox, context}: {workers: Map<string, PodWorker>; podOfSandbox: Map<string, string>; context: WorkerContext},
): void {
  const bySandbox = new Map<string, Container[]>()
  for (const container of listed) bySandbox.set(container.podSandboxId, [...(bySandbox.get(container.podSandboxId) ?? []), container])
  const seen = new Set<string>()
  for (const target of targets) {
    seen.add(target.fullName)
    const sandboxes = [...target.sandboxes].sort(newestFirst)
    for (const sandbox of sandboxes) podOfSandbox.set(sandbox.id, target.fullName)
    let worker = workers.get(target.fullName)
    if (!worker || worker.ended) {
      const previous = worker
      worker = new PodWorker(target.fullName, context, previous?.done)
      workers.set(target.fullName, worker)
      const started = worker
      void started.done.then(() => {
        if (workers.get(target.fullName) === started) workers.delete(target.fullName)
      })
    }

    const containers = sandboxes.flatMap((sandbox) => bySandbox.get(sandbox.id) ?? [])
    worker.update({sandboxes, containers, listedAt, ...(target.lostUid ? {lostUid: target.lostUid} : {})})
  }

  for (const [name, worker] of workers) if (!seen.has(name) && !worker.ended) worker.update({sandboxes: [], containers: [], listedAt})
}
