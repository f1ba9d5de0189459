import {Flags} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'
import {containerOrPodArg, detachKeysFlag, streamImageEndpointFlag} from '../lib/flags.js'
import {UsageError} from '../lib/errors.js'
import {execInContainer} from '../lib/node/exec.js'
import {configFlagAsContainer, resolveContainerArgument} from '../lib/node/container-flag.js'
import {execInteractive} from '../lib/streaming/runtime-streams.js'
import {detachHint, parseDetachKeys} from '../lib/streaming/detach-keys.js'
import {separateCommand, valueFlagSpellings} from '../lib/util/command-separator.js'

export interface ExecResult {
  containerId: string
  exitCode: number
}

const USAGE = 'podctl exec CONTAINER [--] CMD [ARG...]'

export default class Exec extends BaseCommand<typeof Exec> {
  // --timeout here is the command's own time limit, not a bound on the whole command.
  static override timeoutBoundsCommand = false
  static override summary = "Run a command in a running container (-it for a shell); exits with the command's exit code."

  static override description = `Without -i/-t, runs the command with ExecSync and writes its stdout to stdout and its \
stderr to stderr, byte for byte. podctl exits with the command's exit code (0-255), so scripts can test it; podctl's \
own failures use the exit codes listed in the README (e.g. 5 container not found, 9 container not running). There \
--timeout is the command's time limit (whole seconds, sent to the runtime, which kills the command when it runs out; \
podctl then exits 4). Without --timeout the command may run as long as it needs.

With -i (stdin) and/or -t (a terminal) the command runs through the runtime's streaming server (CRI Exec): -i sends \
podctl's stdin to the command (a pipe's end is the command's end of input), -t gives it a terminal (the local one \
in raw mode, window size followed, restored on exit; Ctrl-C goes to the command; with both, Ctrl-P Ctrl-Q, or \
--detach-keys, ends the session with exit 0 as docker's detach does). The exit code is still the \
command's; --timeout bounds only the set-up. A runtime without a usable streaming server fails with exit 16. \
As in crictl, the command starts at the first word after the container (\`exec CONTAINER ls -l\`); put "--" before \
it when podctl's own flags come after the container's name. -s/--sync (crictl's) is the default without -i/-t.`

  static override examples = [
    {description: 'List a directory in a container (ID prefix)', command: '<%= config.bin %> <%= command.id %> 4f2a9c -- ls -l /etc'},
    {description: 'The same as crictl writes it: no "--"', command: '<%= config.bin %> <%= command.id %> 4f2a9c ls -l /etc'},
    {
      description: 'A shell pipeline in container "app" of pod web in namespace shop',
      command: `<%= config.bin %> <%= command.id %> -n shop web/app -- sh -c 'ps; df -h'`,
    },
    {
      description: "As kubectl: pod web's only container (or its default-container annotation's)",
      command: '<%= config.bin %> <%= command.id %> -n shop web -- env',
    },
    {
      description: 'As kubectl: container "app" of pod web',
      command: '<%= config.bin %> <%= command.id %> -n shop web --container app -- env',
    },
    {description: 'An interactive shell', command: '<%= config.bin %> <%= command.id %> -it web/app -- sh'},
    {
      description: 'An interactive shell left with Ctrl-] instead of Ctrl-P Ctrl-Q',
      command: '<%= config.bin %> <%= command.id %> -it --detach-keys ctrl-] web/app -- sh',
    },
    {description: 'Feed a file to a command', command: '<%= config.bin %> <%= command.id %> -i web/app -- sh -c "cat > /tmp/conf" < conf'},
    {
      description: "Health check with a time limit; the exit code is the check's",
      command: '<%= config.bin %> <%= command.id %> 4f2a9c --timeout 5s -- /bin/check || echo "check failed: $?"',
    },
  ]

  static override usage = '<%= command.id %> [-i] [-t] [-s] CONTAINER [-n NAMESPACE] [--timeout DURATION] [--] CMD [ARG...]'

  static override enableJsonFlag = false
  static override strict = false

  static override args = {
    container: containerOrPodArg,
  }

  // -i is stdin here, as in crictl and kubectl: the image endpoint keeps only its long name.
  static override baseFlags = {...BaseCommand.baseFlags, 'image-endpoint': streamImageEndpointFlag}

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Namespace of the pod in POD/CONTAINER (default "default").'}),
    container: Flags.string({
      summary: "The container of the pod named by CONTAINER (kubectl's -c; podctl's -c is crictl's --config).",
      helpValue: 'NAME',
    }),
    interactive: Flags.boolean({char: 'i', summary: "Send podctl's stdin to the command (through the streaming server)."}),
    tty: Flags.boolean({char: 't', summary: 'Give the command a terminal; with a local terminal, raw mode and window size.'}),
    'detach-keys': detachKeysFlag,
    sync: Flags.boolean({
      char: 's',
      summary: "crictl's --sync: run the command with ExecSync, as podctl does without -i/-t.",
      exclusive: ['interactive', 'tty'],
    }),
  }

  /** crictl's `exec CONTAINER CMD ARG...`: without "--", the command starts at the first word after the container. */
  public override async init(): Promise<void> {
    const flags = {...BaseCommand.baseFlags, ...Exec.baseFlags, ...Exec.flags} as Record<string, {type: string; char?: string}>
    const spellings = valueFlagSpellings(flags)
    this.argv = separateCommand(this.argv, (flag) => spellings.has(flag))
    await super.init()
  }

  public async run(): Promise<ExecResult> {
    const cmd = this.commandArgv()
    if (cmd.length === 0) throw new UsageError(`no command given; usage: ${USAGE}`)

    // Bad keys are a usage error before anything is sent.
    const detachKeys = parseDetachKeys(this.flags['detach-keys'])
    const configAsContainer = await configFlagAsContainer(this.argv, this.flags.config)
    if (configAsContainer !== undefined) this.flags.config = undefined
    const client = await this.client()
    const {container, note} = await resolveContainerArgument(client, this.args.container, {
      namespace: this.flags.namespace,
      container: this.flags.container,
      configAsContainer,
    })
    if (note) this.stderrLine(note)
    if (this.flags.interactive || this.flags.tty) {
      const {interactive: stdin, tty} = this.flags
      const hint = detachHint(detachKeys, {stdin, tty})
      if (hint) this.stderrLine(hint)
      const {exitCode, detached} = await execInteractive(client, container, cmd, {
        stdin,
        tty,
        detachKeys,
        signal: this.interruptSignal().signal,
      })
      if (detached) this.stderrLine('\r\nDetached; the process keeps running.')
      process.exitCode = exitCode
      return {containerId: container.id, exitCode}
    }

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

  /** Everything after "--" (put there by init() when the command came without it), untouched. */
  private commandArgv(): string[] {
    const separator = this.argv.indexOf('--')
    return separator === -1 ? [] : this.argv.slice(separator + 1)
  }
}

function write(stream: NodeJS.WriteStream, data: Buffer): Promise<void> {
  if (data.length === 0) return Promise.resolve()
  return new Promise((resolve, reject) => {
    stream.write(data, (error) => (error ? reject(error) : resolve()))
  })
}
