/**
 * One supervised pod's worker (the kubelet's pod_workers.go): a loop of its own that runs SyncPod
 * (syncPod) for that pod only, then waits for its next wake — the shared listing handing it a
 * newer observation, a probe result of one of its containers, its back-off expiry or resync, or a
 * resync the supervisor asks for. Nothing one pod does (a kill waiting out a 30 s grace period, a
 * slow pull, a hung hook) delays another pod's worker, and a worker's syncs never overlap.
 *
 * A worker acts only on an observation listed after its previous sync ended, so it never restarts
 * what it has just started from a listing that predates it; a wake with nothing newer asks the
 * supervisor for a listing now. Each turn follows the pod's record (supervised-record.ts), takes or
 * keeps its supervisor lock (AlreadySupervised, TookOver) and, before acting, the pass lock
 * `sync -f` takes; then the status manager's record. A pod with no record yet (`run` is still
 * starting it) is looked at again on every listing, one stat of pod.json, and supervised once recorded.
 */
import {stat} from 'node:fs/promises'

import {asPodctlError, InterruptedError} from '../../errors.js'
import type {BackOff} from '../../kube/backoff.js'
import {normalEvent, warningEvent} from '../../kube/events.js'
import {podFullName} from '../../kube/helpers.js'
import {desiredPodPath, readBackOff, readDesiredPod} from '../config/desired-state.js'
import {terminationDone, terminationDue, type TerminationFollow} from './terminating-pod.js'
import {podLockPath, tryLockPod} from '../config/pod-lock.js'
import {crashBackOff} from '../kuberuntime/crash-backoff.js'
import type {SyncDeps, SyncSettings} from '../kuberuntime/sync-pod.js'
import {podWorkers} from './pod-workers.js'
import {type ContainerProbes, recordStatus, releaseStatus, type StatusProber} from '../status/status-manager.js'
import {type FollowedPod, followRecord} from './supervised-record.js'
import type {LockHolder} from '../config/lock-file.js'
import type {SupervisorLocks} from '../config/supervisor-lock.js'
import {OutsideStops} from './outside-stops.js'
import {fingerprint, type Observation, probeFailuresOf} from './worker-observation.js'
import {podSandboxes} from '../kuberuntime/sandbox.js'
import type {SupervisorMetrics} from './supervisor-metrics.js'

/** A pod nothing happened to is synced again this often (the kubelet resyncs every minute; podctl is cheaper). */
export const RESYNC_MS = 10_000

export type WorkerDeps = Omit<SyncDeps, 'backOff' | 'probeFailures' | 'containers' | 'recreate' | 'onKill'> & {
  prober: ContainerProbes & StatusProber
}

/** What every worker shares with the supervisor. */
export interface WorkerContext {
  settings: Omit<SyncSettings, 'deadline'>
  deps: WorkerDeps
  locks: SupervisorLocks
  metrics?: SupervisorMetrics
  /** Lists the runtime now (coalesced): a wake that needs a newer observation than the worker has. */
  requestListing(): void
  /** Another supervisor took or let go of the pod: the supervisor may say Standby. */
  heldChanged(): void
  /** Another live supervisor holds the pod: said once per holder (AlreadySupervised), not once per pod. */
  heldElsewhere(fullName: string, holder: LockHolder): void
  /** False while the runtime is unreachable: workers wait for the reconnect's resync instead of failing. */
  runtimeUp(): boolean
  /** True while a kubelet owns the runtime: workers keep watching and change nothing. */
  paused(): boolean
}

/** The pod's state: the record it follows (pod, registered, fingerprint, ...), and the rest. */
interface PodState extends FollowedPod, TerminationFollow {
  nextDue: number
  backOff: BackOff
  /** The uid the state was made for. */
  uid: string
  /** NotManaged was said for this uid (a pod with no record is told once, not every turn). */
  toldUnmanaged: boolean
  /** Another supervisor that holds the pod's lock (told once per holder); undefined while this one holds it. */
  heldBy?: LockHolder
}

export class PodWorker {
  /** Resolves once the loop has ended and let the pod go. */
  readonly done: Promise<void>
  /** Set the moment the loop decides to end: the supervisor starts a new worker if the pod comes back. */
  ended = false
  private state?: PodState
  private latest?: Observation
  private readonly probed = new Set<string>()
  /** Epoch ms: when the last sync ended; older observations predate what it did. */
  private lastSyncEnd = 0
  private observed = false
  private poked = false
  private wakeUp?: () => void
  private readonly outsideStops: OutsideStops

  constructor(
    readonly fullName: string,
    private readonly ctx: WorkerContext,
    /** The previous worker of the same pod, which must have let the pod go first. */
    after?: Promise<void>,
  ) {
    this.outsideStops = new OutsideStops(fullName, ctx.deps.events)
    this.done = this.loop(after)
  }

  /** Another live supervisor holds the pod. */
  get held(): boolean {
    return this.state?.heldBy !== undefined
  }

  /** The newest listing's view of the pod. */
  update(observation: Observation): void {
    this.latest = observation
    this.observed = true
    this.wakeUp?.()
  }

  /** Whether the container is one this worker handed to the prober. */
  owns(containerId: string): boolean {
    return this.state?.registered.has(containerId) ?? false
  }

  probeResult(containerId: string): void {
    this.probed.add(containerId)
    this.poke()
  }

  /** Sync at the next observation whatever it shows (the runtime is back, maybe restarted). */
  resync(): void {
    if (!this.state) return
    this.state.nextDue = 0
    this.state.terminateAt = 0
    this.state.fingerprint = ''
  }

  private poke(dueAt?: number): void {
    if (dueAt !== undefined) this.ctx.metrics?.late('worker', Date.now() - dueAt)
    this.poked = true
    this.wakeUp?.()
  }

  private async loop(after: Promise<void> | undefined): Promise<void> {
    const {signal} = this.ctx.deps
    await after
    try {
      while (!signal.aborted) {
        await this.sleep()
        if (signal.aborted) break
        const {poked} = this
        this.observed = false
        this.poked = false
        const observation = this.latest
        if (!this.ctx.runtimeUp()) continue
        if (!observation || observation.listedAt < this.lastSyncEnd) {
          // Nothing newer than the last sync: a probe or a deadline asks for a listing now.
          if (poked) this.ctx.requestListing()
          continue
        }

        if (observation.sandboxes.length === 0 && !observation.lostUid) {
          this.ended = true
          break
        }

        // Beside an owner of the runtime (a kubelet), or given up on a pod someone keeps stopping: watch only.
        if (this.ctx.paused() || this.outsideStops.gaveUp) continue

        await this.turn(observation).catch((error: unknown) => {
          if (!signal.aborted) this.ctx.deps.events(warningEvent('SyncFailed', asPodctlError(error).message, this.fullName))
        })
      }
    } finally {
      this.ended = true
      await this.letGo(signal.aborted)
    }
  }

  /**
   * Until a wake: an observation, a probe result, the pod's deadline (back-off, resync) or the end.
   * The deadline counts only while it lies ahead: one that passed without a sync waits for the next listing.
   */
  private async sleep(): Promise<void> {
    if (this.observed || this.poked) return
    const {signal} = this.ctx.deps
    const state = this.state
    const dueIn = state?.pod && !state.heldBy ? state.nextDue - Date.now() : -1
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        signal.removeEventListener('abort', done)
        this.wakeUp = undefined
        resolve()
      }

      const dueAt = Date.now() + dueIn
      const timer = dueIn > 0 ? setTimeout(() => this.poke(dueAt), dueIn) : undefined
      this.wakeUp = done
      if (signal.aborted) done()
      else signal.addEventListener('abort', done, {once: true})
    })
  }

  /** The pod is no longer supervised here: status says so again; gone from the runtime, its lock and probes go too. */
  private async letGo(stopping: boolean): Promise<void> {
    const state = this.state
    if (!state?.pod) return
    await releaseStatus(this.ctx.settings.podDirRoot, state.pod.uid).catch(() => {})
    if (stopping) return
    this.stopProbing(state)
    if (!state.heldBy) await this.ctx.locks.release(state.pod.uid).catch(() => {})
  }

  /** This process stops probing these containers of the pod (all it probes by default): gone, killed, or left to another supervisor. */
  private stopProbing(state: PodState, ids: readonly string[] = [...state.registered]): void {
    for (const id of ids) if (state.registered.delete(id)) this.ctx.deps.prober.removeContainer(id)
  }

  /** One turn: sync the pod if it changed, is due, or a probe failed; then the status manager's record. */
  private async turn(observation: Observation): Promise<void> {
    const {settings, deps} = this.ctx
    const {sandboxes, containers} = observation
    const state = await this.podState(sandboxes[0]?.metadata?.uid ?? observation.lostUid ?? '')
    if (!state.pod) return
    if (!(await this.follow(state))) return
    if (!(await this.claim(state))) return
    // A container seen gone or exited is not probed again (the kubelet probes running containers only):
    // its probe worker stops now, not after the sync this listing starts.
    this.stopProbing(
      state,
      containers.filter((container) => container.state !== 'CONTAINER_RUNNING').map((container) => container.id),
    )

    const {podDirRoot} = settings
    const terminating = terminationDue(state, {podDirRoot, uid: state.pod.uid, fullName: this.fullName, events: deps.events})
    if (terminating) this.stopProbing(state)
    if (terminating === 'later') return
    const probeFailures = terminating ? new Map<string, 'liveness' | 'startup'>() : probeFailuresOf(deps.prober, containers)
    const print = fingerprint(sandboxes, containers)
    const now = Date.now()
    const probeChanged = containers.some((container) => this.probed.delete(container.id))
    if (!terminating && print === state.fingerprint && now < state.nextDue && probeFailures.size === 0) {
      if (probeChanged) await recordStatus(deps.client, state.pod, settings, deps.prober, state.registered).catch(() => {})
      return
    }

    // About to act: under the pod's pass lock, which a `sync` or `sync -f` at work holds (then the next
    // listing's turn acts), and with the record as it is now (an apply may have rewritten it meanwhile).
    const passLock = await tryLockPod(settings.podDirRoot, this.fullName)
    if (!passLock) return
    try {
      if (!(await this.follow(state))) return
      // Lost when listed: a `run` that was starting it may have made its sandbox since (then the next listing shows it).
      if (observation.lostUid && (await podSandboxes(deps.client, state.pod!)).length > 0) return this.ctx.requestListing()
      await this.sync(state, {print, now, probeFailures, observation})
    } finally {
      this.lastSyncEnd = Date.now()
      await passLock.release()
    }
  }

  /** followRecord; a pod Forgotten (killed) is never told NotManaged after that, and supervised again only if recorded again. */
  private async follow(state: PodState): Promise<boolean> {
    const {settings, deps, locks} = this.ctx
    const followed = await followRecord(this.fullName, state, {locks, podDirRoot: settings.podDirRoot}, deps)
    if (!followed) state.toldUnmanaged = true
    return followed
  }

  /** SyncPod, then the status manager's record. */
  private async sync(
    state: PodState,
    {
      print,
      now,
      probeFailures,
      observation,
    }: {print: string; now: number; probeFailures: Map<string, 'liveness' | 'startup'>; observation: Observation},
  ): Promise<void> {
    const {settings, deps, locks} = this.ctx
    if (!state.pod) return
    const result = await podWorkers.sync(state.pod, observation.sandboxes, settings, {
      ...deps,
      backOff: state.backOff,
      probeFailures,
      containers: observation.containers,
      onKill: (id) => this.stopProbing(state, [id]),
      // A sandbox the pass found dead (not one recreated for a change) was stopped by someone else. The
      // pass's own finding, not the listing that woke the worker: a sandbox stopped after that listing
      // still shows ready there.
      mayRecreate: (found) => this.outsideStops.mayRecreate(now, found),
      onSandboxMade: () => this.outsideStops.made(),
    })
    if (result.failure instanceof InterruptedError) return
    if (result.terminated) return terminationDone(state, result, {fullName: this.fullName, events: deps.events})
    this.ctx.metrics?.backOffWaiting(state.pod, result.backOffWaits ?? 0)
    if (result.failure) deps.events(warningEvent('FailedSync', result.failure.message, podFullName(result.pod, result.namespace)))
    if (result.uid !== state.pod.uid) {
      // Recreated under a new uid: its lock is in the new pod directory.
      await locks.release(state.pod.uid)
      state.pod = {...state.pod, uid: result.uid}
      state.uid = result.uid
      if (!(await this.claim(state))) return
    }

    // A pass that only found containers waiting out their back-off changed nothing: the next look is
    // at the back-off's end (or a change), not every listing.
    const acted = result.did.length > (result.backOffWaits ?? 0)
    // A recreation records the pod again itself: that is not an apply to follow.
    if (acted) state.recordMtimeMs = (await stat(desiredPodPath(settings.podDirRoot, state.pod.uid)).catch(() => undefined))?.mtimeMs
    state.fingerprint = acted ? '' : print
    state.nextDue = Math.min(result.backOffUntil ?? Number.POSITIVE_INFINITY, now + RESYNC_MS)
    await recordStatus(deps.client, state.pod, settings, deps.prober, state.registered).catch(() => {})
  }

  /**
   * The pod's state, new on the first turn and whenever its uid changed (the old uid's lock is let
   * go). A pod with no record is looked at again each turn: `run` records it once its sandbox exists.
   */
  private async podState(uid: string): Promise<PodState> {
    const {settings, deps, locks} = this.ctx
    const known = this.state
    if (known && known.uid === uid) {
      if (!known.pod) await this.adopt(known)
      return known
    }

    if (known?.pod) await locks.release(known.pod.uid)
    const state: PodState = {
      registered: new Set(),
      fingerprint: '',
      nextDue: 0,
      terminateAt: 0,
      backOff: crashBackOff(deps.now),
      uid,
      toldUnmanaged: false,
      pod: await readDesiredPod(settings.podDirRoot, uid, deps.client.runtimeEndpoint),
    }
    // The back-off a `sync` or an earlier supervisor left: a container in CrashLoopBackOff stays in it.
    state.backOff.restore(await readBackOff(settings.podDirRoot, uid))
    this.state = state
    if (!state.pod) await this.adopt(state)
    return state
  }

  /** A pod without a record: supervised once `run` recorded it; NotManaged once if nothing is starting it. */
  private async adopt(state: PodState): Promise<void> {
    const {settings, deps} = this.ctx
    const recorded = await stat(desiredPodPath(settings.podDirRoot, state.uid)).catch(() => undefined)
    if (recorded) state.pod = await readDesiredPod(settings.podDirRoot, state.uid, deps.client.runtimeEndpoint)
    if (state.pod) {
      if (state.toldUnmanaged) deps.events(normalEvent('Supervising', 'podctl run recorded the pod: supervising it', this.fullName))
      return
    }

    // `run` holds the pod's pass lock while it starts the pod, and records it once its sandbox exists.
    const starting = await stat(podLockPath(settings.podDirRoot, this.fullName)).catch(() => undefined)
    if (starting || state.toldUnmanaged) return
    // `run` records the pod before it lets go of the lock: one that finished between the two looks has recorded it.
    state.pod = await readDesiredPod(settings.podDirRoot, state.uid, deps.client.runtimeEndpoint)
    if (state.pod) return
    state.toldUnmanaged = true
    deps.events(normalEvent('NotManaged', 'podctl run did not record this pod; left alone', this.fullName))
  }

  /**
   * Takes (or keeps) the pod's supervisor lock. Held by another live supervisor: the supervisor says
   * so once per holder, this process's probes of the pod stop, and false (the pod is left to the holder).
   */
  private async claim(state: PodState): Promise<boolean> {
    const {deps, locks} = this.ctx
    const claim = await locks.take(state.pod!.uid)
    if (!claim.held) {
      const other = claim.holder
      const told = state.heldBy?.token === other.token
      state.heldBy = other
      if (!told) {
        this.ctx.heldElsewhere(this.fullName, other)
        this.stopProbing(state)
        this.ctx.heldChanged()
      }

      return false
    }

    if (state.heldBy) {
      const other = state.heldBy
      deps.events(
        normalEvent('TookOver', `pid ${other.pid} (${other.holder}) no longer supervises the pod; podctl supervises it now`, this.fullName),
      )
      state.heldBy = undefined
      state.fingerprint = ''
      state.nextDue = 0
      this.ctx.heldChanged()
    }

    return true
  }
}
