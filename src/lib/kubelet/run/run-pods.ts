/**
 * What `run` needs around SyncPod (kubelet/sync-pod.ts) when it starts several pods: a lock per
 * pod, the sandboxes that already exist for them, found by full name (name_namespace) in one
 * listing, and the outcome of a pod whose run threw before its own steps could report.
 */
import type {CriClient} from '../../cri/client.js'
import {asPodctlError, InterruptedError, NotStartedError, type PodctlError, UsageError} from '../../errors.js'
import {normalEvent} from '../../kube/events.js'
import {podFullName} from '../../kube/helpers.js'
import type {PodModel} from '../../manifest/model.js'
import {ImageManager} from '../../images/image-manager.js'
import type {ProgressView} from '../../images/pull-progress.js'
import {Limiter} from '../../util/concurrency.js'
import {checkAdmission} from '../lifecycle/admission.js'
import {checkRuntimeSupport} from '../lifecycle/runtime-support.js'
import {recordOfAnotherRuntimeError} from '../config/desired-state.js'
import {lockPods} from '../config/pod-lock.js'
import {otherTemplatePods, refuseOtherTemplates, retireOtherTemplates} from './other-templates.js'
import {sandboxesByFullName} from '../kuberuntime/sandbox.js'
import {type PodRunDeps, type PodRunOutcome, type PodRunSettings, runPod, type WaitMode} from './run-pod.js'

/** A bug or a failure outside the pod's own steps: the pod's outcome says so, and the other pods go on. */
export function failedOutcome(pod: PodModel, failure: PodctlError): PodRunOutcome {
  return {
    failure,
    result: {
      pod: pod.name,
      namespace: pod.namespace,
      uid: pod.uid,
      sandboxId: null,
      attempt: 0,
      ip: null,
      containers: [],
      phase: null,
      logDirectory: '',
      exitCode: null,
      rolledBack: false,
      removed: false,
      error: failure.toJSON(),
    },
  }
}

export interface RunPodsDeps extends Omit<PodRunDeps, 'client' | 'images'> {
  /** Pods in flight at once (--parallel), and image pulls in flight at once. */
  parallel: number
  /** Default: the kubelet's image manager on this client, --parallel pulls at once. */
  images?: PodRunDeps['images']
  /** Where that image manager's pull progress goes (run's spinner); none → no progress polling. */
  pullProgress?: ProgressView
  /**
   * That image manager's retries of a pull the registry refused (not found, unauthorized), as the
   * library asks (undefined: the kubelet's back-off); absent: --pull-retries, else none unless supervised.
   */
  refusedPullRetries?: number
}

/**
 * `run` for several pods: each pod's lock first (a second podctl running the same pod waits, then
 * finds the pod made and refuses or replaces it, as a run after it would), one listing of what
 * already exists, then SyncPod for each, --parallel at once. A pod whose run throws outside its own
 * steps gets a failed outcome; the others go on.
 */
export async function runPods(client: CriClient, pods: PodModel[], settings: PodRunSettings, deps: RunPodsDeps): Promise<PodRunOutcome[]> {
  // The kubelet's admission, before anything is created (OutOfcpu/OutOfmemory, user namespaces).
  if (settings.nodeCpus !== undefined && !settings.skipAdmission) {
    checkAdmission(pods, {cpus: settings.nodeCpus, memoryBytes: settings.nodeMemoryBytes})
  }

  await checkRuntimeSupport(client, pods, settings.runtimeHandler)
  const leave = settings.otherTemplates === 'leave'
  const superseded = leave ? [] : await otherTemplatePods(pods, settings.podDirRoot, client.runtimeEndpoint)
  if (superseded.length > 0 && !settings.replace) refuseOtherTemplates(superseded)
  // The library says what it wants (its pullRetries); the command line fails fast at the registry's
  // refusal unless --pull-retries or a supervisor keeps the kubelet's back-off.
  const refusedPullRetries =
    'refusedPullRetries' in deps ? deps.refusedPullRetries : (settings.pullRetries ?? (settings.supervised ? undefined : 0))
  const imageOptions = {parallel: deps.parallel, progress: deps.pullProgress, recordPullsIn: settings.podDirRoot, refusedPullRetries}
  const images = deps.images ?? new ImageManager(client, deps.events, imageOptions)
  const fullNames = pods.map((pod) => podFullName(pod.name, pod.namespace))
  const locks = await lockPods(settings.podDirRoot, fullNames, {
    deadline: settings.deadline,
    signal: deps.signal,
    onWait: (name, pid) => deps.events(normalEvent('Waiting', `Another podctl (pid ${pid}) is running pod ${name}; waiting for it`, name)),
  })
  try {
    const existing = await sandboxesByFullName(client, pods)
    // --parallel bounds the pods being started; a started pod's settle window (--wait running) gives
    // its slot to the next pod, so that short watch never delays the other starts.
    const slots = new Limiter(deps.parallel)
    const waits = waitModes(pods, settings.wait)
    const runs = new Map<string, Promise<PodRunOutcome>>()
    const start = (pod: PodModel) =>
      slots.run(async (release) => {
        try {
          // A uid whose pod directory holds another runtime's pod's record: running it here would take that directory over.
          const foreign = await recordOfAnotherRuntimeError(settings.podDirRoot, pod.uid, client.runtimeEndpoint)
          if (foreign) return failedOutcome(pod, foreign)
          const sandboxes = existing.get(podFullName(pod.name, pod.namespace)) ?? []
          // A pod that runs keeps its parsed manifest in its directory, for `sync` and `status` (recorded by runPod).
          const wait = waits.get(podFullName(pod.name, pod.namespace)) ?? settings.wait
          return await runPod(pod, sandboxes, {...settings, wait}, {...deps, images, client, onStarted: release})
        } catch (error) {
          return failedOutcome(pod, asPodctlError(error))
        }
      })
    const outcomes = await Promise.all(
      pods.map((pod) => {
        // A pod that waits for an earlier one holds no --parallel slot meanwhile (the earlier one may need it).
        const before = pod.startAfter && runs.get(podFullName(pod.startAfter.pod, pod.namespace))
        const outcome = before ? afterEarlier(pod, before, deps).then((skipped) => skipped ?? start(pod)) : start(pod)
        runs.set(podFullName(pod.name, pod.namespace), outcome)
        return outcome
      }),
    )
    if (superseded.length > 0 && outcomes.every((outcome) => !outcome.failure)) {
      await retireOtherTemplates(client, superseded, settings, {...deps, events: deps.events})
    }

    return outcomes
  } finally {
    await locks.release()
  }
}

/**
 * What each pod of the run waits for: the user's --wait, and for a pod another one starts after
 * (an OrderedReady StatefulSet's, a Job's beyond its parallelism), at least that pod's being ready
 * or completed, as the controller waits for it before it creates the next.
 */
export function waitModes(pods: readonly PodModel[], wait: WaitMode): Map<string, WaitMode> {
  const out = new Map<string, WaitMode>()
  for (const {startAfter, namespace} of pods) {
    if (!startAfter) continue
    const key = podFullName(startAfter.pod, namespace)
    const current = out.get(key) ?? wait
    out.set(key, current === 'completed' || startAfter.until === 'completed' ? 'completed' : 'ready')
  }

  return out
}

/** Waits for the earlier pod's run; the pod's own outcome when it is not to start (the earlier one failed, or Ctrl-C). */
async function afterEarlier(pod: PodModel, before: Promise<PodRunOutcome>, deps: RunPodsDeps): Promise<PodRunOutcome | undefined> {
  const {startAfter} = pod
  const object = podFullName(pod.name, pod.namespace)
  deps.events(normalEvent('Waiting', `${startAfter!.reason}; waiting`, object))
  const earlier = await before
  if (deps.signal.aborted) return failedOutcome(pod, new InterruptedError(`run of pod ${object} was interrupted before it started`))
  if (!earlier.failure) return undefined
  const what = startAfter!.until === 'ready' ? 'Running and Ready' : 'completed'
  const why = `${startAfter!.reason}, and pod ${startAfter!.pod} is not ${what} (${earlier.failure.code})`
  return failedOutcome(pod, new NotStartedError(`pod ${object} was not started: ${why}`))
}

/** run's --wait and --rm as one wait mode: --rm removes a completed pod, so it waits for completion. */
export function runWaitMode(wait: WaitMode | undefined, rm: boolean): WaitMode {
  if (rm && wait !== undefined && wait !== 'completed') {
    throw new UsageError(`--rm removes the pod after it completed, so it needs --wait completed, not --wait ${wait}`)
  }

  return wait ?? (rm ? 'completed' : 'running')
}
