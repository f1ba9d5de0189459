/**
 * `podctl rm`: containers removed (kubelet/container-ops.ts), with their log files unless
 * --keep-logs; --force stops a running one first. One ID per line as crictl prints them.
 */
import {Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {outputFlag} from '../lib/flags.js'
import {forEachContainer, type RemovedResult, removeOneContainer} from '../lib/kubelet/kuberuntime/container-ops.js'
import {containersLeftAloneNote, resolveContainers} from '../lib/node/resolve-containers.js'
import {type PodctlError, RuntimeError} from '../lib/errors.js'
import {isCrictl} from '../lib/crictl/personality.js'
import {info} from '../lib/crictl/log.js'
import {crictlCause} from '../lib/crictl/errors.js'
import {
  crictlItemFailures,
  DOING,
  givenRef,
  NOTHING_TO_REMOVE,
  runningContainer,
  UNABLE_TO_REMOVE_CONTAINERS,
} from '../lib/crictl/messages.js'

export interface RmResult {
  items: RemovedResult[]
  failures: Array<{container: string; code: string; exitCode: number; message: string}>
}

export default class Rm extends BaseCommand<typeof Rm> {
  static override summary = 'Remove containers (and their log files); --force stops running ones first.'

  static override description = `RemoveContainer for each container. A running container is refused (exit 9) unless \
--force, which kills it at once first (StopContainer with timeout 0, as crictl rm -f; use podctl stop first for its preStop \
hook and grace period). The container's log file and its rotations are deleted, as the kubelet and crictl do, unless \
--keep-logs. --all removes every container podctl made (of --namespace when given): crictl's, a kubelet's and other \
tools' containers are left alone (counted on stderr; name one to remove it; as crictl, rm -a removes every container). \
The sandbox stays: remove a whole pod with podctl rmp or podctl kill. Each ID is printed once removed; every failure is \
reported, the exit code is the first's.`

  static override examples = [
    example('Remove a stopped container', '4f2a9c'),
    example('Remove a running debug container at once', '-f -n shop web/debug'),
    example('Remove every container podctl made in a namespace, keeping the logs', '--all -f -n ci --keep-logs'),
  ]

  static override strict = false

  static override flags = {
    force: Flags.boolean({char: 'f', summary: 'Stop running containers first (killed at once).'}),
    all: Flags.boolean({char: 'a', summary: 'Remove every container podctl made (restricted by --namespace when given).'}),
    'keep-logs': Flags.boolean({char: 'k', summary: "Keep the containers' log files."}),
    namespace: Flags.string({
      char: 'n',
      summary: 'Namespace of the pods named in POD/CONTAINER (default "default"); with --all, only this one.',
    }),
    parallel: Flags.integer({summary: 'How many containers to remove at the same time.', default: 4, min: 1, helpValue: 'N'}),
    output: outputFlag(['table', 'json', 'yaml']),
  }

  static override usage = '<%= command.id %> CONTAINER... [-f] [-n NAMESPACE] | --all'

  public async run(): Promise<RmResult> {
    const {flags} = this
    const client = await this.client()
    const crictl = isCrictl()
    // --all takes only containers podctl made; crictl's rm -a removes every one.
    const selection = {refs: this.positional, namespace: flags.namespace, all: flags.all, onlyPodctl: !crictl}
    const {containers, failures, leftAlone} = await resolveContainers(client, selection)
    if (leftAlone) this.stderrLine(containersLeftAloneNote(leftAlone, 'remove'))
    if (flags.all && containers.length === 0) {
      if (crictl) info(NOTHING_TO_REMOVE.containers)
      else this.stderrLine('no containers; nothing to remove')
    }

    const events = this.printEvents({kind: 'warnings'})
    // crictl names each container as it was typed, and prints it once more when rm -f stopped it first.
    const shown = (id: string) => (crictl ? givenRef(id, this.positional) : id)
    const outcome = await forEachContainer(containers, flags.parallel, async (container) => {
      if (crictl && !flags.force && container.state === 'CONTAINER_RUNNING') throw new RuntimeError(runningContainer(shown(container.id)))
      const removed = await removeOneContainer(client, container, {force: flags.force, keepLogs: flags['keep-logs'], events})
      const ref = shown(removed.containerId)
      if (!this.machineOutput()) this.log(crictl && removed.stopped ? `${ref}\n${ref}` : ref)
      return removed
    })
    const all = [...failures, ...outcome.failures]
    const result: RmResult = {items: outcome.items, failures: all.map(({ref, error}) => ({container: ref, ...error.toJSON()}))}
    if (this.machineOutput()) await this.emit(result)
    if (crictl) {
      // As crictl: a container it cannot find is the runtime's error alone; a failed removal says so.
      const removal = ({ref, error}: {ref: string; error: PodctlError}) =>
        error.message === runningContainer(shown(ref)) ? error.message : `${DOING.removal(shown(ref))}: ${crictlCause(error)}`
      const lines = [
        ...failures.map(({error}) => ({error, line: crictlCause(error)})),
        ...outcome.failures.map((failure) => ({error: failure.error, line: removal(failure)})),
      ]
      const failure = crictlItemFailures(lines, UNABLE_TO_REMOVE_CONTAINERS)
      if (failure) throw failure
    } else this.reportFailures(all.map(({error}) => error))
    return result
  }
}
