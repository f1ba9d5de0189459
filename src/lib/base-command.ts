/**
 * The one base every podctl command extends (sf-plugins-core's SfCommand shape): shared flags, the
 * lazily built CRI client, output (`-o` through one parser, tables, events, warnings, spinners),
 * Ctrl-C as an AbortSignal, and the single mapping from any failure to a one-line message and an
 * exit code. Commands keep to: parse → one lib call → render.
 */
import {setMaxListeners} from 'node:events'

import {Command, Errors, Flags, type Interfaces} from '@oclif/core'

import {type CrictlConfig, loadConfig, locateConfig} from './cri/config.js'
import type {CriClient} from './cri/client.js'
import type {EndpointSource} from './cri/endpoint.js'
import {ExitCode, PodctlError, UsageError} from './errors.js'
import {checkCredentialArgv, durationFlag, outputChoicesOf, showUsage, withoutStdin} from './flags.js'
import type {EventSink} from './kube/events.js'
import {holdExitIfChangingTheNode, type OutputFailureHold} from './output/closed-pipe.js'
import {makeChalk, wantsColor} from './output/color.js'
import {spinnerWanted} from './output/spinner-choice.js'
import {eventLines, type EventStyle} from './output/events.js'
import {toJson, toYaml} from './output/serialize.js'
import {isMachineOutput, type OutputSpec, parseOutputSpec, renderEach} from './output/spec.js'
import {flagSuggestion} from './util/suggest.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>
export type BaseArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>

type Spinner = import('ora').Ora
type EmitOptions = {each?: readonly unknown[]; as?: OutputSpec}

/** Ctrl-C, systemd's stop and a closed terminal each stop the work as Ctrl-C does (Node's default would leave locks behind). */
const INTERRUPTING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/** Ctrl-C / SIGTERM / SIGHUP as an AbortSignal; release() gives the signals back to Node's default. */
export interface Interruption {
  readonly signal: AbortSignal
  /** The work has its outcome: later signals are ignored until the process exits. */
  settle(): void
  release(): void
}

export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override enableJsonFlag = true
  /** False where --timeout means only each call's deadline (streams, waits with their own limit, exec's own limit). */
  static timeoutBoundsCommand = true

  static override baseFlags = {
    'runtime-endpoint': Flags.string({
      char: 'r',
      summary: 'CRI runtime endpoint, e.g. unix:///run/containerd/containerd.sock.',
      description: 'Also CONTAINER_RUNTIME_ENDPOINT, or runtime-endpoint in the crictl config file.',
      helpGroup: 'GLOBAL',
    }),
    'image-endpoint': Flags.string({
      char: 'i',
      summary: 'CRI image endpoint (defaults to the runtime endpoint).',
      helpGroup: 'GLOBAL',
    }),
    config: Flags.string({
      char: 'c',
      summary: 'crictl config file to read endpoints and timeout from (default /etc/crictl.yaml).',
      env: 'CRI_CONFIG_FILE',
      helpGroup: 'GLOBAL',
    }),
    timeout: durationFlag({
      summary: 'Deadline of the whole command and of each call in it (default 10s per call; slow calls such as RunPodSandbox get longer).',
      helpValue: 'DURATION',
      helpGroup: 'GLOBAL',
    }),
    'connect-timeout': durationFlag({
      summary: 'How long to wait for the runtime socket to accept a connection.',
      default: 2000,
      defaultHelp: async () => '2s',
      helpValue: 'DURATION',
      helpGroup: 'GLOBAL',
    }),
    debug: Flags.boolean({
      char: 'D',
      summary: 'Print each runtime call (method, duration, status) on stderr.',
      helpGroup: 'GLOBAL',
    }),
    color: Flags.boolean({
      allowNo: true,
      summary: 'Colour output (default: only on a terminal, never with NO_COLOR).',
      helpGroup: 'GLOBAL',
    }),
  }

  protected flags!: BaseFlags<T>
  protected args!: BaseArgs<T>
  /** Every positional argument as parsed once in init() (variadic commands read their list here). */
  protected positional: string[] = []
  /** What `-o` (and `--template`) asked for, read by init() through the one parser. */
  protected output: OutputSpec = {kind: 'table'}
  protected runtimeSource?: EndpointSource
  protected imageSource?: EndpointSource
  private criClient?: Promise<CriClient>
  /** --timeout counts from here. */
  protected readonly startedAt = Date.now()
  private crictlConfigFile?: Promise<CrictlConfig | undefined>
  private activeSpinner?: Spinner
  private readonly interruptions = new Set<Interruption>()
  private outputHold?: OutputFailureHold

  /**
   * Set by commands that take credentials (--creds/--auth): what may follow a credential's value.
   * The raw command line is checked before oclif parses it, so a mistyped flag never turns a
   * password into an argument that an error would echo (flags.ts checkCredentialArgv).
   */
  protected credentialFollower?: {accepts: (token: string) => boolean; description: string}

  public override async init(): Promise<void> {
    await super.init()
    this.outputHold = holdExitIfChangingTheNode(this.id)
    // A parse failure is reported by catch(); mark parsing as attempted so oclif's development
    // check (NODE_ENV=test/development) does not add a misleading warning under the error.
    this.parsed = true
    if (this.credentialFollower) checkCredentialArgv(this.argv, this.credentialFollower.accepts, this.credentialFollower.description)

    const {args, argv, flags} = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (super.ctor as typeof BaseCommand).baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      args: withoutStdin(this.ctor.args),
      strict: this.ctor.strict,
    })
    this.flags = flags as BaseFlags<T>
    this.args = args as BaseArgs<T>
    this.positional = argv as string[]
    const choices = outputChoicesOf(this.ctor.flags)
    if (choices) {
      const {output, template} = flags as {output?: string; template?: string}
      this.output = parseOutputSpec(output, template, choices.formats, choices.fallback, {
        templates: choices.templates,
        templateFlag: this.ctor.flags?.template !== undefined,
      })
    }
  }

  /** The shared CRI client, built on first use so commands that never call the runtime stay fast. */
  protected client(): Promise<CriClient> {
    this.criClient ??= this.buildClient()
    return this.criClient
  }

  /**
   * The deadline of each runtime call: --timeout, else the crictl config's. A command whose
   * --timeout means something else (run: the whole run's deadline) overrides this.
   */
  protected callTimeoutMs(): number | undefined {
    return this.flags.timeout
  }

  /**
   * Epoch ms: the upper bound of the whole command. A --timeout the user gives bounds every runtime
   * call, slow calls' floors included, so a frozen runtime cannot hold a command past it (rollbacks
   * still finish). Commands whose --timeout means something else override this.
   */
  protected commandDeadline(): number | undefined {
    const bounded = (this.constructor as typeof BaseCommand).timeoutBoundsCommand
    return !bounded || this.flags.timeout === undefined ? undefined : this.startedAt + this.flags.timeout
  }

  protected get chalk() {
    return makeChalk(wantsColor({flag: this.flags?.color}))
  }

  protected get wantsColorOnStderr(): boolean {
    return wantsColor({flag: this.flags?.color, isTTY: Boolean(process.stderr.isTTY)})
  }

  /** Whether stdout is for a script (--json, -o json|yaml|jsonpath|go-template): no tables, events on stderr. */
  protected machineOutput(): boolean {
    return this.jsonEnabled() || isMachineOutput(this.output)
  }

  /**
   * Writes the result as `-o` asked (or `as`): JSON/YAML for scripts (with --json oclif prints the
   * returned value), jsonpath/go-template once per document (`each`, default the result), else `human()`:
   * text gets its newline, bytes (a big listing's table, output/table.ts) are written as they are.
   */
  protected async emit(result: unknown, human?: () => string | Uint8Array, options: EmitOptions = {}): Promise<void> {
    if (this.jsonEnabled()) return
    const spec = options.as ?? this.output
    switch (spec.kind) {
      case 'json': {
        this.log(toJson(result))
        break
      }

      case 'yaml': {
        this.log(await toYaml(result))
        break
      }

      case 'jsonpath':
      case 'template': {
        const documents = options.each ?? [result]
        if (documents.length > 0) this.log(renderEach(spec.render, documents))
        break
      }

      default: {
        const text = human?.() ?? ''
        if (typeof text !== 'string') process.stdout.write(text)
        else if (text !== '') this.log(text)
      }
    }
  }

  protected override logJson(json: unknown): void {
    process.stdout.write(`${toJson(json)}\n`)
  }

  protected override async catch(error: Error & {oclif?: {exit?: number}}): Promise<void> {
    if (error instanceof Errors.ExitError) throw error
    this.activeSpinner?.stop()
    if (/^Missing \d+ required args?\b/.test(error.message ?? '')) await showUsage(this.config, this.id)
    const failure = toPodctlError(error)
    if (this.jsonEnabled()) process.stdout.write(`${toJson({error: failure.toJSON()})}\n`)
    this.reportFailure(failure)
    if (this.flags?.debug && failure.code === 'InternalError' && error.stack) process.stderr.write(`${error.stack}\n`)
  }

  /** One line on stderr and the failure's exit code, for failures that still let the command print its result. */
  protected reportFailure(failure: PodctlError): void {
    const label = this.wantsColorOnStderr ? makeChalk(true).red('Error:') : 'Error:'
    this.stderrLine(`${label} ${failure.message}`)
    process.exitCode = failure.exitCode
  }

  /**
   * "Report every failure, exit with the first": one line each (those `print` keeps; the rest
   * were shown as they happened), then the exit code of the first one. Nothing when there are none.
   */
  protected reportFailures(failures: readonly PodctlError[], print: (failure: PodctlError) => boolean = () => true): void {
    for (const failure of failures) if (print(failure)) this.reportFailure(failure)
    if (failures.length > 0) process.exitCode = failures[0].exitCode
  }

  /** A line on stderr (notes, progress), kept clear of the spinner. */
  protected stderrLine(text: string): void {
    this.aboveSpinner(() => process.stderr.write(`${text}\n`))
  }

  /** "Warning: …" on stderr, the label yellow on a colour terminal. */
  protected warnLine(text: string): void {
    this.stderrLine(`${this.wantsColorOnStderr ? makeChalk(true).yellow('Warning:') : 'Warning:'} ${text}`)
  }

  /** Runs a write with the spinner (if one spins) cleared first and drawn again after, so lines never mix with it. */
  protected aboveSpinner(write: () => void): void {
    const spinner = this.activeSpinner?.isSpinning ? this.activeSpinner : undefined
    spinner?.clear()
    write()
    spinner?.render()
  }

  /**
   * The one event printer: each event as `style` shows it (output/events.ts), on stdout for people
   * or on stderr when stdout is for a script, coloured as that stream allows, kept clear of the spinner.
   */
  protected printEvents(style: EventStyle, to: 'stdout' | 'stderr' = 'stderr'): EventSink {
    const stream = to === 'stdout' ? process.stdout : process.stderr
    const paint = makeChalk(to === 'stdout' ? this.chalk.level > 0 : this.wantsColorOnStderr)
    const lineOf = eventLines(style, (text) => paint.yellow(text))
    return (event) => {
      const line = lineOf(event)
      if (line !== undefined) this.aboveSpinner(() => stream.write(`${line}\n`))
    }
  }

  /**
   * SIGINT/SIGTERM/SIGHUP as an AbortSignal, for work that stops (and rolls back) on Ctrl-C. The first
   * signal aborts and shows `notice` (as the spinner's text when one spins). With `exitAgain`, a
   * second signal prints it and exits 130 at once; without, the first signal gives the signals back
   * to Node, so a second one ends the process. release() (or the command's end) removes the listeners.
   */
  protected interruptSignal(options: {notice?: string; exitAgain?: string} = {}): Interruption {
    const controller = new AbortController()
    // One listener per operation in flight (--parallel may exceed the default warning threshold of 10).
    setMaxListeners(0, controller.signal)
    let settled = false
    const onSignal = () => {
      if (settled) return
      if (controller.signal.aborted && options.exitAgain !== undefined) {
        this.activeSpinner?.stop()
        this.stderrLine(options.exitAgain)
        // eslint-disable-next-line n/no-process-exit, unicorn/no-process-exit -- a second Ctrl-C means quit now, rollback or not
        process.exit(ExitCode.INTERRUPTED)
      }

      controller.abort()
      if (options.notice && this.activeSpinner?.isSpinning) this.activeSpinner.text = options.notice
      else if (options.notice) this.stderrLine(options.notice)
      if (options.exitAgain === undefined) interruption.release()
    }

    const interruption: Interruption = {
      signal: controller.signal,
      settle() {
        settled = true
      },
      release: () => {
        // Once settled the handlers stay, ignoring signals until exit: a late Ctrl-C must not turn exit 0 into 130.
        if (settled) return
        for (const name of INTERRUPTING_SIGNALS) process.off(name, onSignal)
        this.interruptions.delete(interruption)
      },
    }
    for (const name of INTERRUPTING_SIGNALS) process.on(name, onSignal)
    this.interruptions.add(interruption)
    return interruption
  }

  protected override async finally(error: Error | undefined): Promise<void> {
    for (const interruption of this.interruptions) interruption.release()
    if (this.criClient) (await this.criClient.catch(() => undefined))?.close()
    await super.finally(error)
    if (error) this.outputHold?.drop()
    else this.outputHold?.release()
  }

  /**
   * A spinner on stderr for slow steps, or undefined: only on a terminal (spinnerWanted), never in
   * JSON mode. ora is loaded here, lazily, so non-interactive runs never pay for it.
   */
  protected async spinner(text: string): Promise<Spinner | undefined> {
    if (!spinnerWanted(process.stderr) || this.jsonEnabled()) return undefined
    const {default: ora} = await import('ora')
    const color = this.wantsColorOnStderr ? 'cyan' : undefined
    this.activeSpinner = ora({text, stream: process.stderr, discardStdin: false, color, isEnabled: true}).start()
    return this.activeSpinner
  }

  protected debugLine(line: string): void {
    const text = `debug: ${line}`
    process.stderr.write(`${this.wantsColorOnStderr ? makeChalk(true).dim(text) : text}\n`)
  }

  private async buildClient(): Promise<CriClient> {
    const {connectRuntime} = await import('./cri/connect.js')
    const config = await this.crictlConfig()
    const debugOn = Boolean(this.flags.debug || config?.debug)
    const endpoints = {runtimeFlag: this.flags['runtime-endpoint'], imageFlag: this.flags['image-endpoint'], env: process.env, config}
    const connected = await connectRuntime(endpoints, {
      connectTimeoutMs: this.flags['connect-timeout'],
      callTimeoutMs: this.callTimeoutMs() ?? config?.timeoutMs,
      commandDeadline: this.commandDeadline(),
      commandTimeoutMs: this.flags.timeout,
      debug: debugOn ? (line) => this.debugLine(line) : undefined,
    })
    this.runtimeSource = connected.runtimeSource
    this.imageSource = connected.imageSource
    if (debugOn) this.debugLine(`runtime endpoint ${connected.client.runtimeEndpoint} (from ${connected.runtimeSource})`)
    return connected.client
  }

  /** The crictl config file, read once. */
  protected crictlConfig(): Promise<CrictlConfig | undefined> {
    this.crictlConfigFile ??= loadConfig(locateConfig(this.flags.config, process.env))
    return this.crictlConfigFile
  }
}

/** A help example, `podctl <command> ARGS` and what it does (keeps the examples' lines short). */
export function example(description: string, args = ''): {description: string; command: string} {
  return {description, command: `<%= config.bin %> <%= command.id %>${args ? ` ${args}` : ''}`}
}

/** Any thrown value → the PodctlError users see; oclif's parse errors are usage errors. */
export function toPodctlError(error: unknown): PodctlError {
  if (error instanceof PodctlError) {
    // oclif rewrites errors thrown by a flag's parse() to "Parsing --x \n\t<message>\nSee more help".
    const inner = /^Parsing --\S+\s*\n\t(.*?)(\nSee more help.*)?$/s.exec(error.message)
    if (inner) error.message = inner[1]
    return error
  }

  const oclifExit = (error as {oclif?: {exit?: number}})?.oclif?.exit
  const message = String((error as Error)?.message ?? error)
  if (oclifExit === 2 || error instanceof Errors.CLIError) {
    const text = message
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('See more help with'))
      .join(' ')
    return new UsageError(`${text}${flagSuggestion(error)}; see --help`)
  }

  return new PodctlError('InternalError', ExitCode.INTERNAL, `${message.split('\n')[0]} (rerun with --debug for details)`)
}
