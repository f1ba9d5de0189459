import {Command, Errors, Flags, type Interfaces} from '@oclif/core'

import {loadConfig, locateConfig, type CrictlConfig} from './cri/config.js'
import type {CriClient} from './cri/client.js'
import type {EndpointSource} from './cri/endpoint.js'
import {ExitCode, PodctlError, UsageError} from './errors.js'
import {durationFlag} from './flags.js'
import type {OutputFormat} from './output/spec.js'
import {makeChalk, wantsColor} from './output/color.js'
import {toJson, toYaml} from './output/serialize.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>
export type BaseArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>

/**
 * The one base every podctl command extends: shared flags, the lazily built CRI client, output
 * helpers, and the single mapping from any failure to a one-line message and an exit code.
 */
export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override enableJsonFlag = true

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
      summary: 'Deadline for each runtime call (default 10s; slow calls such as RunPodSandbox get longer).',
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
  protected runtimeSource?: EndpointSource
  protected imageSource?: EndpointSource
  private criClient?: Promise<CriClient>
  private crictlConfigFile?: Promise<CrictlConfig | undefined>

  public override async init(): Promise<void> {
    await super.init()
    // A parse failure is reported by catch(); mark parsing as attempted so oclif's development
    // check (NODE_ENV=test/development) does not add a misleading warning under the error.
    this.parsed = true
    const {args, flags} = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (super.ctor as typeof BaseCommand).baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      args: this.ctor.args,
      strict: this.ctor.strict,
    })
    this.flags = flags as BaseFlags<T>
    this.args = args as BaseArgs<T>
  }

  /** The shared CRI client, built on first use so commands that never call the runtime stay fast. */
  protected client(): Promise<CriClient> {
    this.criClient ??= this.buildClient()
    return this.criClient
  }

  protected get chalk() {
    return makeChalk(wantsColor({flag: this.flags?.color}))
  }

  protected get wantsColorOnStderr(): boolean {
    return wantsColor({flag: this.flags?.color, isTTY: Boolean(process.stderr.isTTY)})
  }

  /** Writes the result: JSON/YAML for scripts (with --json oclif prints the returned value), else `human()`. */
  protected async emit(format: OutputFormat | undefined, result: unknown, human: () => string): Promise<void> {
    if (this.jsonEnabled()) return
    if (format === 'json') this.log(toJson(result))
    else if (format === 'yaml') this.log(await toYaml(result))
    else {
      const text = human()
      if (text !== '') this.log(text)
    }
  }

  protected override logJson(json: unknown): void {
    process.stdout.write(`${toJson(json)}\n`)
  }

  protected override async catch(error: Error & {oclif?: {exit?: number}}): Promise<void> {
    if (error instanceof Errors.ExitError) throw error
    const failure = toPodctlError(error)
    if (this.jsonEnabled()) process.stdout.write(`${toJson({error: failure.toJSON()})}\n`)
    this.reportFailure(failure)
    if (this.flags?.debug && failure.code === 'InternalError' && error.stack) process.stderr.write(`${error.stack}\n`)
  }

  /** One line on stderr and the failure's exit code, for failures that still let the command print its result. */
  protected reportFailure(failure: PodctlError): void {
    const label = this.wantsColorOnStderr ? makeChalk(true).red('Error:') : 'Error:'
    process.stderr.write(`${label} ${failure.message}\n`)
    process.exitCode = failure.exitCode
  }

  protected override async finally(error: Error | undefined): Promise<void> {
    if (this.criClient) (await this.criClient.catch(() => undefined))?.close()
    await super.finally(error)
  }

  /**
   * A spinner on stderr for slow steps, or undefined: only on a terminal that reports a width
   * (ora's line counting loops forever on zero-width pseudo-terminals), never in JSON mode.
   * ora is loaded here, lazily, so non-interactive runs never pay for it.
   */
  protected async spinner(text: string): Promise<import('ora').Ora | undefined> {
    if (!process.stderr.isTTY || !process.stderr.columns || this.jsonEnabled()) return undefined
    const {default: ora} = await import('ora')
    return ora({text, stream: process.stderr, discardStdin: false, color: this.wantsColorOnStderr ? 'cyan' : undefined}).start()
  }

  protected debugLine(line: string): void {
    const text = `debug: ${line}`
    process.stderr.write(`${this.wantsColorOnStderr ? makeChalk(true).dim(text) : text}\n`)
  }

  private async buildClient(): Promise<CriClient> {
    const [{planEndpoints}, {connectPlan}] = await Promise.all([import('./cri/endpoint.js'), import('./cri/connect.js')])
    const config = await this.crictlConfig()
    const debugOn = Boolean(this.flags.debug || config?.debug)
    const plan = planEndpoints({
      runtimeFlag: this.flags['runtime-endpoint'],
      imageFlag: this.flags['image-endpoint'],
      env: process.env,
      config,
    })
    const connected = await connectPlan(plan, {
      connectTimeoutMs: this.flags['connect-timeout'],
      callTimeoutMs: this.flags.timeout ?? config?.timeoutMs,
      debug: debugOn ? (line) => this.debugLine(line) : undefined,
    })
    this.runtimeSource = connected.runtimeSource
    this.imageSource = connected.imageSource
    if (debugOn) this.debugLine(`runtime endpoint ${connected.client.runtimeEndpoint} (from ${connected.runtimeSource})`)
    return connected.client
  }

  /** The crictl config file, read once (oclif owns `config`). */
  protected crictlConfig(): Promise<CrictlConfig | undefined> {
    this.crictlConfigFile ??= loadConfig(locateConfig(this.flags.config, process.env))
    return this.crictlConfigFile
  }
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
      .filter((line) => line !== '' && !/^See more help with/.test(line))
      .join(' ')
    return new UsageError(`${text}; see --help`)
  }

  return new PodctlError('InternalError', ExitCode.INTERNAL, `${message.split('\n')[0]} (rerun with --debug for details)`)
}
