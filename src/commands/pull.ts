/**
 * `podctl pull`: each image through the kubelet's image manager (images/image-manager.ts), several at
 * once; events on stderr, one line per image on stdout, every failure reported as it happens.
 */
import {Args, Flags} from '@oclif/core'

import {BaseCommand, example, toPodctlError} from '../lib/base-command.js'
import {InterruptedError, PodctlError} from '../lib/errors.js'
import {durationFlag, outputFlag, progressFlag} from '../lib/flags.js'
import {credentialsFromFlags, namesRegistryHost} from '../lib/images/credentials.js'
import {DEFAULT_PARALLEL_PULLS, type EnsureImageOptions, type EnsureImageResult, ImageManager} from '../lib/images/image-manager.js'
import {pullSummary} from '../lib/images/pull-summary.js'
import {pullSandboxConfig} from '../lib/images/pull-options.js'
import {chooseProgressView, SpinnerProgressView} from '../lib/images/progress-view.js'
import {applyDefaultImageTag} from '../lib/images/reference.js'
import {discardEvents, type PodEvent} from '../lib/kube/events.js'
import {PULL_POLICIES, type PullPolicy} from '../lib/kube/labels.js'
import {podDirRootFromEnv} from '../lib/kubelet/core/pod-directory.js'

export interface PulledImage extends Partial<EnsureImageResult> {
  /** The image exactly as given on the command line. */
  requested: string
  /** With the default tag applied (as sent to the runtime); the requested text when it does not parse. */
  image: string
  events: PodEvent[]
  error?: ReturnType<PodctlError['toJSON']>
}

export interface PullResult {
  images: PulledImage[]
}

/** One image's pull as it goes: its events, then its result or its failure. */
interface ImagePull {
  events: PodEvent[]
  result?: EnsureImageResult
  error?: PodctlError
}

export default class Pull extends BaseCommand<typeof Pull> {
  // --timeout here is each call; retries follow --retry-for, not a bound on the whole command.
  static override timeoutBoundsCommand = false
  static override summary = 'Pull images the way the kubelet does: pull policy, credentials, events and back-off.'

  static override description = `Runs the kubelet's ensure-image flow for each IMAGE: ":latest" is added only when the \
reference has neither tag nor digest (the name is not rewritten to docker.io/library/...; the runtime does that), \
invalid references are refused before any runtime call, IfNotPresent and Never look at ImageStatus first, Always pulls \
straight away. Events (Pulling, Failed, BackOff, ...) use the kubelet's reasons and messages and go to stderr; \
one result line per image goes to stdout (so the kubelet's Pulled event, which would repeat it, is only in -o json).

Credentials: --creds or --auth for every image, else the docker config files the kubelet reads \
($DOCKER_CONFIG/config.json, ~/.docker/config.json, /var/lib/kubelet/config.json, ~/.dockercfg), matched by registry \
host[:port] (Docker Hub's aliases are one registry). They are sent only inside PullImage, never printed. \
--username USER (crictl's -u) asks for the password on a terminal without echoing it, or reads it from the first line \
of stdin. --pod-config (a crictl pod config) and --annotation go to the runtime as PullImage's sandbox config and \
image annotations, as crictl pull sends them.

Retries: by default each image gets one attempt. --retry-for DURATION retries failed pulls with the kubelet's back-off \
(10s, 20s, 40s ... capped at 5m) as long as the next attempt starts inside that window, printing a BackOff event before \
each wait; then the last error is reported. (For tests, PODCTL_BACKOFF_BASE_MS shrinks the first step; the ladder keeps \
its shape.) The global --timeout is the deadline of each runtime call, not of the retries.

Progress: on a terminal, each layer's bytes done / total and rate under the spinner while it downloads (from \
containerd's content service; other runtimes keep the spinner alone), cleared at the end; --progress plain prints a \
line on stderr as each layer starts and is done, for logs and CI. stdout and -o json never change.

Images are pulled concurrently, at most --parallel at once; an image named twice is pulled and reported once. Every image is \
attempted even when another fails; the exit code is that of the first failing image in argument order: 10 ErrImagePull \
(also RegistryUnavailable, ImagePullBackOff), 11 InvalidImageName, 12 ErrImageNeverPull, 13 Unauthorized.`

  static override examples = [
    example('Pull an image', 'localhost:5000/podctl/busybox:1.36'),
    example('Pull only what is missing, three at a time', '--policy IfNotPresent nginx:1.27 redis:7 busybox'),
    example('Check that an image is on the node without pulling (exit 12 if not)', '--policy Never registry.example.com/app:v2'),
    example('A private registry; the password is asked for on the terminal', '--creds alice registry.example.com/team/app:v2'),
    example('As crictl pull -u: the password from stdin', `-u alice registry.example.com/team/app:v2 <<< "$PASSWORD"`),
    example('Keep retrying with the kubelet back-off for up to 2 minutes', '--retry-for 2m registry.example.com/app:v2'),
    example('Image IDs and sizes for a script', 'busybox:1.36 -o json'),
    example('Layer byte counts as plain lines on stderr, for CI logs', '--progress plain registry.example.com/app:v2'),
  ]

  static override strict = false

  static override args = {
    image: Args.string({required: true, description: 'Image references, e.g. busybox, localhost:5000/app:v1, repo@sha256:...'}),
  }

  static override flags = {
    policy: Flags.option({
      options: PULL_POLICIES,
      default: 'Always' as PullPolicy,
      summary: 'Pull policy: Always pulls; IfNotPresent pulls only when absent; Never only checks presence.',
    })(),
    creds: Flags.string({
      summary: 'Registry credentials USER[:PASSWORD] for every image (password asked for on a terminal when left out).',
      // No oclif `exclusive`: its error message would echo the other flag's value (a secret).
      helpValue: 'USER[:PASSWORD]',
    }),
    auth: Flags.string({summary: 'Registry credentials as base64 of USER:PASSWORD (the docker config "auth" form).', helpValue: 'BASE64'}),
    username: Flags.string({char: 'u', summary: 'Registry user; the password is asked for (not echoed) or read from stdin.'}),
    'pod-config': Flags.string({summary: 'crictl pod config (JSON or YAML) of the sandbox the image is for.', helpValue: 'FILE'}),
    annotation: Flags.string({
      char: 'a',
      summary: 'Annotation KEY=VALUE for the image (repeatable).',
      multiple: true,
      multipleNonGreedy: true,
    }),
    parallel: Flags.integer({summary: 'Pulls in flight at once.', default: DEFAULT_PARALLEL_PULLS, min: 1}),
    progress: progressFlag,
    'retry-for': durationFlag({
      summary: 'Retry failed pulls with the kubelet back-off (10s doubling to 5m) while the next attempt fits in this window.',
      default: 0,
      defaultHelp: async () => '0 (one attempt)',
      helpValue: 'DURATION',
    }),
    'no-trunc': Flags.boolean({summary: 'Show full image IDs.'}),
    quiet: Flags.boolean({char: 'q', summary: 'Print image IDs only, one per line; no events.'}),
    output: outputFlag(['json', 'yaml'], {fallback: 'table'}),
  }

  protected override credentialFollower = {
    accepts: namesRegistryHost,
    description: 'an image with a registry host (such as registry.example.com/app:v1)',
  }

  public async run(): Promise<PullResult> {
    // A name given twice is pulled and reported once, in order of first mention.
    const requested = [...new Set(this.positional)]
    const {flags} = this
    const credential = await credentialsFromFlags({creds: flags.creds, auth: flags.auth, username: flags.username})
    const sandboxConfig = await pullSandboxConfig(flags['pod-config'], flags.annotation)
    await this.connectFirst(requested)
    const pulls = new Map(requested.map((image): [string, ImagePull] => [image, {events: []}]))
    const interruption = this.interruptSignal()
    try {
      await this.pullAll(pulls, {auth: credential?.auth, authSource: credential?.source, sandboxConfig, signal: interruption.signal})
    } finally {
      interruption.release()
    }

    const result: PullResult = {
      images: requested.map((image) => {
        const {result: pulled, error, events} = pulls.get(image)!
        return {requested: image, image, ...pulled, events, ...(error ? {error: error.toJSON()} : {})}
      }),
    }
    if (this.machineOutput()) await this.emit(result)
    if (interruption.signal.aborted) throw new InterruptedError('pull interrupted')
    // Each failure was reported as it happened; the first in argument order sets the exit code.
    this.reportFailures(
      requested.flatMap((image) => pulls.get(image)!.error ?? []),
      () => false,
    )
    return result
  }

  /**
   * Connects (and reads --config) before any event, so an unreachable runtime or a bad config file is
   * reported as itself, not after a "Pulling" line. Only invalid names need no runtime (exit 11 without one).
   */
  private async connectFirst(requested: string[]): Promise<void> {
    if (!requested.some((image) => validReference(image))) return
    const client = await this.client()
    await client.connect(client.imageEndpoint)
  }

  /** Every image through one image manager, --parallel pulls in flight; each outcome lands in `pulls`. */
  private async pullAll(
    pulls: Map<string, ImagePull>,
    options: Pick<EnsureImageOptions, 'auth' | 'authSource' | 'sandboxConfig' | 'signal'>,
  ): Promise<void> {
    const {flags} = this
    const showEvents = !this.machineOutput() && !flags.quiet
    const progress = (done: number) => `Pulling image${pulls.size === 1 ? '' : 's'}: ${done} of ${pulls.size} done`
    const spinner = showEvents || flags.progress === 'tty' ? await this.spinner(progress(0)) : undefined
    const display = spinner && new SpinnerProgressView(spinner, () => process.stderr.columns)
    const line = (text: string) => this.stderrLine(text)
    const debug = flags.debug ? (text: string) => this.debugLine(text) : undefined
    const print = showEvents ? this.printEvents({kind: 'compact'}) : discardEvents
    const manager = new ImageManager(
      () => this.client(),
      (event) => {
        // Events carry the requested image in `object`.
        pulls.get(event.object ?? '')?.events.push(event)
        // The result line on stdout (what scripts read) already says "Successfully pulled": the Pulled event
        // would say it again on the same screen. It stays in -o json's events.
        if (event.reason !== 'Pulled') print(event)
      },
      {
        parallel: flags.parallel,
        progress: chooseProgressView(flags.progress, display, {showEvents, line, debug}),
        // What podctl pulls, image GC and rmi --prune may later remove: recorded where they look ($PODCTL_POD_DIR_ROOT).
        recordPullsIn: podDirRootFromEnv(),
      },
    )
    const deadline = flags['retry-for'] > 0 ? Date.now() + flags['retry-for'] : undefined
    let done = 0
    const pullOne = async (image: string, pull: ImagePull) => {
      try {
        const result = await manager.ensureImage({image, policy: flags.policy, ...options, deadline, eventObject: image})
        pull.result = result
        const shown = flags.quiet ? result.imageRef : pullSummary(image, result, flags['no-trunc'])
        if (!this.machineOutput()) this.aboveSpinner(() => this.log(shown))
      } catch (error) {
        pull.error = toPodctlError(error)
        if (!(error instanceof InterruptedError)) this.reportFailure(withReason(pull.error))
      } finally {
        display?.setStep(progress(++done))
      }
    }

    await Promise.all([...pulls].map(([image, pull]) => pullOne(image, pull))).finally(() => spinner?.stop())
  }
}

/** "ErrImagePull: rpc error: …" — the kubelet's reason first, as `kubectl describe` shows it. */
function withReason(failure: PodctlError): PodctlError {
  if (failure.message.startsWith(`${failure.code}:`)) return failure
  return new PodctlError(failure.code, failure.exitCode, `${failure.code}: ${failure.message}`)
}

function validReference(image: string): boolean {
  try {
    applyDefaultImageTag(image)
    return true
  } catch {
    return false
  }
}
