/**
 * One crictl invocation as a command's Action sees it (urfave's cli.Context plus crictl's
 * CrictlConfig): the parsed flags and arguments, the resolved settings, the runtime and image
 * services (connected on first use, as crictl connects only to what a command needs), stdout, and
 * the ways an Action ends: return, fail (logrus.Error and exit 1, main.go), show the command's usage
 * (exit 0), or cli.Exit (its message on stderr, its code).
 */
import type {CriClient} from '../cri/client.js'
import {connectImageService, connectRuntimeService} from './connect.js'
import {crictlCause} from './errors.js'
import type {CrictlInvocation} from './front.js'
import {parseGoBool, parseGoDuration} from './flag-set.js'
import type {CrictlSettings} from './server-config.js'

/** A failure crictl's main logs at error level before exiting 1: the message is crictl's whole error chain. */
export class CrictlError extends Error {}

/** cli.ShowSubcommandHelp from an Action: the command's usage on stdout, exit 0 (or a logged error first). */
export class ShowUsage extends Error {}

/** cli.Exit(message, code): the message on stderr as it is, then the code. */
export class CrictlExit extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message)
  }
}

/** `${doing}: ${cause}` as fmt.Errorf("…: %w") builds crictl's errors; a runtime error reads as grpc-go prints it. */
export function wrap(doing: string, error: unknown): CrictlError {
  if (error instanceof ShowUsage || error instanceof CrictlExit) throw error
  return new CrictlError(`${doing}: ${describe(error)}`)
}

/** An error's text as crictl would print it: grpc-go's for a runtime answer, the message otherwise. */
export function describe(error: unknown): string {
  return error instanceof CrictlError ? error.message : crictlCause(error)
}

export class CrictlSession {
  private runtimeClient?: Promise<CriClient>
  private imageClient?: Promise<CriClient>
  readonly args: readonly string[]

  constructor(
    readonly invocation: CrictlInvocation,
    readonly settings: CrictlSettings,
    readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.args = invocation.args
  }

  /** The last value given for a flag, else its environment variable, else undefined. */
  value(name: string): string | undefined {
    const given = this.invocation.flags.byFlag.get(name)?.at(-1)
    if (given !== undefined) return given
    const flag = this.invocation.command.flags.find((candidate) => candidate.name === name)
    const env = flag?.env?.find((variable) => this.env[variable] !== undefined)
    return env === undefined ? undefined : this.env[env]
  }

  /** urfave's IsSet: given on the command line or through its environment variable. */
  isSet(name: string): boolean {
    return this.value(name) !== undefined
  }

  string(name: string): string {
    return this.value(name) ?? String(this.flagDefault(name) ?? '')
  }

  bool(name: string): boolean {
    const value = this.value(name)
    return value !== undefined && parseGoBool(value) === true
  }

  int(name: string): number {
    const value = this.value(name)
    return value === undefined ? Number(this.flagDefault(name) ?? 0) : Number(value)
  }

  /** A duration flag in milliseconds (0 when not given). */
  duration(name: string): number {
    const value = this.value(name)
    return value === undefined ? 0 : (parseGoDuration(value) ?? 0)
  }

  strings(name: string): string[] {
    const given = this.invocation.flags.byFlag.get(name)
    if (given) return given
    const value = this.value(name)
    return value === undefined ? [] : value.split(',')
  }

  private flagDefault(name: string): string | number | undefined {
    return this.invocation.command.flags.find((flag) => flag.name === name)?.value
  }

  /** The runtime service, connected and validated once (`timeoutMs` as --cancel-timeout overrides crictl's timeout). */
  runtime(timeoutMs = 0): Promise<CriClient> {
    this.runtimeClient ??= connectRuntimeService(timeoutMs > 0 ? {...this.settings, timeoutMs} : this.settings).catch((error: unknown) => {
      throw new CrictlError(describe(error))
    })
    return this.runtimeClient
  }

  image(): Promise<CriClient> {
    this.imageClient ??= connectImageService(this.settings).catch((error: unknown) => {
      throw new CrictlError(describe(error))
    })
    return this.imageClient
  }

  out(text: string): void {
    process.stdout.write(text)
  }

  /** fmt.Println. */
  println(text = ''): void {
    process.stdout.write(`${text}\n`)
  }

  usage(): never {
    throw new ShowUsage()
  }

  async close(): Promise<void> {
    for (const client of [this.runtimeClient, this.imageClient]) (await client?.catch(() => undefined))?.close()
  }
}
