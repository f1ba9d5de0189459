/**
 * The kubelet's pod workers (pod_workers.go): the one way to act on a pod. Every source of pods —
 * `run` and its waits, `sync`, `sync -f`, a watched directory, `kill`, the library, a supervisor's
 * worker per pod — asks the pod's worker here, and only here is SyncPod (kuberuntime/sync-pod.ts)
 * called, a pod's sandbox created or a pod killed. One piece of work runs at a time for a pod, in the
 * order asked (two sources never act on one pod at once in a process; across processes the pod's
 * pass lock does the same), and a pod goes syncing → terminating → terminated, never back:
 * - `create`: a new pod's first steps (the kubelet's SyncPodCreate: volumes, RunPodSandbox, /etc/hosts);
 * - `sync`: one SyncPod pass — unless the pod's termination is recorded (config/termination.ts), which
 *   is then finished instead: a kill once asked for is never lost;
 * - `terminate`: the termination recorded first (for a pod podctl recorded), then the kubelet's kill of
 *   every sandbox, asked again while the runtime does not answer until the caller's deadline; what is
 *   left undone stays recorded for the next worker to finish;
 * - `rollBack`: what a failed start made, removed (kuberuntime/rollback.ts), its termination recorded first.
 */
import type {CriClient} from '../../cri/client.js'
import {asPodctlError, DeadlineExceededError, type PodctlError, RuntimeUnreachableError} from '../../errors.js'
import type {PodSandbox} from '../../../generated/runtime/v1/api.js'
import {warningEvent} from '../../kube/events.js'
import {podFullName} from '../../kube/helpers.js'
import type {PodModel} from '../../manifest/model.js'
import {sleep} from '../../util/concurrency.js'
import {lockPods, type PodLocks} from '../config/pod-lock.js'
import {recordTermination} from '../config/termination.js'
import {readTermination, type TerminationIntent} from '../config/termination-record.js'
import {createSandboxForPod, type CreateSandboxHooks, type CreateSandboxSettings} from '../kuberuntime/create-sandbox.js'
import {removePodRecord} from '../records/gone-pods.js'
import {killPod, KillPodError, type KillPodOptions, type KillPodResult} from '../kuberuntime/kill.js'
import {type RollBackOptions, rollBackPod} from '../kuberuntime/rollback.js'
import type {SandboxContext} from '../kuberuntime/sandbox.js'
import {type PodSyncResult, type SyncDeps, syncPod, type SyncSettings} from '../kuberuntime/sync-pod.js'

/** The first pause before a kill the runtime did not answer is asked again; it doubles up to the most. */
const RETRY_FIRST_MS = 1000
const RETRY_MOST_MS = 15_000

export interface TerminateOptions extends Omit<KillPodOptions, 'forget'> {
  /** Who asks, recorded with the termination and said in messages ("podctl kill", "its manifest was removed"). */
  requestedBy: string
  /**
   * The pod is no longer wanted: its termination is recorded first and its record goes with it (kill,
   * a removed manifest, --rm). Without it, the pod's record stays (a replacement keeps it).
   */
  forget?: boolean
  /** Epoch ms: a runtime that does not answer is asked again until then; none: not asked again. */
  retryUntil?: number
  /** Hold the pod's pass lock for the kill (the default, when podDirRoot is given); false when the caller holds it. */
  lock?: false | {deadline?: number; onWait?: (fullName: string, holderPid: number) => void}
  /**
   * The pod's record, when podctl recorded it: its termination is recorded under its uid even before
   * its sandboxes are listed, and when the runtime has none of them, only the record goes.
   */
  record?: PodModel
}

/** The pod's sandboxes, or how to list them once its lock is held (a listing that fails leaves the termination recorded). */
export type SandboxesToKill = readonly PodSandbox[] | (() => Promise<readonly PodSandbox[]>)

/** A new pod's sandbox: its attempt, where it goes, and who hears of it. */
export interface CreateRequest {
  attempt: number
  settings: CreateSandboxSettings
  hooks: CreateSandboxHooks
}

/** How many terminated pods a process remembers (a supervisor that runs for months sees many come and go). */
const TERMINATED_REMEMBERED = 10_000

export class PodWorkers {
  /** The work in flight for each pod (name_namespace): the next waits for it. */
  private readonly tails = new Map<string, Promise<unknown>>()
  /**
   * The uids this process terminated: a sync asked for one afterwards (queued behind the kill) does
   * nothing, as the kubelet's worker never syncs a pod it finished; only a new `create` brings a uid back.
   */
  private readonly finished = new Set<string>()

  /** A new pod's sandbox (the kubelet's UpdatePod with SyncPodCreate); SyncPod passes then start its containers. */
  async create(client: CriClient, pod: PodModel, {attempt, settings, hooks}: CreateRequest): Promise<SandboxContext & {ips: string[]}> {
    return this.serially(podFullName(pod.name, pod.namespace), async () => {
      this.finished.delete(pod.uid)
      return createSandboxForPod(client, pod, attempt, settings, hooks)
    })
  }

  /**
   * One SyncPod pass for the pod (the kubelet's UpdatePod with SyncPodSync), after any work in flight
   * for it; a pod whose termination is recorded is terminated instead (`terminated` in the result).
   */
  async sync(pod: PodModel, sandboxes: readonly PodSandbox[], settings: SyncSettings, deps: SyncDeps): Promise<PodSyncResult> {
    return this.serially(podFullName(pod.name, pod.namespace), async () => {
      if (this.finished.has(pod.uid)) return {pod: pod.name, namespace: pod.namespace, uid: pod.uid, did: [], terminated: true}
      const intent = readTermination(settings.podDirRoot, pod.uid)
      return intent ? this.finishTermination(pod, sandboxes, intent, {settings, deps}) : syncPod(pod, sandboxes, settings, deps)
    })
  }

  /** The kubelet's UpdatePod with SyncPodKill: terminating, then terminated. */
  async terminate(client: CriClient, fullName: string, sandboxes: SandboxesToKill, options: TerminateOptions): Promise<KillPodResult> {
    // Recorded before the pod's pass lock is waited for: a `run` holding it sees the termination at its
    // next look and gives way (run/pod-wait.ts), as a kill preempts the sync in flight in the kubelet.
    const known = typeof sandboxes === 'function' ? [] : sandboxes
    const recorded = options.forget ? await recordIntent(client, known, options) : false
    return this.serially(fullName, async () => {
      const locks = await lockFor(fullName, options)
      try {
        const killed = await listed(sandboxes, fullName, recorded)
        const result = await this.kill(client, fullName, killed, {...options, recorded})
        if (options.forget) this.remember([...killed.map((sandbox) => sandbox.metadata?.uid ?? ''), options.record?.uid ?? ''])
        return result
      } finally {
        await locks?.release()
      }
    })
  }

  /**
   * What a failed or interrupted start of `pod` made, removed; its termination is recorded first, so a
   * rollback the runtime does not let finish is finished by the next worker instead of leaving a pod behind.
   */
  async rollBack(
    client: CriClient,
    pod: PodModel,
    failure: PodctlError,
    options: RollBackOptions,
  ): Promise<{failure: PodctlError; rolledBack: boolean}> {
    return this.serially(podFullName(pod.name, pod.namespace), async () => {
      let terminationRecorded = false
      if (options.fromAttempt === undefined) {
        const intent = {requestedAt: new Date().toISOString(), requestedBy: 'a rollback of a failed start'}
        terminationRecorded = await recordTermination(options.podDirRoot, pod.uid, client.runtimeEndpoint, intent).catch(() => false)
      }

      return rollBackPod(client, pod, failure, {...options, terminationRecorded})
    })
  }

  /** A pod met by a sync while its termination is recorded: the termination is carried out, as recorded. */
  private async finishTermination(
    pod: PodModel,
    sandboxes: readonly PodSandbox[],
    intent: TerminationIntent,
    {settings, deps}: {settings: SyncSettings; deps: SyncDeps},
  ): Promise<PodSyncResult> {
    const fullName = podFullName(pod.name, pod.namespace)
    const result: PodSyncResult = {pod: pod.name, namespace: pod.namespace, uid: pod.uid, did: [], terminated: true}
    const own = sandboxes.filter((sandbox) => sandbox.metadata?.uid === pod.uid)
    try {
      await this.kill(deps.client, fullName, own, {
        requestedBy: intent.requestedBy,
        forget: true,
        recorded: true,
        record: pod,
        gracePeriodSeconds: intent.gracePeriodSeconds,
        force: intent.force,
        events: deps.events,
        signal: deps.signal,
        podDirRoot: settings.podDirRoot,
        podLogsRoot: settings.logsRoot,
        retryUntil: settings.deadline,
      })
      this.remember([pod.uid])
      result.did.push(`terminated: ${intent.requestedBy} asked for it${intent.requestedAt ? ` at ${intent.requestedAt}` : ''}`)
    } catch (error) {
      result.failure = asPodctlError(error)
    }

    return result
  }

  /** killPod, asked again while the runtime does not answer and the caller's deadline allows. */
  private async kill(
    client: CriClient,
    fullName: string,
    sandboxes: readonly PodSandbox[],
    options: TerminateOptions & {recorded: boolean},
  ): Promise<KillPodResult> {
    const {forget, retryUntil, record, recorded} = options
    // killPod reads its own options; the worker's (requestedBy, lock, record, ...) ride along unread.
    const kill: KillPodOptions = options
    if (sandboxes.length === 0) return removeRecordOnly(fullName, forget ? record : undefined, options)
    for (let pauseMs = RETRY_FIRST_MS; ; pauseMs = Math.min(pauseMs * 2, RETRY_MOST_MS)) {
      try {
        // With keep the pod stays stopped and unwanted: its record goes now, as nothing will finish it.
        return await killPod(client, [...sandboxes], {...kill, forget: Boolean(forget && kill.keep)})
      } catch (error) {
        const failure = asPodctlError(error)
        if (!mayRetry(failure) || kill.signal?.aborted || retryUntil === undefined || Date.now() + pauseMs > retryUntil) {
          throw recorded ? stillRecorded(failure, fullName) : failure
        }

        kill.events?.(warningEvent('FailedKillPod', `${failure.message}; trying again in ${pauseMs / 1000}s`, fullName))
        await sleep(pauseMs, kill.signal)
      }
    }
  }

  private remember(uids: readonly string[]): void {
    for (const uid of uids) if (uid) this.finished.add(uid)
    for (const uid of this.finished) {
      if (this.finished.size <= TERMINATED_REMEMBERED) break
      this.finished.delete(uid)
    }
  }

  private async serially<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve()
    const mine = before.catch(() => {}).then(work)
    const tail = mine.catch(() => {})
    this.tails.set(key, tail)
    try {
      return await mine
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
  }
}

/** The pod's pass lock for a kill, unless the caller holds it (or there is no pod directory root to keep it in). */
async function lockFor(fullName: string, options: TerminateOptions): Promise<PodLocks | undefined> {
  if (options.lock === false || !options.podDirRoot) return undefined
  const {deadline = options.retryUntil, onWait} = options.lock ?? {}
  return lockPods(options.podDirRoot, [fullName], {deadline, signal: options.signal, onWait})
}

async function listed(sandboxes: SandboxesToKill, fullName: string, recorded: boolean): Promise<readonly PodSandbox[]> {
  if (typeof sandboxes !== 'function') return sandboxes
  try {
    return await sandboxes()
  } catch (error) {
    const failure = asPodctlError(error)
    throw recorded ? stillRecorded(failure, fullName) : failure
  }
}

/** terminating.json for each pod (uid) the sandboxes or the record belong to that podctl recorded for this runtime. */
async function recordIntent(client: CriClient, sandboxes: readonly PodSandbox[], options: TerminateOptions): Promise<boolean> {
  if (!options.podDirRoot || options.keep) return false
  const intent: TerminationIntent = {
    requestedAt: new Date().toISOString(),
    requestedBy: options.requestedBy,
    ...(options.gracePeriodSeconds === undefined ? {} : {gracePeriodSeconds: options.gracePeriodSeconds}),
    ...(options.force ? {force: true} : {}),
  }
  const uids = new Set([...sandboxes.map((sandbox) => sandbox.metadata?.uid ?? ''), options.record?.uid ?? ''].filter(Boolean))
  let recorded = false
  for (const uid of uids) recorded = (await recordTermination(options.podDirRoot, uid, client.runtimeEndpoint, intent)) || recorded
  return recorded
}

/** A pod the runtime has no sandbox of: its record, directory and logs go, when it is no longer wanted. */
async function removeRecordOnly(fullName: string, record: PodModel | undefined, options: TerminateOptions): Promise<KillPodResult> {
  if (record && options.podDirRoot && options.podLogsRoot !== undefined) {
    await removePodRecord(record, {podDirRoot: options.podDirRoot, logsRoot: options.podLogsRoot})
  }

  return {pod: fullName, sandboxIds: [], containersStopped: 0, removed: true, recordOnly: true, durationMs: 0}
}

/** A runtime that did not answer (or not in time) may answer the same kill later; a refusal will not change. */
function mayRetry(failure: PodctlError): boolean {
  const causes = failure instanceof KillPodError ? failure.causes : [failure]
  return causes.some((cause) => cause instanceof RuntimeUnreachableError || cause instanceof DeadlineExceededError)
}

/** The kill failed, but it is recorded: say so, and who will finish it. */
function stillRecorded(failure: PodctlError, fullName: string): PodctlError {
  const at = fullName.lastIndexOf('_')
  const again = `podctl kill ${fullName.slice(0, at)} -n ${fullName.slice(at + 1)}`
  failure.message += `; its termination is recorded: a running supervisor, podctl sync or ${again} finishes it`
  return failure
}

/** One per process: every source of pods in it goes through the same workers. */
export const podWorkers = new PodWorkers()
