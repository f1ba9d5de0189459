/**
 * `podctl debug POD` and `podctl debug node` (issue 35): kubectl debug's two shapes on one node,
 * without an API server (lib/debug/run-debug.ts does the work).
 */
import {totalmem} from 'node:os'

import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {UsageError} from '../lib/errors.js'
import {claimsRootFlag, podDirRootFlag, podLogsRootFlag, streamImageEndpointFlag} from '../lib/flags.js'
import {discardEvents} from '../lib/kube/events.js'
import {holdExitOnOutputFailure} from '../lib/output/closed-pipe.js'
import {separateCommand, valueFlagSpellings} from '../lib/util/command-separator.js'
import type {DebugOutcome} from '../lib/debug/run-debug.js'

const USAGE =
  'podctl debug POD --image IMAGE [--target CONTAINER] [--container NAME] [-it] [--keep] [-- CMD...], ' +
  'or podctl debug node [--image IMAGE] [-it] [-- CMD...]'

/** What both shapes take from the command line. */
interface DebugRequest {
  image: string
  command: string[]
  interactive: boolean
  tty: boolean
  description: string
}

/** A container's name: a DNS label, as the API server checks it. */
const DNS_LABEL = /^[a-z\d]([-a-z\d]{0,61}[a-z\d])?$/

export default class Debug extends BaseCommand<typeof Debug> {
  // The session lasts as long as the user wants; --timeout bounds only the calls.
  static override timeoutBoundsCommand = false

  static override summary = "Debug a pod (a debug container in its sandbox) or the node (a privileged pod); exits with the command's code."

  static override description = `kubectl debug without an API server. \`debug POD\` adds a debug container from \
--image to the pod's running sandbox (as \`podctl create\` adds one): in the pod's network and IPC namespaces and, with \
--target CONTAINER, in that container's PID namespace (CRI NamespaceMode TARGET), so its tools see the target's \
processes even when the target's image has no shell. \`debug node\` runs a privileged pod in the host's PID, network and \
IPC namespaces with the host's / mounted at /host, as \`kubectl debug node/NAME\` does (a pod literally named "node" is \
debugged as node_NAMESPACE).

Without -i the command's output (stdout, stderr) is shown from its first line until it exits; with -i podctl's stdin \
goes to it and -t gives it a terminal (as attach -it: the process runs before the attach, so a shell's prompt may need \
an Enter). podctl exits with the command's exit code. The debug container, or the debug pod, is removed when the \
command ends or on Ctrl-C, SIGTERM or SIGHUP; --keep leaves the debug container (remove it with podctl rm -f). One that \
a killed podctl (SIGKILL, a lost SSH session) left behind carries that podctl's pid and start time: the next podctl \
debug and podctl gc remove it once that process is gone, and never a kept one, another tool's, or a live session's.

--image defaults to $PODCTL_DEBUG_IMAGE; with neither, debug refuses (exit 2). Bad flags exit 2, an unknown pod or \
--target 5, a target that is not running 9; a pull that fails exits as run's does.`

  static override examples = [
    example('List the processes of container main of pod web (its image has no shell)', 'web --target main --image busybox:1.36 -- ps'),
    example('A shell beside container main', '-it web --target main --image busybox:1.36 -- sh'),
    example("Read the host's files from a shell on the node", '-it node --image busybox:1.36 -- sh'),
    example('One command on the node', 'node --image busybox:1.36 -- cat /host/etc/hostname'),
  ]

  static override usage = [
    '<%= command.id %> POD --image IMAGE [--target CONTAINER] [--container NAME] [-n NAMESPACE] [-it] [--keep] [-- CMD...]',
    '<%= command.id %> node [--image IMAGE] [-n NAMESPACE] [-it] [-- CMD...]',
  ]

  static override enableJsonFlag = false
  static override strict = false

  static override args = {
    pod: Args.string({description: 'The pod (name, name_namespace or sandbox ID prefix), or "node" for the node.'}),
  }

  // -i is stdin here, as in kubectl: the image endpoint keeps only its long name.
  static override baseFlags = {...BaseCommand.baseFlags, 'image-endpoint': streamImageEndpointFlag}

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Namespace of the pod (default "default"); with node, of the debug pod.'}),
    image: Flags.string({summary: 'Image of the debug container (default $PODCTL_DEBUG_IMAGE).', helpValue: 'IMAGE'}),
    target: Flags.string({summary: "Join this container's PID namespace (kubectl debug --target).", helpValue: 'CONTAINER'}),
    container: Flags.string({summary: 'Name of the debug container (default debugger-<random>).', helpValue: 'NAME'}),
    interactive: Flags.boolean({char: 'i', summary: "Send podctl's stdin to the debug container's process."}),
    tty: Flags.boolean({char: 't', summary: 'Give it a terminal (needs -i).'}),
    keep: Flags.boolean({summary: 'Leave the debug container when the command ends (POD only).'}),
    'pod-logs-root': podLogsRootFlag,
    'pod-dir-root': podDirRootFlag,
    'claims-root': claimsRootFlag,
  }

  /** kubectl's `debug POD CMD...`: without "--", the command starts at the first word after the pod. */
  public override async init(): Promise<void> {
    const flags = {...BaseCommand.baseFlags, ...Debug.baseFlags, ...Debug.flags} as Record<string, {type: string; char?: string}>
    const spellings = valueFlagSpellings(flags)
    this.argv = separateCommand(this.argv, (flag) => spellings.has(flag))
    await super.init()
  }

  public async run(): Promise<DebugOutcome> {
    const {flags} = this
    const ref = this.args.pod
    if (ref === undefined) throw new UsageError(`no pod given; usage: ${USAGE}`)
    const node = ref === 'node'
    const request = {
      image: this.debugImage(),
      command: this.commandArgv(),
      interactive: flags.interactive,
      tty: flags.tty,
      description: ['podctl debug', ref, ...(flags.target ? ['--target', flags.target] : [])].join(' '),
    }
    this.checkFlags(node)
    const client = await this.client()
    const {reapBeforeDebug, debugNode} = await import('../lib/debug/run-debug.js')
    const roots = {podDirRoot: flags['pod-dir-root'], logsRoot: flags['pod-logs-root']}
    await reapBeforeDebug(client, {podDirRoot: roots.podDirRoot, podLogsRoot: roots.logsRoot})
    const interruption = this.interruptSignal({notice: `Interrupted: removing the debug ${node ? 'pod' : 'container'}`})
    // A closed terminal (a lost SSH session) fails every write with EIO: end the session as on SIGHUP, still removing it.
    const outputFailure = holdExitOnOutputFailure(interruption.signal)
    const {signal} = outputFailure
    try {
      const outcome = node
        ? await debugNode(client, {...request, namespace: flags.namespace ?? 'default'}, {...roots, ...this.nodeRoots(), signal})
        : await this.debugPod(ref, request, signal)
      if (outcome.kept) {
        const id = outcome.containerId.slice(0, 13)
        this.stderrLine(`Debug container ${id} of pod ${outcome.pod} kept; remove it with: podctl rm -f ${id}`)
      }

      process.exitCode = outcome.exitCode
      return outcome
    } finally {
      interruption.release()
      outputFailure.release()
    }
  }

  /** The debug container in the pod's newest ready sandbox. */
  private async debugPod(ref: string, request: DebugRequest, signal: AbortSignal): Promise<DebugOutcome> {
    const {flags} = this
    const client = await this.client()
    const [{debugInPod, readySandbox}, {resolvePodSandboxes}, {ImageManager}] = await Promise.all([
      import('../lib/debug/run-debug.js'),
      import('../lib/node/resolve.js'),
      import('../lib/images/image-manager.js'),
    ])
    const sandbox = readySandbox(await resolvePodSandboxes(client, ref, {namespace: flags.namespace}))
    const podDirRoot = flags['pod-dir-root']
    const images = new ImageManager(client, discardEvents, {recordPullsIn: podDirRoot, refusedPullRetries: 0})
    const settings = {podDirRoot, logsRoot: flags['pod-logs-root'], nodeMemoryBytes: totalmem(), images, events: discardEvents, signal}
    return debugInPod(client, sandbox, {...request, target: flags.target, name: flags.container, keep: flags.keep}, settings)
  }

  private nodeRoots(): {claimsRoot: string; events: typeof discardEvents} {
    return {claimsRoot: this.flags['claims-root'], events: discardEvents}
  }

  /** --image, else $PODCTL_DEBUG_IMAGE. */
  private debugImage(): string {
    const image = this.flags.image ?? process.env.PODCTL_DEBUG_IMAGE
    if (image === undefined || image.trim() === '') {
      throw new UsageError('--image is required (no $PODCTL_DEBUG_IMAGE set): the image of the debug container, e.g. --image busybox:1.36')
    }

    return image
  }

  private checkFlags(node: boolean): void {
    const {flags} = this
    if (flags.tty && !flags.interactive) throw new UsageError('-t/--tty needs -i/--interactive (as kubectl debug -it)')
    if (flags.container !== undefined && !DNS_LABEL.test(flags.container)) {
      const name = JSON.stringify(flags.container)
      throw new UsageError(`--container ${name}: not a container name (lower-case letters, digits and "-", at most 63)`)
    }

    if (!node) return
    const podOnly = (['target', 'container', 'keep'] as const).filter((flag) => flags[flag] !== undefined && flags[flag] !== false)
    if (podOnly.length > 0) throw new UsageError(`--${podOnly[0]} applies to debug POD, not to debug node`)
  }

  /** What follows "--". */
  private commandArgv(): string[] {
    const separator = this.argv.indexOf('--')
    return separator === -1 ? [] : this.argv.slice(separator + 1)
  }
}
