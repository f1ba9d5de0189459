/**
 * `podctl stop`: running containers stopped the way the kubelet kills one (kubelet/container-ops.ts):
 * preStop hook within the grace period, then StopContainer; one ID per line as crictl prints them.
 */
import {Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {durationFlag, outputFlag} from '../lib/flags.js'
import {discardEvents} from '../lib/kube/events.js'
import {forEachContainer, stopOneContainer, type StoppedResult} from '../lib/kubelet/kuberuntime/container-ops.js'
import {containersLeftAloneNote, resolveContainers} from '../lib/node/resolve-containers.js'

export interface StopResult {
  items: StoppedResult[]
  failures: Array<{container: string; code: string; exitCode: number; message: string}>
}

export default class Stop extends BaseCommand<typeof Stop> {
  static override summary = "Stop running containers the kubelet's way: preStop hook, then SIGTERM, SIGKILL after the grace period."

  static override description = `For each container: a Killing event, its preStop exec hook (recorded by podctl run/create \
in the io.kubernetes.container.preStopHandler annotation) within the grace period, then StopContainer with what is left \
of it (at least 2s). The grace period is --timeout (crictl stop -t, in seconds), else the container's recorded \
io.kubernetes.pod.terminationGracePeriod, else 30s; --timeout 0 kills at once without the hook. A container that is not \
running is left as it is. The stopped container stays (podctl rm removes it). Each ID is printed once stopped. --all \
stops only containers podctl made: crictl's, a kubelet's and other tools' are left alone (counted on stderr; name one to \
stop it).

--timeout here is the grace period, not a deadline of the command (the runtime calls keep their own deadlines).`

  static override examples = [
    example('Stop a container by ID prefix, with its recorded grace period', '4f2a9c'),
    example('Give it 5 seconds', '-t 5 -n shop web/debug'),
    example('Stop every running container podctl made in a namespace, at once', '--all -n ci -t 0'),
  ]

  static override strict = false

  static override flags = {
    timeout: durationFlag({
      char: 't',
      summary: "Grace period in seconds (or a duration); 0 kills at once. Default: the container's terminationGracePeriod, else 30.",
      helpValue: 'SECONDS',
    }),
    all: Flags.boolean({char: 'a', summary: 'Stop every running container podctl made (restricted by --namespace when given).'}),
    namespace: Flags.string({
      char: 'n',
      summary: 'Namespace of the pods named in POD/CONTAINER (default "default"); with --all, only this one.',
    }),
    parallel: Flags.integer({summary: 'How many containers to stop at the same time.', default: 4, min: 1, helpValue: 'N'}),
    quiet: Flags.boolean({char: 'q', summary: 'Only the IDs: no warnings on stderr.'}),
    output: outputFlag(['table', 'json', 'yaml']),
  }

  static override usage = '<%= command.id %> CONTAINER... [-t SECONDS] [-n NAMESPACE] | --all'

  /** --timeout is the grace period here; each runtime call keeps the client's default deadline. */
  protected override callTimeoutMs(): number | undefined {
    return undefined
  }

  protected override commandDeadline(): number | undefined {
    return undefined
  }

  public async run(): Promise<StopResult> {
    const {flags} = this
    const client = await this.client()
    const states = ['CONTAINER_RUNNING' as const]
    const selection = {refs: this.positional, namespace: flags.namespace, all: flags.all, states, onlyPodctl: true}
    const {containers, failures, leftAlone} = await resolveContainers(client, selection)
    if (leftAlone) this.stderrLine(containersLeftAloneNote(leftAlone, 'stop'))
    if (flags.all && containers.length === 0) this.stderrLine('no running containers; nothing to stop')
    const gracePeriodSeconds = flags.timeout === undefined ? undefined : Math.ceil(flags.timeout / 1000)
    const events = flags.quiet ? discardEvents : this.printEvents({kind: 'warnings'})
    const outcome = await forEachContainer(containers, flags.parallel, async (container) => {
      const stopped = await stopOneContainer(client, container, {gracePeriodSeconds, events})
      if (!this.machineOutput()) this.log(stopped.containerId)
      return stopped
    })
    const all = [...failures, ...outcome.failures]
    const result: StopResult = {items: outcome.items, failures: all.map(({ref, error}) => ({container: ref, ...error.toJSON()}))}
    if (this.machineOutput()) await this.emit(result)
    this.reportFailures(all.map(({error}) => error))
    return result
  }
}
