/**
 * The kubelet's image manager (pkg/kubelet/images/image_manager.go EnsureImageExists), shared by
 * `run` and `pull`: default tag, pull-policy pre-check, pull with credentials, the kubelet's
 * events and error names, and its per-pod-and-image back-off ladder (10 s doubling to 300 s).
 */
import type {CriClient} from '../cri/client.js'
import {InterruptedError} from '../errors.js'
import {sleep} from '../util/concurrency.js'
import {formatGoDuration} from '../util/duration.js'
import type {DeepPartial, ImageSpec, PodSandboxConfig} from '../../generated/runtime/v1/api.js'
import {BackOff, IMAGE_BACKOFF_INITIAL_MS, IMAGE_BACKOFF_MAX_MS, ladderFromEnv} from '../kube/backoff.js'
import {type CredentialStore, DockerConfigKeyring, type RegistryAuth} from './credentials.js'
import {
  ErrImageNeverPullError,
  type ImageError,
  ImageInspectError,
  ImagePullBackOffError,
  InvalidImageNameError,
  passThrough,
  pullErrorText,
  PullFailed,
  pullFailure,
  refusedByRegistry,
  UnauthorizedError,
  withCredentialHint,
} from './errors.js'
import {ContentIngests} from '../containerd/content.js'
import {ImagePuller, type PullOutcome} from './puller.js'
import {PullRecords, pullRecordsDir} from './pull-records.js'
import {IngestPoller, type ProgressView} from './pull-progress.js'
import type {PullPolicy} from '../kube/labels.js'
import {goQuote} from '../util/go-quote.js'
import {applyDefaultImageTag, defaultPullPolicy, parseNormalizedReference} from './reference.js'
import {discardEvents, type EventSink, normalEvent, type PodEvent, warningEvent} from '../kube/events.js'

export const DEFAULT_PARALLEL_PULLS = 3

export interface EnsureImageOptions {
  /** Exactly as the user wrote it (event messages and the back-off key use it). */
  image: string
  /** Default defaultPullPolicy(image). */
  policy?: PullPolicy
  /** Back-off key `${podUid}_${image}` (kubelet); default ''. */
  podUid?: string
  /** Passed to PullImage; its annotations also go into the ImageSpec, as the kubelet sends pod annotations. */
  sandboxConfig?: DeepPartial<PodSandboxConfig>
  /** ImageSpec.runtime_handler (the pod's runtime class). */
  runtimeHandler?: string
  /** Explicit credentials (--creds/--auth); else the docker config lookup. */
  auth?: RegistryAuth
  /** Where `auth` came from, for messages (e.g. "--creds"); never the credentials themselves. */
  authSource?: string
  /** The pod's imagePullSecrets (tried first), and a key that tells pods with different ones apart. */
  pullSecrets?: CredentialStore
  pullSecretsKey?: string
  /** Epoch ms: back-off retries happen only while the next attempt fits before it. No deadline → one attempt. */
  deadline?: number
  /** Abort → stop waiting/retrying, reject with InterruptedError. */
  signal?: AbortSignal
  /** PodEvent.object for the events of this call, e.g. "container/app". */
  eventObject?: string
}

export interface EnsureImageResult {
  /** With the default tag applied. */
  image: string
  /** The image ID the runtime reports (ImageStatus image.id or PullImage imageRef). */
  imageRef: string
  pulled: boolean
  /** Duration of the successful PullImage call. */
  pullMs?: number
  /** From pull request to pulled, including waiting for a pull slot or a concurrent pull of the same image. */
  totalMs?: number
  /** From ImageStatus after the pull (or before it, when the image was present). */
  sizeBytes?: string
  /** The kubelet's event message for the outcome. */
  message: string
  policy: PullPolicy
  /** PullImage attempts made by this call (0 when the image was present). */
  attempts: number
  /** Where the credentials used came from ("--creds", a docker config file and key); absent when anonymous. */
  credentialSource?: string
}

export interface ImageManagerOptions {
  credentials?: CredentialStore
  /** Pulls in flight at once (the kubelet's maxParallelImagePulls); default 3. */
  parallel?: number
  /** Overrides the back-off ladder (tests); default 10 s → 300 s, or PODCTL_BACKOFF_BASE_MS. */
  backOff?: {initialMs: number; maxMs: number}
  now?: () => number
  /** Where pull progress goes, from containerd's content service on the image endpoint; none → no polling. */
  progress?: ProgressView
  /**
   * The pod directory root under which each successful pull is recorded for its runtime
   * (pull-records.ts): image garbage collection removes only images podctl pulled. None: no records
   * (crictl's pull, tests).
   */
  recordPullsIn?: string
  /**
   * How many times a pull the registry refused (refusedByRegistry: not found, unauthorized) is tried
   * again on the back-off ladder. 0 fails at the first such answer, in the registry's words: a typo'd
   * tag fails in seconds, not at the deadline. Undefined: the kubelet's way, retried while the deadline
   * allows (a supervisor, whose registry may yet get the image). Other failures keep the back-off.
   */
  refusedPullRetries?: number
}

export class ImageManager {
  private readonly backOff: BackOff
  private readonly lastFailure = new Map<string, ImageError>()
  private readonly puller: ImagePuller
  private readonly now: () => number
  private readonly recordPullsIn?: string
  private readonly refusedPullRetries?: number

  private readonly getClient: () => Promise<CriClient>

  /**
   * `client` may be a factory: it is called on the first RPC only, so a command whose images are
   * all invalid never connects to the runtime.
   */
  constructor(
    client: CriClient | (() => Promise<CriClient>),
    private readonly events: EventSink = discardEvents,
    options: ImageManagerOptions = {},
  ) {
    let pending: Promise<CriClient> | undefined
    this.getClient = typeof client === 'function' ? () => (pending ??= client()) : () => Promise.resolve(client)
    this.now = options.now ?? Date.now
    this.recordPullsIn = options.recordPullsIn
    this.refusedPullRetries = options.refusedPullRetries
    this.backOff = new BackOff({...(options.backOff ?? ladderFromEnv(IMAGE_BACKOFF_INITIAL_MS, IMAGE_BACKOFF_MAX_MS)), now: this.now})
    const {progress} = options
    const poller = progress && new IngestPoller(async () => new ContentIngests((await this.getClient()).imageEndpoint), progress)
    this.puller = new ImagePuller(
      this.getClient,
      options.credentials ?? new DockerConfigKeyring(),
      options.parallel ?? DEFAULT_PARALLEL_PULLS,
      poller,
    )
  }

  async ensureImage(options: EnsureImageOptions): Promise<EnsureImageResult> {
    const requested = options.image
    const emit = (event: PodEvent) => this.events({...event, object: options.eventObject ?? event.object})
    throwIfAborted(options.signal)

    let image: string
    try {
      image = applyDefaultImageTag(requested)
    } catch (error) {
      if (error instanceof InvalidImageNameError) emit(warningEvent('InspectFailed', error.message))
      throw error
    }

    const policy = options.policy ?? defaultPullPolicy(requested)
    const spec: DeepPartial<ImageSpec> = {
      image,
      annotations: {...options.sandboxConfig?.annotations} as Record<string, string>,
      runtimeHandler: options.runtimeHandler ?? '',
    }

    if (policy !== 'Always') {
      let present: {id: string; size?: string} | undefined
      try {
        const status = await (await this.getClient()).image('imageStatus', {image: spec}, {signal: options.signal})
        present = status.image?.id ? {id: status.image.id, size: status.image.size} : undefined
      } catch (error) {
        if (passThrough(error)) throw error
        const message = `Failed to inspect image ${goQuote(requested)}: ${pullErrorText(error)}`
        emit(warningEvent('InspectFailed', message))
        throw new ImageInspectError(message, requested)
      }

      if (present) {
        const message = `Container image ${goQuote(requested)} already present on machine`
        emit(normalEvent('Pulled', message))
        return {image, imageRef: present.id, pulled: false, sizeBytes: present.size, message, policy, attempts: 0}
      }

      if (policy === 'Never') {
        const message = `Container image ${goQuote(requested)} is not present with pull policy of Never`
        emit(warningEvent('ErrImageNeverPull', message))
        throw new ErrImageNeverPullError(message, requested)
      }
    }

    const reference = parseNormalizedReference(image)
    const backOffKey = `${options.podUid ?? ''}_${requested}`
    let attempts = 0
    let refusals = 0

    // Still inside the window an earlier call's failure opened (the kubelet's IsInBackOffSinceUpdate).
    const inherited = this.backOff.remaining(backOffKey)
    if (inherited > 0) {
      const previous = this.lastFailure.get(backOffKey)
      const message = `Back-off pulling image ${goQuote(requested)}${previous ? `: ${previous.reason}: ${previous.message}` : ''}`
      emit(normalEvent('BackOff', message))
      if (!this.fitsBefore(inherited, options.deadline)) throw new ImagePullBackOffError(message, requested)
      await sleep(inherited, options.signal)
    }

    for (;;) {
      const attemptStart = this.now()
      emit(normalEvent('Pulling', `Pulling image ${goQuote(requested)}`))
      attempts++
      let outcome: PullOutcome
      try {
        outcome = await this.puller.pull(image, spec, reference, options)
      } catch (error) {
        if (passThrough(error)) throw error
        const text = pullErrorText(error)
        emit(warningEvent('Failed', `Failed to pull image ${goQuote(requested)}: ${text}`))
        let failure = pullFailure(text, requested)
        if (failure instanceof UnauthorizedError && error instanceof PullFailed) failure = withCredentialHint(failure, error)
        this.lastFailure.set(backOffKey, failure)
        // The window is measured from this failure, whatever the clock does while we decide.
        const windowMs = this.backOff.next(backOffKey)
        if (refusedByRegistry(failure)) refusals++
        if (!this.fitsBefore(windowMs, options.deadline) || refusals > (this.refusedPullRetries ?? Infinity)) throw failure
        emit(normalEvent('BackOff', `Back-off pulling image ${goQuote(requested)}: ${failure.reason}: ${failure.message}`))
        await sleep(windowMs, options.signal)
        continue
      }

      const totalMs = this.now() - attemptStart
      this.backOff.gc()
      this.lastFailure.delete(backOffKey)
      const pulled = await this.pulledImage(outcome.imageRef, spec, options.signal)
      await this.recordPull({image, imageRef: outcome.imageRef, imageId: pulled.id ?? outcome.imageRef})
      const sizeBytes = pulled.size
      const message =
        `Successfully pulled image ${goQuote(requested)} in ${formatGoDuration(outcome.pullMs)}` +
        ` (${formatGoDuration(totalMs)} including waiting). Image size: ${sizeBytes ?? '0'} bytes.`
      emit(normalEvent('Pulled', message))
      return {
        image,
        imageRef: outcome.imageRef,
        pulled: true,
        pullMs: outcome.pullMs,
        totalMs,
        sizeBytes,
        message,
        policy,
        attempts,
        credentialSource: outcome.credentialSource,
      }
    }
  }

  /** A retry after `waitMs` starts before the deadline (no deadline: never retry). */
  private fitsBefore(waitMs: number, deadline: number | undefined): boolean {
    return deadline !== undefined && this.now() + waitMs < deadline
  }

  /** Best effort, like the kubelet: a failed ImageStatus after a good pull only loses the size (and the ID the record prefers). */
  private async pulledImage(imageRef: string, spec: DeepPartial<ImageSpec>, signal?: AbortSignal): Promise<{size?: string; id?: string}> {
    try {
      const status = await (await this.getClient()).image('imageStatus', {image: {...spec, image: imageRef}}, {signal})
      return {size: status.image?.size, id: status.image?.id || undefined}
    } catch {
      return {}
    }
  }

  /** The pull's record, when this manager records pulls (a failure only leaves the image to the user). */
  private async recordPull(pull: {image: string; imageRef: string; imageId: string}): Promise<void> {
    if (this.recordPullsIn === undefined) return
    const dir = pullRecordsDir(this.recordPullsIn, (await this.getClient()).runtimeEndpoint)
    await new PullRecords(dir).record({...pull, pulledMs: this.now()})
  }
}

function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw new InterruptedError('interrupted')
}
