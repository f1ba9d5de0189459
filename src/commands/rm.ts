/**
 * `podctl rm`: containers removed (kubelet/container-ops.ts), with their log files unless
 * --keep-logs; --force stops a running one first. One ID per line as crictl prints them.
 */
import {Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {outputFlag} from '../lib/flags.js'
import {forEachContainer, type RemovedResult, removeOneContainer} from '../lib/kubelet/kuberuntime/container-ops.js'
import {containersLeftAloneNote, resolveContainers} from '../lib/node/resolve-containers.js'

export interface RmResult {
  items: RemovedResult[]
  failures: Array<{container: string; code: string; exitCode: number; message: string}>
}

export default class Rm extends BaseCommand<typeof Rm> {
  static override summary = 'Remove containers (and their log files); --force stops running ones first.'

  static override description = `RemoveContainer for each container. A running container is refused (exit 9) unless \
--force, which kills it at once first (StopContainer with timeout 0, as crictl rm -f; use podctl stop first for its preStop \
hook and grace period). \
The container's log file and its rotations are deleted unless --keep-logs; its /var/log/containers link always goes \
with it, as the kubelet removes it. --all removes every container podctl made (of --namespace when given): crictl's, a \
kubelet's and other tools' containers are left alone (counted on stderr; name one to remove it). The sandbox stays: \
remove a whole pod with podctl rmp or podctl kill. Each ID is printed once removed; every failure is reported, the \
exit code is the first's.`

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
    const selection = {refs: this.positional, namespace: flags.namespace, all: flags.all, onlyPodctl: true}
    const {containers, failures, leftAlone} = await resolveContainers(client, selection)
    if (leftAlone) this.stderrLine(containersLeftAloneNote(leftAlone, 'remove'))
    if (flags.all && containers.length === 0) this.stderrLine('no containers; nothing to remove')
    const events = this.printEvents({kind: 'warnings'})
    const outcome = await forEachContainer(containers, flags.parallel, async (container) => {
      const removed = await removeOneContainer(client, container, {force: flags.force, keepLogs: flags['keep-logs'], events})
      if (!this.machineOutput()) this.log(removed.containerId)
      return removed
    })
    const all = [...failures, ...outcome.failures]
    const result: RmResult = {items: outcome.items, failures: all.map(({ref, error}) => ({container: ref, ...error.toJSON()}))}
    if (this.machineOutput()) await this.emit(result)
    this.reportFailures(all.map(({error}) => error))
    return result
  }
}
