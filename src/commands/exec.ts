import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'
import {UsageError} from '../lib/errors.js'
import {execInContainer} from '../lib/node/exec.js'
import {resolveContainer} from '../lib/node/resolve.js'

export interface ExecResult {
  containerId: string
  exitCode: number
}

const USAGE = 'podctl exec CONTAINER -- CMD [ARG...]'

export default class Exec extends BaseCommand<typeof Exec> {
  // --timeout here is the command's own time limit, not a bound on the whole command.
  static override timeoutBoundsCommand = false
  static override summary = "Run a command in a running container; exits with the command's exit code."

  static override description = `Runs the command with ExecSync and writes its stdout to stdout and its stderr to \
stderr, byte for byte. podctl exits with the command's exit code (0-255), so scripts can test it; podctl's own \
failures use the exit codes listed in the README (e.g. 5 container not found, 9 container not running).

For exec, --timeout is the command's time limit (whole seconds, sent to the runtime, which kills the command when \
it runs out; podctl then exits 4). Without --timeout the command may run as long as it needs.

Interactive exec (-it, a TTY or stdin) is not supported: it needs the CRI streaming server. Run non-interactive \
commands instead. Put "--" between podctl's flags and the command.`

  static override examples = [
    {description: 'List a directory in a container (ID prefix)', command: '<%= config.bin %> <%= command.id %> 4f2a9c -- ls -l /etc'},
    {
      description: 'A shell pipeline in container "app" of pod web in namespace shop',
      command: `<%= config.bin %> <%= command.id %> -n shop web/app -- sh -c 'ps; df -h'`,
    },
    {
      description: "Health check with a time limit; the exit code is the check's",
      command: '<%= config.bin %> <%= command.id %> 4f2a9c --timeout 5s -- /bin/check || echo "check failed: $?"',
    },
  ]

  static override usage = '<%= command.id %> CONTAINER [-n NAMESPACE] [--timeout DURATION] -- CMD [ARG...]'

  static override enableJsonFlag = false
  static override strict = false

  static override args = {
    container: Args.string({description: 'Container ID prefix, or POD/CONTAINER (pod name in --namespace).', required: true}),
  }

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Namespace of the pod in POD/CONTAINER (default "default").'}),
    interactive: Flags.boolean({summary: 'Not supported: interactive exec needs the CRI streaming server.', hidden: true}),
    tty: Flags.boolean({char: 't', summary: 'Not supported: interactive exec needs the CRI streaming server.', hidden: true}),
  }

  public async run(): Promise<ExecResult> {
    this.refuseInteractive()
    const cmd = this.commandArgv()
    if (cmd.length === 0) throw new UsageError(`no command given; usage: ${USAGE}`)

    const client = await this.client()
    const container = await resolveContainer(client, this.args.container, {namespace: this.flags.namespace})
    const outcome = await execInContainer(client, container, cmd, {timeoutMs: this.flags.timeout})
    await write(process.stdout, outcome.stdout)
    await write(process.stderr, outcome.stderr)
    process.exitCode = outcome.exitCode
    return {containerId: container.id, exitCode: outcome.exitCode}
  }

  protected override async catch(error: Error & {oclif?: {exit?: number}}): Promise<void> {
    // `podctl exec c ls -l` without "--": oclif takes -l for a podctl flag; say how to fix it.
    if (!this.argv.includes('--') && /Nonexistent flag/.test(error.message)) {
      return super.catch(new UsageError(`${error.message.split('\n')[0]}: put "--" before the command: ${USAGE}`))
    }

    return super.catch(error)
  }

  /** Everything after "--", untouched (kubectl also insists on the separator: it keeps the command's flags away from ours). */
  private commandArgv(): string[] {
    const separator = this.argv.indexOf('--')
    if (separator === -1) throw new UsageError(`put "--" between the container and the command: ${USAGE}`)
    return this.argv.slice(separator + 1)
  }

  /** -i is the global --image-endpoint, so `-it` would silently mean "image endpoint t": refuse it, and -t/--interactive. */
  private refuseInteractive(): void {
    const separator = this.argv.indexOf('--')
    const ours = separator === -1 ? this.argv : this.argv.slice(0, separator)
    const shortI = ours.some((token) => /^-[a-zA-Z]*i[a-zA-Z]*$/.test(token))
    if (this.flags.interactive || this.flags.tty || shortI) {
      throw new UsageError(
        `interactive exec (-i/-t) is not supported (it needs the CRI streaming server); run a non-interactive command: ${USAGE}`,
      )
    }
  }
}

function write(stream: NodeJS.WriteStream, data: Buffer): Promise<void> {
  if (data.length === 0) return Promise.resolve()
  return new Promise((resolve, reject) => {
    stream.write(data, (error) => (error ? reject(error) : resolve()))
  })
}
