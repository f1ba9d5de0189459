import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {outputFlag} from '../lib/flags.js'
import {parseLabelSelector} from '../lib/util/filters.js'
import {humanSize, truncateId} from '../lib/output/format.js'
import {refreshPrefix} from '../lib/output/refresh.js'
import {renderTable} from '../lib/output/table.js'
import {type ContainerStatsSummary, startStatsSampler} from '../lib/node/stats.js'
import type {ContainerStats} from '../generated/runtime/v1/api.js'

export interface StatsResult {
  items: ContainerStatsSummary[]
  /** crictl's `stats -o json` layout: the CRI ContainerStats of the same containers. */
  stats: ContainerStats[]
}

export default class Stats extends BaseCommand<typeof Stats> {
  // --timeout here is each call; --watch samples until Ctrl-C, not a bound on the whole command.
  static override timeoutBoundsCommand = false
  static override summary = 'Show CPU, memory and disk use of containers.'

  static override description = `Samples ListContainerStats twice, --seconds apart, and shows CPU as the percentage \
of one core used in between (so the command takes --seconds). MEM is the memory working set, DISK and INODES the \
container's writable layer. Names come from one ListContainers and one ListPodSandbox call, never a call per \
container. Only running containers unless -a or a CONTAINER is given.

JSON and YAML carry podctl's summary per container: cpuPercent (number, null without two samples), \
memoryWorkingSetBytes, writableLayerUsedBytes, writableLayerInodesUsed and cpuUsageCoreNanoSeconds as int64 \
strings, and timestamp in RFC 3339. Beside "items", "stats" holds the same containers' CRI ContainerStats in \
crictl's layout ({"stats": [{"attributes", "cpu", "memory", "writableLayer", ...}]}), so scripts written for \
crictl stats -o json run unchanged.`

  static override examples = [
    example('Running containers on the node'),
    example('One pod, refreshed every 2 seconds until Ctrl-C', '--pod web -n shop -w -s 2'),
    example('Containers labelled app=web, for a script', '-l app=web -o json'),
    example("Working-set bytes in crictl's layout", `-o json | jq -r '.stats[].memory.workingSetBytes.value'`),
    example('One container by ID prefix', '4f2a9c'),
    example('One container by pod and name', 'web/server -n shop'),
  ]

  static override args = {
    container: Args.string({description: 'Container ID prefix or POD/CONTAINER, as logs and exec take (an ambiguous prefix is an error).'}),
  }

  static override flags = {
    id: Flags.string({summary: 'Only containers whose ID starts with this.'}),
    pod: Flags.string({char: 'p', summary: 'Only containers of this pod: name (in --namespace), name_namespace or sandbox ID prefix.'}),
    namespace: Flags.string({char: 'n', summary: 'Only containers of pods in this namespace, exact or with * globs.'}),
    label: Flags.string({char: 'l', summary: 'Container label selector KEY=VALUE (repeatable; all must match).', multiple: true}),
    all: Flags.boolean({char: 'a', summary: 'Include containers that are not running.'}),
    seconds: Flags.integer({
      char: 's',
      summary: 'Seconds between the two samples (and between refreshes with --watch).',
      default: 1,
      min: 1,
    }),
    watch: Flags.boolean({char: 'w', summary: 'Refresh every --seconds until Ctrl-C.'}),
    'no-trunc': Flags.boolean({summary: 'Show full container IDs.'}),
    output: outputFlag(['table', 'json', 'yaml']),
  }

  /** Whether --watch has printed a refresh yet (pipes get a separator between refreshes). */
  private refreshed = false

  public async run(): Promise<StatsResult> {
    const {flags} = this
    const labels = parseLabelSelector(flags.label)
    const client = await this.client()
    const sampler = await startStatsSampler(client, {
      container: this.args.container,
      id: flags.id,
      pod: flags.pod,
      namespace: flags.namespace,
      labels,
      all: flags.all,
    })
    const intervalMs = flags.seconds * 1000
    for (;;) {
      const items = await sampler.next(intervalMs)
      const result: StatsResult = {items, stats: sampler.criStats()}
      if (!flags.watch) {
        await this.emit(result, () => this.table(result.items))
        return result
      }

      await this.show(result)
    }
  }

  /** One --watch refresh: the terminal is redrawn in place; a pipe gets one table (or document) after another. */
  private async show(result: StatsResult): Promise<void> {
    if (this.jsonEnabled()) {
      this.logJson(result)
      return
    }

    process.stdout.write(refreshPrefix(this.output.kind, {tty: Boolean(process.stdout.isTTY), first: !this.refreshed}))
    this.refreshed = true
    await this.emit(result, () => this.table(result.items))
  }

  private table(items: ContainerStatsSummary[]): string {
    const noTrunc = this.flags['no-trunc']
    const dash = (value: string | null, format: (v: string) => string) => (value === null ? '-' : format(value))
    const rows = items.map((item) => [
      truncateId(item.containerId, noTrunc),
      item.name,
      item.podName,
      item.namespace,
      item.cpuPercent === null ? '-' : item.cpuPercent.toFixed(2),
      dash(item.memoryWorkingSetBytes, humanSize),
      dash(item.writableLayerUsedBytes, humanSize),
      dash(item.writableLayerInodesUsed, String),
    ])
    return renderTable(['CONTAINER', 'NAME', 'POD', 'NAMESPACE', 'CPU %', 'MEM', 'DISK', 'INODES'], rows)
  }
}
