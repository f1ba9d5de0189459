import {Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {outputFlag, podDirRootFlag, stateFlag} from '../lib/flags.js'
import {parseLabelSelector} from '../lib/util/filters.js'
import {humanAge, truncateId} from '../lib/output/format.js'
import {renderTableBytes} from '../lib/output/table.js'
import {podFullName} from '../lib/kube/helpers.js'
import {listPods, type PodListEntry, type PodListFilters, podsNameHint, sandboxIps} from '../lib/node/pods.js'
import {runtimeHandlerLabel} from '../lib/node/runtime-handler.js'
import type {PodSandbox} from '../generated/runtime/v1/api.js'
import {podBlock} from '../lib/output/verbose-blocks.js'
import {readTermination} from '../lib/kubelet/config/termination-record.js'

export interface PodsResult {
  items: PodSandbox[]
}

export default class Pods extends BaseCommand<typeof Pods> {
  static override summary = 'List pod sandboxes, newest first.'

  static override description = `One ListPodSandbox call (and one ListContainers for the table's CONTAINERS column), \
whatever the number of pods. \
Name and namespace filters are exact unless they contain "*"; labels are matched by the runtime. \
CONTAINERS counts a pod's current containers as kubectl's READY does (running/total): the newest attempt of each, \
sidecars (restartable init containers) included, init containers and earlier attempts left out; \
running stands for ready, as no readiness probe runs in a listing (status POD --wait-for ready runs them). \
A pod still in its init containers counts only the containers made so far. \
The table's STATE is Terminating for a ready pod whose kill podctl recorded and is under way (its grace period), \
as kubectl shows it. \
JSON and YAML carry the CRI PodSandbox objects (camelCase keys, int64 as strings).`

  static override examples = [
    example('Every pod on the node'),
    example('Ready pods of one namespace, with IPs', '-n kube-system --state ready -o wide'),
    example('IDs of pods labelled app=web, for a script', '-l app=web -q'),
    example('Pods whose name starts with "web-"', `--name 'web-*' -o json`),
    example("crictl's verbose blocks, one per pod", '-n kube-system -v'),
  ]

  static override flags = {
    name: Flags.string({summary: 'Pod name, exact or with * globs.'}),
    namespace: Flags.string({char: 'n', summary: 'Pod namespace, exact or with * globs.'}),
    label: Flags.string({char: 'l', summary: 'Label selector KEY=VALUE (repeatable; all must match).', multiple: true}),
    state: stateFlag(['ready', 'notready'] as const, 'Only pods in this state, in any case.'),
    id: Flags.string({summary: 'Pod sandbox ID prefix.'}),
    latest: Flags.boolean({summary: 'Only the most recently created pod.', exclusive: ['last']}),
    last: Flags.integer({summary: 'Only the N most recently created pods.', min: 1}),
    quiet: Flags.boolean({char: 'q', summary: 'Print full pod IDs only, one per line.'}),
    verbose: Flags.boolean({
      char: 'v',
      summary: 'One block per pod (ID, names, state, created, labels, annotations, runtime), as crictl pods -v.',
    }),
    'no-trunc': Flags.boolean({summary: 'Show full IDs.'}),
    'pod-dir-root': podDirRootFlag,
    output: outputFlag(['table', 'wide', 'json', 'yaml', 'name'], {templates: true}),
  }

  public async run(): Promise<PodsResult> {
    const {flags} = this
    const client = await this.client()
    const wide = this.output.kind === 'wide' && !flags.quiet
    const entries = await listPods(client, this.listFilters(), {
      withStatus: wide,
      summaries: this.printsRows(),
      countContainers: this.drawsTable(),
      // A kill under way is recorded in the pod's directory (one small read per pod): the table shows it Terminating.
      killRecorded: this.drawsTable() ? (uid) => readTermination(flags['pod-dir-root'], uid) !== undefined : undefined,
    })
    const result: PodsResult = {items: entries.map((entry) => entry.sandbox)}

    if (flags.quiet) {
      if (!this.jsonEnabled()) for (const entry of entries) this.log(entry.sandbox.id)
      return result
    }

    await this.emit(result, () =>
      flags.verbose
        ? entries
            .map((entry) => podBlock(entry.sandbox))
            .join('')
            .trimEnd()
        : this.output.kind === 'name'
          ? entries.map((entry) => podFullName(entry.sandbox.metadata?.name ?? '', entry.sandbox.metadata?.namespace ?? '')).join('\n')
          : this.table(entries, wide, flags['no-trunc']),
    )
    if (entries.length === 0) await this.hintExactNames()
    return result
  }

  private listFilters(): PodListFilters {
    const {flags} = this
    return {
      name: flags.name,
      namespace: flags.namespace,
      labels: parseLabelSelector(flags.label),
      state: flags.state as 'notready' | 'ready' | undefined,
      id: flags.id,
      latest: flags.latest,
      last: flags.last,
    }
  }

  /** A table, names or IDs: what the sandboxes' labels and annotations never show (not JSON, YAML, templates or -v). */
  private printsRows(): boolean {
    const {kind} = this.output
    return !this.jsonEnabled() && !this.flags.verbose && (this.flags.quiet || kind === 'table' || kind === 'wide' || kind === 'name')
  }

  /** The table (plain or wide) is the only output with the CONTAINERS column, the only one that needs ListContainers. */
  private drawsTable(): boolean {
    const {kind} = this.output
    return !this.jsonEnabled() && !this.flags.verbose && !this.flags.quiet && (kind === 'table' || kind === 'wide')
  }

  /** An empty table after an exact --name that globs would fill: say how (on stderr; scripts asking for JSON get none). */
  private async hintExactNames(): Promise<void> {
    const forPeople = !this.jsonEnabled() && (this.output.kind === 'table' || this.output.kind === 'wide')
    const hint = forPeople ? await podsNameHint(await this.client(), this.listFilters()) : undefined
    if (hint) this.stderrLine(hint)
  }

  private table(entries: PodListEntry[], wide: boolean, noTrunc: boolean): Buffer {
    const {chalk} = this
    const now = Date.now()
    const headers = ['POD ID', 'NAME', 'NAMESPACE', 'STATE', 'CONTAINERS', 'ATTEMPT', 'CREATED']
    if (wide) headers.push('UID', 'IP', 'RUNTIME')
    const [readyCell, notReadyCell, terminatingCell] = [chalk.green('Ready'), chalk.yellow('NotReady'), chalk.yellow('Terminating')]
    const rows = entries.map(({sandbox, containers, status, runtimeHandler, terminating}) => {
      const ready = sandbox.state === 'SANDBOX_READY'
      const row = [
        truncateId(sandbox.id, noTrunc),
        sandbox.metadata?.name ?? '',
        sandbox.metadata?.namespace ?? '',
        terminating ? terminatingCell : ready ? readyCell : notReadyCell,
        `${containers.running}/${containers.total}`,
        String(sandbox.metadata?.attempt ?? 0),
        humanAge(sandbox.createdAt, now),
      ]
      if (wide) {
        row.push(sandbox.metadata?.uid ?? '', sandboxIps(status).join(',') || '-', runtimeHandlerLabel(runtimeHandler))
      }

      return row
    })
    return renderTableBytes(headers, rows)
  }
}
