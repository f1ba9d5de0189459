/**
 * The kubelet's image manager (pkg/kubelet/images/image_manager.go EnsureImageExists), shared by
 * `run` and `pull`: default tag, pull-policy pre-check, pull with credentials, the kubelet's
 * events and error names, and its per-pod-and-image back-off ladder (10 s doubling to 300 s).
 */
import type {CriClient} from '../cri/client.js'
import {InterruptedError, PodctlError, RuntimeUnreachableError, UnimplementedError} from '../errors.js'
import {sleep} from '../util/concurrency.js'
import {formatGoDuration} from '../util/duration.js'
import type {AuthConfig, DeepPartial, ImageSpec, PodSandboxConfig} from '../../generated/runtime/v1/api.js'
import {BackOff, IMAGE_BACKOFF_INITIAL_MS, IMAGE_BACKOFF_MAX_MS, ladderFromEnv} from '../kube/backoff.js'
import {DockerConfigKeyring, type CredentialStore, type RegistryAuth, type RegistryCredential} from './credentials.js'
import {
  ErrImageNeverPullError,
  ImageInspectError,
  ImagePullBackOffError,
  InvalidImageNameError,
  kubeletErrorText,
  pullFailure,
  UnauthorizedError,
  type ImageError,
} from './errors.js'
import {ImageReferenceSyntaxError, parseNormalizedReference, type ImageReference} from './reference.js'
import {discardEvents, normalEvent, warningEvent, type EventSink, type PodEvent} from '../kube/events.js'

export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never'
export const PULL_POLICIES: readonly PullPolicy[] = ['Always', 'IfNotPresent', 'Never']

export const DEFAULT_PARALLEL_PULLS = 3

/** parsers.ParseImageName: the parsed reference plus the tag the kubelet assumes ("latest" when neither tag nor digest). */
export function parseImageName(image: string): ImageReference & {defaultedTag: string} {
  let reference: ImageReference
  try {
    reference = parseNormalizedReference(image)
  } catch (error) {
    if (error instanceof ImageReferenceSyntaxError) {
      throw new InvalidImageNameError(`couldn't parse image name ${goQuote(image)}: ${error.message}`, image)
    }

    throw error
  }

  const defaultedTag = reference.tag ?? (reference.digest === undefined ? 'latest' : '')
  return {...reference, defaultedTag}
}

/** Append ":latest" only when the reference has neither tag nor digest; no docker.io rewriting. Throws InvalidImageNameError. */
export function applyDefaultImageTag(image: string): string {
  let parsed: ReturnType<typeof parseImageName>
  try {
    parsed = parseImageName(image)
  } catch (error) {
    if (error instanceof InvalidImageNameError) {
      throw new InvalidImageNameError(`Failed to apply default image tag ${goQuote(image)}: ${error.message}`, image)
    }

    throw error
  }

  const {digest, defaultedTag} = parsed
  // Concatenated rather than rebuilt from the parsed name, which would qualify "busybox" as docker.io/library/busybox.
  if (digest === undefined && defaultedTag !== '' && !image.endsWith(`:${defaultedTag}`)) return `${image}:${defaultedTag}`
  return image
}

/** As the API server defaults it: no tag or ":latest" → Always, else IfNotPresent (digest → IfNotPresent). */
export function defaultPullPolicy(image: string): PullPolicy {
  try {
    return parseImageName(image).defaultedTag === 'latest' ? 'Always' : 'IfNotPresent'
  } catch {
    return 'IfNotPresent'
  }
}

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
}

interface PullOutcome {
  imageRef: string
  pullMs: number
  credentialSource?: string
}

interface InflightPull {
  promise: Promise<PullOutcome>
  controller: AbortController
  waiters: number
}

export class ImageManager {
  private readonly backOff: BackOff
  private readonly lastFailure = new Map<string, ImageError>()
  private readonly inflight = new Map<string, InflightPull>()
  private readonly slots: Limiter
  private readonly credentials: CredentialStore
  private readonly now: () => number

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
    this.backOff = new BackOff({...(options.backOff ?? ladderFromEnv(IMAGE_BACKOFF_INITIAL_MS, IMAGE_BACKOFF_MAX_MS)), now: this.now})
    this.slots = new Limiter(Math.max(1, options.parallel ?? DEFAULT_PARALLEL_PULLS))
    this.credentials = options.credentials ?? new DockerConfigKeyring()
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
        const message = `Failed to inspect image ${goQuote(requested)}: ${errorText(error)}`
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
        outcome = await this.pullShared(image, spec, reference, options)
      } catch (error) {
        if (passThrough(error)) throw error
        const text = errorText(error)
        emit(warningEvent('Failed', `Failed to pull image ${goQuote(requested)}: ${text}`))
        let failure = pullFailure(text, requested)
        if (failure instanceof UnauthorizedError && error instanceof PullFailed) failure = withCredentialHint(failure, error)
        this.lastFailure.set(backOffKey, failure)
        // The window is measured from this failure, whatever the clock does while we decide.
        const windowMs = this.backOff.next(backOffKey)
        if (!this.fitsBefore(windowMs, options.deadline)) throw failure
        emit(normalEvent('BackOff', `Back-off pulling image ${goQuote(requested)}: ${failure.reason}: ${failure.message}`))
        await sleep(windowMs, options.signal)
        continue
      }

      const totalMs = this.now() - attemptStart
      this.backOff.gc()
      this.lastFailure.delete(backOffKey)
      const sizeBytes = await this.imageSize(outcome.imageRef, spec, options.signal)
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

  /** One PullImage per image (and credentials) at a time: a concurrent request for the same image joins it. */
  private async pullShared(
    image: string,
    spec: DeepPartial<ImageSpec>,
    reference: ImageReference,
    options: EnsureImageOptions,
  ): Promise<PullOutcome> {
    const key = `${image}\u0000${options.auth ? JSON.stringify(options.auth) : ''}`
    let entry = this.inflight.get(key)
    if (!entry) {
      const controller = new AbortController()
      const created: InflightPull = {controller, waiters: 0, promise: Promise.resolve() as unknown as Promise<PullOutcome>}
      created.promise = this.slots
        .run(() => this.pullWithCredentials(image, spec, reference, options, controller.signal), controller.signal)
        .finally(() => {
          if (this.inflight.get(key) === created) this.inflight.delete(key)
        })
      this.inflight.set(key, created)
      entry = created
    }

    const shared = entry
    shared.waiters++
    const signal = options.signal
    if (!signal) return shared.promise.finally(() => shared.waiters--)
    return new Promise<PullOutcome>((resolve, reject) => {
      const onAbort = () => {
        shared.waiters--
        // Nobody else waits for this pull: cancel the RPC, and let a later request start afresh.
        if (shared.waiters === 0) {
          shared.controller.abort()
          if (this.inflight.get(key) === shared) this.inflight.delete(key)
        }

        reject(new InterruptedError(`pull of ${image} interrupted`))
      }

      signal.addEventListener('abort', onAbort, {once: true})
      shared.promise.then(
        (value) => {
          signal.removeEventListener('abort', onAbort)
          shared.waiters--
          resolve(value)
        },
        (error) => {
          signal.removeEventListener('abort', onAbort)
          shared.waiters--
          reject(error)
        },
      )
    })
  }

  /** The kubelet's PullImage: each matching credential in order, first success wins; none → anonymous. */
  private async pullWithCredentials(
    image: string,
    spec: DeepPartial<ImageSpec>,
    reference: ImageReference,
    options: EnsureImageOptions,
    signal: AbortSignal,
  ): Promise<PullOutcome> {
    const candidates: Array<RegistryCredential | undefined> = options.auth
      ? [{auth: options.auth, source: options.authSource ?? 'explicit credentials'}]
      : await this.credentials.lookup(reference)
    if (candidates.length === 0) candidates.push(undefined)
    const sources = candidates.flatMap((credential) => (credential ? [credential.source] : []))
    const failures: string[] = []
    for (const credential of candidates) {
      const started = performance.now()
      try {
        const response = await (await this.getClient()).image(
          'pullImage',
          {image: spec, auth: credential?.auth as DeepPartial<AuthConfig> | undefined, sandboxConfig: options.sandboxConfig},
          {signal},
        )
        const pullMs = Math.trunc(performance.now() - started)
        if (!response.imageRef) {
          failures.push(`imageRef of image ${goQuote(image)} is not set`)
          continue
        }

        return {imageRef: response.imageRef, pullMs, credentialSource: credential?.source}
      } catch (error) {
        if (passThrough(error)) throw error
        failures.push(errorText(error))
      }
    }

    // One failure reads as itself; several as utilerrors.NewAggregate prints them.
    throw new PullFailed(failures.length === 1 ? failures[0] : `[${failures.join(', ')}]`, sources, reference.domain)
  }

  /** Best effort, like the kubelet: a failed ImageStatus after a good pull only loses the size. */
  private async imageSize(imageRef: string, spec: DeepPartial<ImageSpec>, signal?: AbortSignal): Promise<string | undefined> {
    try {
      const status = await (await this.getClient()).image('imageStatus', {image: {...spec, image: imageRef}}, {signal})
      return status.image?.size
    } catch {
      return undefined
    }
  }
}

/** A failed PullImage (every credential tried), with what the kubelet would print and which credentials were used. */
class PullFailed extends Error {
  constructor(
    readonly text: string,
    readonly sources: string[],
    readonly registry: string,
  ) {
    super(text)
  }
}

/** Says which credentials were refused (by origin, never content), or that none were found. */
function withCredentialHint(failure: UnauthorizedError, pull: PullFailed): UnauthorizedError {
  const hint = pull.sources.length
    ? `credentials from ${pull.sources.join(', ')} were refused`
    : `no credentials found for ${pull.registry}; pass --creds or --auth, or log in to write a docker config file`
  return new UnauthorizedError(`${failure.message} (${hint})`, failure.image)
}

/** Failures that are not about the image (no runtime, interrupted, no image service) keep their own class. */
function passThrough(error: unknown): boolean {
  return error instanceof InterruptedError || error instanceof RuntimeUnreachableError || error instanceof UnimplementedError
}

/** The error text the kubelet would print: the runtime's status as its CRI client formats it. */
function errorText(error: unknown): string {
  if (error instanceof PullFailed) return error.text
  if (error instanceof PodctlError && error.grpc) return kubeletErrorText(error.grpc.code, error.grpc.details)
  return error instanceof Error ? error.message : String(error)
}

/** Go's %q for the strings we quote (image names): double quotes, backslash escapes. */
export function goQuote(text: string): string {
  return JSON.stringify(text)
}

function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw new InterruptedError('interrupted')
}

/** At most `limit` tasks at once, FIFO; a task whose signal aborts while queued never starts. */
class Limiter {
  private active = 0
  private readonly queue: Array<() => void> = []

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    throwIfAborted(signal)
    if (this.active < this.limit) this.active++
    else {
      // A finishing task hands its slot straight to us, so the count never overshoots.
      await new Promise<void>((resolve, reject) => {
        const start = () => {
          signal?.removeEventListener('abort', onAbort)
          resolve()
        }

        const onAbort = () => {
          const index = this.queue.indexOf(start)
          if (index !== -1) this.queue.splice(index, 1)
          reject(new InterruptedError('interrupted while waiting to pull'))
        }

        this.queue.push(start)
        signal?.addEventListener('abort', onAbort, {once: true})
      })
    }

    try {
      return await task()
    } finally {
      const next = this.queue.shift()
      if (next) next()
      else this.active--
    }
  }
}
