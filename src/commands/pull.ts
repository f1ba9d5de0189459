import {Args, Flags} from '@oclif/core'

import {BaseCommand, toPodctlError} from '../lib/base-command.js'
import {durationFlag, outputFlag} from '../lib/flags.js'
import {formatGoDuration} from '../lib/util/duration.js'
import {InterruptedError, PodctlError} from '../lib/errors.js'
import {makeChalk} from '../lib/output/color.js'
import {truncateId} from '../lib/output/format.js'
import {credentialsFromFlags} from '../lib/images/credentials.js'
import type {PodEvent} from '../lib/kube/events.js'
import {
  DEFAULT_PARALLEL_PULLS,
  ImageManager,
  PULL_POLICIES,
  type EnsureImageResult,
  type PullPolicy,
} from '../lib/images/image-manager.js'

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

export default class Pull extends BaseCommand<typeof Pull> {
  static override summary = 'Pull images the way the kubelet does: pull policy, credentials, events and back-off.'

  static override description = `Runs the kubelet's ensure-image flow for each IMAGE: ":latest" is added only when the \
reference has neither tag nor digest (the name is not rewritten to docker.io/library/...; the runtime does that), \
invalid references are refused before any runtime call, IfNotPresent and Never look at ImageStatus first, Always pulls \
straight away. Events (Pulling, Pulled, Failed, BackOff, ...) use the kubelet's reasons and messages and go to stderr; \
one result line per image goes to stdout.

Credentials: --creds or --auth for every image, else the docker config files the kubelet reads \
($DOCKER_CONFIG/config.json, ~/.docker/config.json, /var/lib/kubelet/config.json, ~/.dockercfg), matched by registry \
host[:port] (Docker Hub's aliases are one registry). They are sent only inside PullImage, never printed.

Retries: by default each image gets one attempt. --retry-for DURATION retries failed pulls with the kubelet's back-off \
(10s, 20s, 40s ... capped at 5m) as long as the next attempt starts inside that window, printing a BackOff event before \
each wait; then the last error is reported. (For tests, PODCTL_BACKOFF_BASE_MS shrinks the first step; the ladder keeps \
its shape.) The global --timeout is the deadline of each runtime call, not of the retries.

Images are pulled concurrently, at most --parallel at once; an image named twice is pulled and reported once. Every image is \
attempted even when another fails; the exit code is that of the first failing image in argument order: 10 ErrImagePull \
(also RegistryUnavailable, ImagePullBackOff), 11 InvalidImageName, 12 ErrImageNeverPull, 13 Unauthorized.`

  static override examples = [
    {description: 'Pull an image', command: '<%= config.bin %> <%= command.id %> localhost:5000/podctl/busybox:1.36'},
    {description: 'Pull only what is missing, three at a time', command: '<%= config.bin %> <%= command.id %> --policy IfNotPresent nginx:1.27 redis:7 busybox'},
    {description: 'Check that an image is on the node without pulling (exit 12 if not)', command: '<%= config.bin %> <%= command.id %> --policy Never registry.example.com/app:v2'},
    {description: 'A private registry; the password is asked for on the terminal', command: '<%= config.bin %> <%= command.id %> --creds alice registry.example.com/team/app:v2'},
    {description: 'Keep retrying with the kubelet back-off for up to 2 minutes', command: '<%= config.bin %> <%= command.id %> --retry-for 2m registry.example.com/app:v2'},
    {description: 'Image IDs and sizes for a script', command: '<%= config.bin %> <%= command.id %> busybox:1.36 -o json'},
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
    parallel: Flags.integer({summary: 'Pulls in flight at once.', default: DEFAULT_PARALLEL_PULLS, min: 1}),
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

  public async run(): Promise<PullResult> {
    const {flags} = this
    const {argv} = await this.parse(Pull)
    // A name given twice is pulled and reported once, in order of first mention.
    const requested = [...new Set(argv as string[])]
    const credential = await credentialsFromFlags({creds: flags.creds, auth: flags.auth})
    const machine = this.jsonEnabled() || flags.output === 'json' || flags.output === 'yaml'
    const showEvents = !machine && !flags.quiet
    const outcomes = new Map<string, {result?: EnsureImageResult; error?: PodctlError; events: PodEvent[]}>()
    for (const image of requested) outcomes.set(image, {events: []})

    const pending = new Set(requested).size
    const spinner = showEvents ? await this.spinner(this.spinnerText(pending, pending)) : undefined
    const printEvent = (event: PodEvent) => {
      if (!showEvents) return
      spinner?.clear()
      process.stderr.write(`${this.formatEvent(event)}\n`)
      spinner?.render()
    }

    const controller = new AbortController()
    const onSignal = () => controller.abort()
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)

    const manager = new ImageManager(
      () => this.client(),
      (event) => {
        // Events carry the requested image in `object`.
        outcomes.get(event.object ?? '')?.events.push(event)
        printEvent(event)
      },
      {parallel: flags.parallel},
    )
    const deadline = flags['retry-for'] > 0 ? Date.now() + flags['retry-for'] : undefined
    const unique = [...outcomes.keys()]
    let remaining = unique.length

    try {
      await Promise.all(
        unique.map(async (image) => {
          try {
            const result = await manager.ensureImage({
              image,
              policy: flags.policy,
              auth: credential?.auth,
              authSource: credential?.source,
              deadline,
              signal: controller.signal,
              eventObject: image,
            })
            outcomes.get(image)!.result = result
            if (!machine) {
              spinner?.clear()
              this.log(flags.quiet ? result.imageRef : this.describe(image, result))
            }
          } catch (error) {
            const failure = toPodctlError(error)
            outcomes.get(image)!.error = failure
            if (!(error instanceof InterruptedError)) {
              spinner?.clear()
              this.reportFailure(this.withCode(failure))
            }
          } finally {
            remaining--
            if (spinner) spinner.text = this.spinnerText(remaining, unique.length)
            spinner?.render()
          }
        }),
      )
    } finally {
      spinner?.stop()
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    }

    const result: PullResult = {
      images: requested.map((image) => {
        const {result: pulled, error, events} = outcomes.get(image)!
        return {requested: image, image, ...pulled, events, ...(error ? {error: error.toJSON()} : {})}
      }),
    }
    if (machine) await this.emit(result)
    if (controller.signal.aborted) throw new InterruptedError('pull interrupted')
    const first = requested.map((image) => outcomes.get(image)!.error).find((error) => error !== undefined)
    if (first) process.exitCode = first.exitCode
    return result
  }

  private describe(requested: string, result: EnsureImageResult): string {
    const id = truncateId(result.imageRef, this.flags['no-trunc'])
    if (!result.pulled) return `Image "${requested}" is already present (${result.policy}). ID: ${id}`
    return `Successfully pulled image "${requested}" in ${formatGoDuration(result.pullMs ?? 0)}. Image size: ${result.sizeBytes ?? 0} bytes. ID: ${id}`
  }

  /** "ErrImagePull: rpc error: …" — the kubelet's reason first, as `kubectl describe` shows it. */
  private withCode(failure: PodctlError): PodctlError {
    if (failure.message.startsWith(`${failure.code}:`)) return failure
    return new PodctlError(failure.code, failure.exitCode, `${failure.code}: ${failure.message}`)
  }

  private formatEvent(event: PodEvent): string {
    const chalk = makeChalk(this.wantsColorOnStderr)
    const type = event.type.padEnd(8)
    const line = `${type}${event.reason.padEnd(18)}${event.message}`
    return event.type === 'Warning' ? chalk.yellow(line) : line
  }

  private spinnerText(remaining: number, total: number): string {
    return `Pulling image${total === 1 ? '' : 's'}: ${total - remaining} of ${total} done`
  }

}
