import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {outputFlag} from '../lib/flags.js'
import {parseLabelSelector} from '../lib/util/filters.js'
import {humanSize, truncateId} from '../lib/output/format.js'
import {refreshPrefix} from '../lib/output/refresh.js'
import {renderTable} from '../lib/output/table.js'
import {type PodStatsSummary, startPodStatsSampler} from '../lib/node/pod-stats.js'
import type {PodSandboxStats} from '../generated/runtime/v1/api.js'

export interface StatspResult {
  items: PodStatsSummary[]
  /** crictl's `statsp -o json` layout: the CRI PodSandboxStats (empty when summed from containers). */
  stats: PodSandboxStats[]
}

export default class Statsp extends BaseCommand<typeof Statsp> {
  static override timeoutBoundsCommand = false
  static override summary = 'Show CPU and memory use of pods (CRI ListPodSandboxStats).'

  static override description = `Samples twice, --seconds apart, and shows each ready pod's CPU as the percentage of \
one core used in between and its memory working set. The figures come from ListPodSandboxStats; where the runtime \
does not implement it, or fails it as a whole (containerd 1.6 does when any sandbox on the node has no cgroup, e.g. \
one made by crictl runp without cgroup_parent), or answers a pod without CPU or memory (CRI-O with the cgroupfs \
driver), they are the sum of the pod's containers from ListContainerStats, which leaves out the pause container; each \
row's "source" says which.

JSON and YAML carry podctl's summary per pod in "items" (cpuPercent, cpuUsageCoreNanoSeconds, \
memoryWorkingSetBytes, timestamp, source) and, in "stats", crictl's layout: the CRI PodSandboxStats, when the \
runtime gave them.`

  static override examples = [
    example('Every ready pod'),
    example('One pod, refreshed every 2 seconds until Ctrl-C', 'web -n shop -w -s 2'),
    example('Pods labelled app=web, for a script', '-l app=web -o json'),
  ]

  static override args = {
    pod: Args.string({description: 'Pod name (in --namespace), name_namespace or sandbox ID prefix.'}),
  }

  static override flags = {
    id: Flags.string({summary: 'Only pods whose sandbox ID starts with this.'}),
    namespace: Flags.string({char: 'n', summary: 'Only pods in this namespace, exact or with * globs.'}),
    label: Flags.string({char: 'l', summary: 'Pod label selector KEY=VALUE (repeatable; all must match).', multiple: true}),
    seconds: Flags.integer({
      char: 's',
      summary: 'Seconds between the two samples (and between refreshes with --watch).',
      default: 1,
      min: 1,
    }),
    watch: Flags.boolean({char: 'w', summary: 'Refresh every --seconds until Ctrl-C.'}),
    'no-trunc': Flags.boolean({summary: 'Show full sandbox IDs.'}),
    output: outputFlag(['table', 'json', 'yaml']),
  }

  public async run(): Promise<StatspResult> {
    const {flags} = this
    const filters = {pod: this.args.pod, namespace: flags.namespace, id: flags.id, labels: parseLabelSelector(flags.label)}
    const sampler = await startPodStatsSampler(await this.client(), filters)
    const interruption = flags.watch ? this.interruptSignal() : undefined
    let refreshed = false
    for (;;) {
      const items = await sampler.next(flags.seconds * 1000, interruption?.signal)
      if (interruption?.signal.aborted) return {items: [], stats: []}
      const result: StatspResult = {items, stats: sampler.criStats()}
      if (!flags.watch) {
        await this.emit(result, () => this.table(items))
        return result
      }

      process.stdout.write(refreshPrefix(this.output.kind, {tty: Boolean(process.stdout.isTTY), first: !refreshed}))
      refreshed = true
      await this.emit(result, () => this.table(items))
    }
  }

  private table(items: PodStatsSummary[]): string {
    const rows = items.map((item) => [
      item.podName,
      item.namespace,
      truncateId(item.podSandboxId, this.flags['no-trunc']),
      item.cpuPercent === null ? '-' : item.cpuPercent.toFixed(2),
      item.memoryWorkingSetBytes === null ? '-' : humanSize(item.memoryWorkingSetBytes),
    ])
    return renderTable(['POD', 'NAMESPACE', 'POD ID', 'CPU %', 'MEM'], rows)
  }
}
