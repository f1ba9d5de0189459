import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'
import {detachKeysFlag, streamImageEndpointFlag} from '../lib/flags.js'
import {resolveContainer} from '../lib/node/resolve.js'
import {attachInteractive} from '../lib/streaming/runtime-streams.js'
import {detachHint, parseDetachKeys} from '../lib/streaming/detach-keys.js'

export interface AttachResult {
  containerId: string
  exitCode: number
}

export default class Attach extends BaseCommand<typeof Attach> {
  // The session lasts as long as the user wants; --timeout bounds only the calls and the set-up.
  static override timeoutBoundsCommand = false
  static override summary = "Attach to a running container's main process (its output; with -i its stdin, with -t its terminal)."

  static override description = `Connects podctl's stdout and stderr to the container's main process through the \
runtime's streaming server (CRI Attach), as crictl attach and kubectl attach do. -i also sends podctl's stdin to it \
(the container must have been created with stdin: true); -t is for a container created with tty: true (the local \
terminal is then in raw mode, its size followed, restored on exit).

The session ends when the process exits (or, for a container with stdinOnce, when stdin ends) or on Ctrl-C (without \
-t; with -t, Ctrl-C goes to the container). With -i and -t, Ctrl-P Ctrl-Q (--detach-keys, docker's spelling) \
detaches with exit 0, as docker attach does; a line on stderr says so when the session starts. The container keeps \
running after a detach. A runtime without a usable \
streaming server fails with exit 16.`

  static override examples = [
    {description: 'Follow the output of container app of pod web', command: '<%= config.bin %> <%= command.id %> web/app'},
    {description: 'Type into a shell that runs as the main process', command: '<%= config.bin %> <%= command.id %> -it 4f2a9c'},
    {
      description: 'The same, with no detach keys (every key goes to the shell)',
      command: `<%= config.bin %> <%= command.id %> -it --detach-keys '' 4f2a9c`,
    },
  ]

  static override usage = '<%= command.id %> [-i] [-t] CONTAINER [-n NAMESPACE]'
  static override enableJsonFlag = false

  static override args = {
    container: Args.string({description: 'Container ID prefix, or POD/CONTAINER (pod name in --namespace).', required: true}),
  }

  // -i is stdin here, as in crictl and kubectl: the image endpoint keeps only its long name.
  static override baseFlags = {...BaseCommand.baseFlags, 'image-endpoint': streamImageEndpointFlag}

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Namespace of the pod in POD/CONTAINER (default "default").'}),
    interactive: Flags.boolean({char: 'i', summary: "Send podctl's stdin to the container's process."}),
    tty: Flags.boolean({char: 't', summary: 'The container has a terminal (created with tty: true).'}),
    'detach-keys': detachKeysFlag,
  }

  public async run(): Promise<AttachResult> {
    // Bad keys are a usage error before anything is sent.
    const detachKeys = parseDetachKeys(this.flags['detach-keys'])
    const client = await this.client()
    const container = await resolveContainer(client, this.args.container, {namespace: this.flags.namespace})
    const {interactive: stdin, tty} = this.flags
    const hint = detachHint(detachKeys, {stdin, tty})
    if (hint) this.stderrLine(hint)
    const {exitCode, detached} = await attachInteractive(client, container, {stdin, tty, detachKeys, signal: this.interruptSignal().signal})
    if (detached) this.stderrLine('\r\nDetached; the process keeps running.')
    process.exitCode = exitCode
    return {containerId: container.id, exitCode}
  }
}
