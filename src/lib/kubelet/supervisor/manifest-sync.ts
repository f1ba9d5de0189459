/**
 * The watched manifest source's pods kept as its files say (config/manifest-source.ts), as the
 * kubelet's sync loop turns its file source's ADD, UPDATE and REMOVE into pod work:
 * - a pod new to the node runs as `podctl run` runs it (admission, pulls, rollback on failure;
 *   retried after a back-off of 10 s doubling to 5 min while it fails);
 * - a pod whose manifest changed is applied as `sync -f` applies it (only containers whose hash
 *   changed are recreated; a sandbox change recreates the pod with attempt + 1); a pod recorded
 *   but lost by the runtime comes back in its own pod directory;
 * - a pod no file names any more is killed as `podctl kill` kills it, also when its file went
 *   while podctl was not running (each pod's record names its file);
 * - a file that does not parse, is empty or is refused is said once (ManifestInvalid, naming the file
 *   and the field) and its pods are left as they were until it is fixed; so are the pods of a file
 *   still being written or that cannot be read, and those of every file of a watched directory that
 *   cannot be read or trusted (moved away, removed, others-writable): the source's `kept` paths.
 * The pod workers (supervisor.ts) restart, probe and recreate these pods between changes.
 */
import {dirname} from 'node:path'

import type {CriClient} from '../../cri/client.js'
import {asPodctlError} from '../../errors.js'
import type {PodSandbox} from '../../../generated/runtime/v1/api.js'
import {type EventSink, normalEvent, warningEvent} from '../../kube/events.js'
import {podFullName} from '../../kube/helpers.js'
import type {PodModel} from '../../manifest/model.js'
import {settleLimit} from '../../util/concurrency.js'
import {digestOf} from '../config/manifest-files.js'
import {isKept, type SourceUpdate} from '../config/manifest-source.js'
import {rollouts} from '../config/superseded.js'
import type {ImageEnsurer} from '../kuberuntime/container.js'
import {recordsOfRuntime} from '../records/gone-pods.js'
import {podWorkers} from '../workers/pod-workers.js'
import {applyPod} from '../workers/apply-pod.js'
import {sandboxesByFullName} from '../kuberuntime/sandbox.js'
import {runPods} from '../run/run-pods.js'
import type {PodRunSettings} from '../run/run-pod.js'
import {OWNER_CHECK_MS, type RuntimeOwnerCheck} from './runtime-owner-watch.js'

const RETRY_FIRST_MS = 10_000
const RETRY_MAX_MS = 300_000

export type ManifestSyncSettings = Omit<PodRunSettings, 'wait' | 'replace' | 'keepOnFailure' | 'remove' | 'deadline'>

export interface ManifestSyncDeps {
  client: CriClient
  images: ImageEnsurer
  events: EventSink
  signal: AbortSignal
  parallel: number
  /** Whether a kubelet owns the runtime now: nothing is started, applied or killed while one does. */
  runtimeOwner?: RuntimeOwnerCheck
}

interface Wanted {
  pod: PodModel
  file: string
  fingerprint: string
}

export class ManifestSync {
  /** What was last applied to each pod (name_namespace): a pod is acted on again only when that changes. */
  private readonly applied = new Map<string, {fingerprint: string; file: string}>()
  private readonly retries = new Map<string, {at: number; delayMs: number}>()
  /** What was last said of each file, so each problem is said once. */
  private readonly told = new Map<string, string>()
  private wanted = new Map<string, Wanted>()
  /** Pods left as they are: their file is broken, unreadable or still being written. */
  private kept = new Set<string>()
  /** The source's kept paths: files, and watched directories whose every file's pods are kept. */
  private keptFiles: ReadonlySet<string> = new Set<string>()
  private first = true
  /** Epoch ms of the last look that found a kubelet owning the runtime; 0 when none did. */
  private ownerSeenAt = 0

  constructor(
    /** The watched paths, absolute. */
    private readonly watched: readonly string[],
    private readonly settings: ManifestSyncSettings,
    private readonly deps: ManifestSyncDeps,
  ) {}

  /** The pods the files name now, kept ones included: what the supervisor supervises. */
  names(): Set<string> {
    return new Set([...this.wanted.keys(), ...this.kept])
  }

  /** A new state of the files: every pod that changed is run, applied or killed. */
  async update(update: SourceUpdate): Promise<void> {
    this.tell(update)
    this.keptFiles = update.kept
    const wanted = new Map<string, Wanted>()
    for (const reading of update.files) {
      for (const pod of reading.pods ?? []) {
        const name = podFullName(pod.name, pod.namespace)
        const other = wanted.get(name)
        if (other) {
          this.say(reading.path, 'warn', `${reading.path}: pod ${name} is also defined in ${other.file}; the first file's is run`)
          continue
        }

        const fingerprint = digestOf(`${JSON.stringify({...pod, uid: '', objects: undefined})}${reading.feedDigest ?? ''}`)
        wanted.set(name, {pod: {...pod, manifestFile: reading.path}, file: reading.path, fingerprint})
      }
    }

    this.wanted = wanted
    await this.reconcile()
  }

  /** Pods whose run or apply failed are tried again once their back-off is over. */
  async retryDue(now = Date.now()): Promise<void> {
    const ownerMayBeGone = this.ownerSeenAt > 0 && now - this.ownerSeenAt >= OWNER_CHECK_MS
    if (ownerMayBeGone || [...this.retries.values()].some((retry) => retry.at <= now)) await this.reconcile(now)
  }

  private async reconcile(now = Date.now()): Promise<void> {
    const {client} = this.deps
    // Beside a kubelet every pod started here would be killed (the supervisor says so): the files wait.
    const owner = await this.deps.runtimeOwner?.().catch(() => undefined)
    this.ownerSeenAt = owner === undefined ? 0 : now
    if (owner !== undefined) return
    const records = await recordsOfRuntime(this.settings.podDirRoot, client.runtimeEndpoint)
    const recorded = new Map(records.map((pod) => [podFullName(pod.name, pod.namespace), pod]))
    this.kept = this.keptPods(records)
    const applies = new Map<string, () => Promise<boolean>>()
    for (const [name, wanted] of this.wanted) {
      if (this.kept.has(name)) continue
      const retry = this.retries.get(name)
      const same = this.applied.get(name)?.fingerprint === wanted.fingerprint
      if ((same && !retry) || (retry && retry.at > now)) continue
      applies.set(name, () => this.apply(name, wanted, recorded.get(name)))
    }

    const removals = new Map([...this.unwanted(recorded)].map((name) => [name, () => this.remove(name, recorded.get(name))]))
    const work = [...this.rollingUpdates(records, applies, removals), ...applies.values(), ...removals.values()]
    this.first = false
    await settleLimit(work, this.deps.parallel, async (task) => {
      await task()
    })
  }

  /**
   * A workload whose template changed names new pods: per workload, one replica after another, the new
   * pod is applied and then the pod it supersedes removed (config/superseded.ts), as a rolling update;
   * replicas the workload no longer has go last. Takes those applies and removals out of the maps.
   */
  private rollingUpdates(
    records: readonly PodModel[],
    applies: Map<string, () => Promise<boolean>>,
    removals: Map<string, () => Promise<void>>,
  ): Array<() => Promise<void>> {
    const take = <T>(map: Map<string, T>, name: string): T | undefined => {
      const value = map.get(name)
      map.delete(name)
      return value
    }

    return rollouts(
      [...this.wanted.values()].map((wanted) => wanted.pod),
      records,
    ).map((rollout) => {
      const steps = rollout.steps.map(({pod, replaces}) => ({
        apply: take(applies, podFullName(pod.name, pod.namespace)),
        remove: replaces && take(removals, podFullName(replaces.name, replaces.namespace)),
      }))
      const leftover = rollout.leftover.flatMap((pod) => take(removals, podFullName(pod.name, pod.namespace)) ?? [])
      return async () => {
        for (const step of steps) if ((await (step.apply?.() ?? true)) && step.remove) await step.remove()
        for (const remove of leftover) await remove()
      }
    })
  }

  /** The pods of files broken, unreadable or being written: what was applied from them, and what records name them. */
  private keptPods(records: readonly PodModel[]): Set<string> {
    const kept = new Set([...this.applied].filter(([, {file}]) => isKept(this.keptFiles, file)).map(([name]) => name))
    for (const pod of records)
      if (pod.manifestFile && isKept(this.keptFiles, pod.manifestFile)) kept.add(podFullName(pod.name, pod.namespace))
    return kept
  }

  /** Pods applied that no file names now; on the first look also those whose file went while podctl was not running. */
  private unwanted(recorded: ReadonlyMap<string, PodModel>): Set<string> {
    const unwanted = (name: string) => !this.wanted.has(name) && !this.kept.has(name)
    const gone = new Set([...this.applied.keys()].filter((name) => unwanted(name)))
    if (this.first) for (const [name, pod] of recorded) if (this.isWatched(pod.manifestFile) && unwanted(name)) gone.add(name)
    return gone
  }

  private isWatched(file: string | undefined): boolean {
    return file !== undefined && (this.watched.includes(file) || this.watched.includes(dirname(file)))
  }

  /** Runs a pod new to the node, or applies its manifest to the pod podctl recorded (keeping its uid and directory). */
  private async apply(name: string, wanted: Wanted, record: PodModel | undefined): Promise<boolean> {
    const {client, events, signal} = this.deps
    const pod = record && wanted.pod.uidGenerated ? {...wanted.pod, uid: record.uid} : wanted.pod
    let failure: string | undefined
    try {
      if (record) {
        const listed = async (): Promise<PodSandbox[]> => (await sandboxesByFullName(client, [pod])).get(name) ?? []
        const result = await applyPod(pod, listed, this.settings, this.deps)
        failure = result.failure?.message
        if (!failure && result.did.length > 0) events(normalEvent('Applied', `${wanted.file}: ${result.did.join('; ')}`, name))
      } else if ((await sandboxesByFullName(client, [pod])).get(name)?.length) {
        failure =
          'a pod of this name runs that podctl did not record (made by crictl or a kubelet?); left alone: remove it or rename the pod'
      } else {
        const run = {
          ...this.settings,
          wait: 'none' as const,
          replace: false,
          keepOnFailure: false,
          remove: false,
          otherTemplates: 'leave' as const,
        }
        const [outcome] = await runPods(client, [pod], run, this.deps)
        failure = outcome.failure?.message
        if (!failure) events(normalEvent('Added', `${wanted.file}: pod started (attempt ${outcome.result.attempt})`, name))
      }
    } catch (error) {
      if (signal.aborted) return false
      failure = asPodctlError(error).message
    }

    if (failure) {
      const delayMs = Math.min(RETRY_MAX_MS, (this.retries.get(name)?.delayMs ?? RETRY_FIRST_MS / 2) * 2)
      this.retries.set(name, {at: Date.now() + delayMs, delayMs})
      events(warningEvent('FailedSync', `${wanted.file}: ${failure}; trying again in ${delayMs / 1000}s`, name))
      return false
    }

    this.retries.delete(name)
    this.applied.set(name, {fingerprint: wanted.fingerprint, file: wanted.file})
    return true
  }

  /** Kills a pod no file names any more, as `podctl kill` does (its record first, so no worker brings it back). */
  private async remove(name: string, record: PodModel | undefined): Promise<void> {
    const {client, events} = this.deps
    const file = this.applied.get(name)?.file ?? record?.manifestFile
    this.applied.delete(name)
    this.retries.delete(name)
    if (!record) return
    events(normalEvent('Removed', `${file ?? 'its manifest'} no longer has the pod: killing it`, name))
    // Its termination is recorded before anything else: a runtime that does not answer now has it
    // carried out by the pod's worker once it does (the supervisor keeps terminating pods selected).
    const sandboxes = async () =>
      ((await sandboxesByFullName(client, [record])).get(name) ?? []).filter((s) => s.metadata?.uid === record.uid)
    try {
      await podWorkers.terminate(client, name, sandboxes, {
        requestedBy: `${file ?? 'its manifest'} no longer has the pod`,
        forget: true,
        record,
        podDirRoot: this.settings.podDirRoot,
        podLogsRoot: this.settings.logsRoot,
        events,
      })
    } catch (error) {
      events(warningEvent('FailedKill', asPodctlError(error).message, name))
    }
  }

  /** Each file's error, warnings and unreadability, said once per new message. */
  private tell(update: SourceUpdate): void {
    // A problem gone is forgotten, so its return is said again: a watched path back is said readable, a file gone is not.
    const current = new Set([...update.unreadable.keys(), ...update.settling, ...update.files.map((reading) => reading.path)])
    for (const path of [...this.told.keys()].filter((told) => !current.has(told))) {
      if (this.watched.includes(path) && this.told.get(path)?.startsWith('!')) this.say(path, 'note', '')
      this.told.delete(path)
    }

    for (const [path, why] of update.unreadable) this.say(path, 'warn', `${why}; its pods are left as they are`)
    for (const reading of update.files) {
      if (reading.error)
        this.say(reading.path, 'warn', `${reading.error.split('\n').join(' ')}; its pods are left as they are until it is fixed`)
      else this.say(reading.path, 'note', reading.warnings.join('; '))
    }
  }

  private say(path: string, kind: 'warn' | 'note', message: string): void {
    const before = this.told.get(path)
    if (before === message || before === `!${message}`) return
    this.told.set(path, message)
    if (kind === 'note' && before?.startsWith('!')) this.deps.events(normalEvent('ManifestFixed', `${path} can be read again`, path))
    if (kind === 'warn') this.told.set(path, `!${message}`)
    if (message === '') return
    this.deps.events(kind === 'warn' ? warningEvent('ManifestInvalid', message, path) : normalEvent('ManifestRead', message, path))
  }
}
