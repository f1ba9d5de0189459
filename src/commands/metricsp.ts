import {Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {outputFlag} from '../lib/flags.js'
import {listPodMetrics, metricDescriptors, metricRows} from '../lib/node/pod-metrics.js'
import {truncateId} from '../lib/output/format.js'
import {refreshPrefix} from '../lib/output/refresh.js'
import {renderTable} from '../lib/output/table.js'
import type {ListPodSandboxMetricsResponse, MetricDescriptor} from '../generated/runtime/v1/api.js'

/** crictl metricsp -w asks again every 500 ms; so does podctl. */
const WATCH_INTERVAL_MS = 500

export default class Metricsp extends BaseCommand<typeof Metricsp> {
  static override timeoutBoundsCommand = false
  static override summary = "List the runtime's pod and container metrics (CRI ListPodSandboxMetrics), cAdvisor's successor."

  static override description = `One ListPodSandboxMetrics call: unstructured samples (name, labels, value) that the \
runtime gathers for each pod and its containers, meant to replace the kubelet's /metrics/cadvisor. The table has one \
row per sample, with the label names from ListMetricDescriptors (key=value); a container's column is empty for the \
pod's own samples. JSON and YAML are crictl's document, {"podMetrics": [...]}, as the runtime sent it. -w asks again \
every 500 ms until Ctrl-C. containerd 1.x does not implement the pod metrics API: podctl says so in one line and \
exits 6 (Unimplemented); statsp shows the pods' CPU and memory instead.

As crictl, JSON is the default (and YAML has sorted keys) when podctl runs as crictl.`

  static override examples = [example('Every sample'), example("crictl's document", '-o json'), example('Watch them change', '-w')]

  static override flags = {
    output: outputFlag(['table', 'json', 'yaml']),
    watch: Flags.boolean({char: 'w', summary: 'Ask again every 500 ms until Ctrl-C.'}),
    'no-trunc': Flags.boolean({summary: 'Show full pod and container IDs.'}),
  }

  public async run(): Promise<ListPodSandboxMetricsResponse> {
    const client = await this.client()
    const interruption = this.flags.watch ? this.interruptSignal() : undefined
    const {setTimeout: sleep} = await import('node:timers/promises')
    let descriptors: ReadonlyMap<string, MetricDescriptor> | undefined
    for (let first = true; ; first = false) {
      const response = await listPodMetrics(client)
      if (interruption?.signal.aborted) return response
      // Only the table shows label names, and only a runtime that has metrics has descriptors: asked once, after.
      descriptors ??= this.output.kind === 'table' ? await metricDescriptors(client) : new Map()
      if (this.flags.watch) process.stdout.write(refreshPrefix(this.output.kind, {tty: Boolean(process.stdout.isTTY), first}))
      await this.print(response, descriptors)
      if (!interruption) return response
      await sleep(WATCH_INTERVAL_MS, undefined, {signal: interruption.signal}).catch(() => {})
      if (interruption.signal.aborted) return response
    }
  }

  private async print(response: ListPodSandboxMetricsResponse, descriptors: ReadonlyMap<string, MetricDescriptor>): Promise<void> {
    if (this.jsonEnabled()) return
    await this.emit(response, () => this.table(response, descriptors))
  }

  private table(response: ListPodSandboxMetricsResponse, descriptors: ReadonlyMap<string, MetricDescriptor>): string {
    const noTrunc = this.flags['no-trunc']
    const rows = metricRows(response, descriptors).map((row) => [
      truncateId(row.podSandboxId, noTrunc),
      row.containerId ? truncateId(row.containerId, noTrunc) : '',
      row.name,
      row.type,
      row.labels,
      row.value,
    ])
    return renderTable(['POD ID', 'CONTAINER', 'METRIC', 'TYPE', 'LABELS', 'VALUE'], rows)
  }
}
