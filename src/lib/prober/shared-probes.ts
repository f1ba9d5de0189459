/**
 * One probe manager per runtime in a process, as the kubelet has one prober manager: a supervisor's
 * workers, a `run --wait ready`, a `status --wait-for ready`, SyncPod's wait for a sidecar's startup
 * probe and every pod of the library ask for probes of the containers they follow through a lease
 * (`probesFor(client).lease()`), and a container two of them follow is probed once — never an exec
 * probe twice, and one bound on exec probes in flight for the whole process. A lease's containers stop
 * being probed when the last lease that follows them lets go; events of a container go to the lease
 * that followed it first.
 */
import type {CriClient} from '../cri/client.js'
import type {ProbeEvent, ProbeKind, ProbeResult, ProbeTarget} from './manager.js'
import {ProbeManager} from './manager.js'
import type {ProbeOutcome} from './types.js'

export interface LeaseHooks {
  /** Probe events (Unhealthy, ...) of the containers this lease follows first. */
  onEvent?: (event: ProbeEvent) => void
  /** After every probe of a container this lease follows (metrics). */
  onProbed?: (target: ProbeTarget, kind: ProbeKind, outcome: ProbeOutcome) => void
  /** How late a worker of a container this lease follows ran against its schedule. */
  onLate?: (lateMs: number) => void
}

/** A user's view of the shared manager: the containers it follows, and its hooks. */
export class ProbeLease {
  private readonly followed = new Set<string>()
  private readonly unsubscribes = new Set<() => void>()

  constructor(
    private readonly shared: SharedProbes,
    readonly hooks: LeaseHooks,
  ) {}

  /** Follows the container; its probes start unless another lease follows it already (then they go on). */
  addContainer(target: ProbeTarget): void {
    this.followed.add(target.containerId)
    this.shared.follow(this, target)
  }

  /** No longer follows the container: its probes stop when no other lease follows it. */
  removeContainer(containerId: string): void {
    if (!this.followed.delete(containerId)) return
    this.shared.unfollow(this, containerId)
  }

  containerStopped(containerId: string): void {
    if (this.followed.has(containerId)) this.shared.manager.containerStopped(containerId)
  }

  follows(containerId: string): boolean {
    return this.followed.has(containerId)
  }

  result(containerId: string, kind: ProbeKind): ProbeResult {
    return this.shared.manager.result(containerId, kind)
  }

  isStarted(containerId: string): boolean {
    return this.shared.manager.isStarted(containerId)
  }

  lastOutput(containerId: string, kind: ProbeKind): {output: string; exitCode?: number} | undefined {
    return this.shared.manager.lastOutput(containerId, kind)
  }

  /** Result changes of the containers this lease follows. */
  onResult(listener: (containerId: string, kind: ProbeKind, result: ProbeResult) => void): () => void {
    const unsubscribe = this.shared.manager.onResult((id, kind, result) => {
      if (this.followed.has(id)) listener(id, kind, result)
    })
    this.unsubscribes.add(unsubscribe)
    return () => {
      this.unsubscribes.delete(unsubscribe)
      unsubscribe()
    }
  }

  /** Lets go of every container and listener; waits for the probes in flight that stopped with them. */
  async stop(): Promise<void> {
    for (const unsubscribe of this.unsubscribes) unsubscribe()
    this.unsubscribes.clear()
    // Deleting from a Set while iterating it visits each remaining entry once.
    for (const id of this.followed) this.removeContainer(id)
    await this.shared.release(this)
  }
}

/** The shared manager of one runtime and who follows each of its containers, in the order they came. */
class SharedProbes {
  readonly manager: ProbeManager
  private readonly leases = new Set<ProbeLease>()
  private readonly followers = new Map<string, ProbeLease[]>()

  constructor(
    client: CriClient,
    private readonly onEmpty: () => void,
  ) {
    // The client of the first lease: the manager goes with the last lease, so a supervisor after `run`
    // (another client, without run's deadline) gets a manager of its own client.
    this.manager = new ProbeManager({
      client,
      onEvent: (event) => this.first(event.containerId)?.hooks.onEvent?.(event),
      onProbed: (target, kind, outcome) => this.first(target.containerId)?.hooks.onProbed?.(target, kind, outcome),
      onLate: (lateMs, containerId) => this.first(containerId)?.hooks.onLate?.(lateMs),
    })
  }

  lease(hooks: LeaseHooks): ProbeLease {
    const lease = new ProbeLease(this, hooks)
    this.leases.add(lease)
    return lease
  }

  follow(lease: ProbeLease, target: ProbeTarget): void {
    const followers = this.followers.get(target.containerId) ?? []
    // The first to follow a container starts its probes; a later lease shares them (a re-add by the same one restarts them).
    if (followers.length === 0 || followers[0] === lease) this.manager.addContainer(target)
    if (!followers.includes(lease)) this.followers.set(target.containerId, [...followers, lease])
  }

  unfollow(lease: ProbeLease, containerId: string): void {
    const left = (this.followers.get(containerId) ?? []).filter((candidate) => candidate !== lease)
    if (left.length > 0) {
      this.followers.set(containerId, left)
      return
    }

    this.followers.delete(containerId)
    this.manager.removeContainer(containerId)
  }

  async release(lease: ProbeLease): Promise<void> {
    this.leases.delete(lease)
    if (this.leases.size > 0) return
    this.onEmpty()
    await this.manager.stop()
  }

  private first(containerId: string): ProbeLease | undefined {
    return this.followers.get(containerId)?.[0]
  }
}

const byRuntime = new Map<string, SharedProbes>()

/** The process's probes of the runtime `client` speaks to: lease() a view of them. */
export function probesFor(client: CriClient): {lease(hooks?: LeaseHooks): ProbeLease} {
  const key = client.runtimeEndpoint ?? ''
  return {
    lease(hooks: LeaseHooks = {}) {
      let shared = byRuntime.get(key)
      if (!shared) {
        const created: SharedProbes = new SharedProbes(client, () => {
          if (byRuntime.get(key) === created) byRuntime.delete(key)
        })
        byRuntime.set(key, created)
        shared = created
      }

      return shared.lease(hooks)
    },
  }
}
