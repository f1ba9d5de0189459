/**
 * The kubelet's image pullers (pkg/kubelet/images/parallel_image_puller.go) with kuberuntime_image.go's
 * PullImage: at most N pulls in flight, a concurrent request for the same image joins the pull in
 * flight, and each matching credential is tried in order until one works.
 */
import type {CriClient} from '../cri/client.js'
import {InterruptedError} from '../errors.js'
import {Limiter} from '../util/concurrency.js'
import type {AuthConfig, DeepPartial, ImageSpec, PodSandboxConfig} from '../../generated/runtime/v1/api.js'
import {chainCredentials, type CredentialStore, type RegistryAuth, type RegistryCredential} from './credentials.js'
import {passThrough, pullErrorText, PullFailed} from './errors.js'
import {goQuote} from '../util/go-quote.js'
import type {PullProgress} from './pull-progress.js'
import type {ImageReference} from './reference.js'

/** What a pull needs beyond the image itself. */
export interface PullRequest {
  sandboxConfig?: DeepPartial<PodSandboxConfig>
  /** Explicit credentials (--creds/--auth); else the credential store's lookup. */
  auth?: RegistryAuth
  /** Where `auth` came from, for messages; never the credentials themselves. */
  authSource?: string
  /** The pod's imagePullSecrets, tried before the node's credentials; `pullSecretsKey` tells pods with different ones apart. */
  pullSecrets?: CredentialStore
  pullSecretsKey?: string
  /** Abort → this caller stops waiting; the RPC is cancelled when no other caller waits for it. */
  signal?: AbortSignal
}

export interface PullOutcome {
  imageRef: string
  pullMs: number
  credentialSource?: string
}

interface InflightPull {
  promise: Promise<PullOutcome>
  controller: AbortController
  waiters: number
}

export class ImagePuller {
  private readonly inflight = new Map<string, InflightPull>()
  private readonly slots: Limiter

  constructor(
    private readonly getClient: () => Promise<CriClient>,
    private readonly credentials: CredentialStore,
    parallel: number,
    private readonly progress?: PullProgress,
  ) {
    this.slots = new Limiter(Math.max(1, parallel), 'interrupted while waiting to pull')
  }

  /** One PullImage per image (and credentials) at a time: a concurrent request for the same image joins it. */
  async pull(image: string, spec: DeepPartial<ImageSpec>, reference: ImageReference, options: PullRequest): Promise<PullOutcome> {
    const key = `${image}\u0000${options.auth ? JSON.stringify(options.auth) : ''}\u0000${options.pullSecretsKey ?? ''}`
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
    options: PullRequest,
    signal: AbortSignal,
  ): Promise<PullOutcome> {
    const candidates: Array<RegistryCredential | undefined> = options.auth
      ? [{auth: options.auth, source: options.authSource ?? 'explicit credentials'}]
      : await (options.pullSecrets ? chainCredentials(options.pullSecrets, this.credentials) : this.credentials).lookup(reference)
    if (candidates.length === 0) candidates.push(undefined)
    const sources = candidates.flatMap((credential) => (credential ? [credential.source] : []))
    const failures: string[] = []
    for (const credential of candidates) {
      const started = performance.now()
      let pullMs = 0
      try {
        const client = await this.getClient()
        const pullEnded = this.progress?.pullStarted()
        const response = await client
          .image(
            'pullImage',
            {image: spec, auth: credential?.auth as DeepPartial<AuthConfig> | undefined, sandboxConfig: options.sandboxConfig},
            {signal},
          )
          // The pull's time is the call's, not the last progress poll's after it.
          .finally(() => {
            pullMs = Math.trunc(performance.now() - started)
            return pullEnded?.()
          })
        if (!response.imageRef) {
          failures.push(`imageRef of image ${goQuote(image)} is not set`)
          continue
        }

        return {imageRef: response.imageRef, pullMs, credentialSource: credential?.source}
      } catch (error) {
        if (passThrough(error)) throw error
        failures.push(pullErrorText(error))
      }
    }

    // One failure reads as itself; several as utilerrors.NewAggregate prints them.
    throw new PullFailed(failures.length === 1 ? failures[0] : `[${failures.join(', ')}]`, sources, reference.domain)
  }
}
