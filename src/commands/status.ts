import {BaseCommand, outputFlag} from '../lib/base-command.js'
import {RuntimeNotReadyError} from '../lib/errors.js'
import {renderFields, renderTable} from '../lib/output/table.js'
import {runtimeStatus, type RuntimeStatusReport} from '../lib/runtime/runtime-status.js'

export default class Status extends BaseCommand<typeof Status> {
  static override summary = 'Show whether the runtime is healthy: version, conditions and what it runs.'

  static override description = `Calls Version, Status, RuntimeConfig, ListPodSandbox, ListContainers and ListImages concurrently \
(RuntimeConfig is optional: older runtimes answer UNIMPLEMENTED and the cgroup driver shows as not reported). \
Exits 7 (RuntimeNotReady) when a runtime condition such as RuntimeReady or NetworkReady is false, \
so CI and node checks can use it as a health probe.`

  static override examples = [
    {description: 'Runtime health at a glance', command: '<%= config.bin %> <%= command.id %>'},
    {description: 'Health check in a script', command: '<%= config.bin %> <%= command.id %> -o json >/dev/null || echo "runtime not ready"'},
    {description: 'A runtime on a non-default socket', command: '<%= config.bin %> <%= command.id %> -r unix:///run/crio/crio.sock'},
  ]

  static override flags = {
    output: outputFlag(['table', 'json', 'yaml'] as const),
  }

  public async run(): Promise<RuntimeStatusReport> {
    const report = await runtimeStatus(await this.client())
    await this.emit(this.flags.output, report, () => this.render(report))
    if (!report.ready) {
      const failing = report.conditions.filter((condition) => !condition.status)
      const why = failing.length
        ? failing.map((c) => `${c.type}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message}` : ''})` : ''}`).join(', ')
        : 'the runtime reported no conditions'
      this.reportFailure(new RuntimeNotReadyError(`runtime at ${report.endpoint} is not ready: ${why}`))
    }

    return report
  }

  private render(report: RuntimeStatusReport): string {
    const {chalk} = this
    const {runtime} = report
    const header = renderFields([
      ['Endpoint', report.endpoint + (this.runtimeSource ? chalk.dim(` (from ${this.runtimeSource})`) : '')],
      ...(report.imageEndpoint === report.endpoint ? [] : [['Image endpoint', report.imageEndpoint] as const]),
      ['Runtime', `${runtime.name} ${runtime.version} (CRI ${runtime.apiVersion})`],
      ['Pods', `${report.pods.ready} ready / ${report.pods.total} total`],
      ['Containers', `${report.containers.running} running / ${report.containers.total} total`],
      ['Images', String(report.images)],
      ['Cgroup driver', report.cgroupDriver ?? chalk.dim('(not reported: runtime has no RuntimeConfig)')],
    ])
    const conditions = renderTable(
      ['CONDITION', 'STATUS', 'REASON', 'MESSAGE'],
      report.conditions.map((c) => [c.type, c.status ? chalk.green('true') : chalk.red('false'), c.reason, c.message]),
    )
    return `${header}\n\n${conditions}`
  }
}
