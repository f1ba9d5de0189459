import {Flags} from '@oclif/core'

import {BaseCommand, example, toPodctlError} from '../lib/base-command.js'
import {outputFlag} from '../lib/flags.js'
import {renderFields} from '../lib/output/table.js'
import {runtimeVersion, type VersionReport} from '../lib/node/runtime-info.js'

export default class Version extends BaseCommand<typeof Version> {
  static override summary = "Show podctl's version and the runtime's (CRI Version call)."

  static override description = `Prints podctl's own version, then the runtime's answer to Version: its name, its \
version, the CRI API version (v1) and the kubelet runtime API version the runtime reports (the first line of \
\`crictl version\`, "Version:  0.1.0": not podctl's version). When the runtime cannot be reached podctl's version is \
still printed and the exit code says why (3 unreachable, 4 deadline). JSON: {"client": {"version"}, "runtime": \
{"version", "runtimeName", "runtimeVersion", "runtimeApiVersion"}}.`

  static override examples = [
    example('Client and runtime versions'),
    example('For a script', '-o json'),
    example('Just the runtime version', `-o jsonpath='{.runtime.runtimeVersion}'`),
  ]

  static override flags = {
    output: outputFlag(['table', 'json', 'yaml'], {templates: true}),
    template: Flags.string({summary: 'Go-template field paths to print, e.g. {{.runtime.runtimeVersion}}.'}),
  }

  public async run(): Promise<VersionReport> {
    const report: VersionReport = {client: {version: this.config.version}}
    let failure: Error | undefined
    try {
      report.runtime = await runtimeVersion(await this.client())
    } catch (error) {
      failure = error as Error
    }

    // A field picked out for a script has no value without the runtime's answer: fail instead.
    if (failure && (this.output.kind === 'jsonpath' || this.output.kind === 'template')) throw failure
    await this.emit(report, () => this.render(report))

    if (failure) this.reportFailure(toPodctlError(failure))
    return report
  }

  private render(report: VersionReport): string {
    // Each line says whose version it is: the runtime's VersionResponse.version (0.1.0 on containerd) is the kubelet
    // runtime API version, which a bare "Version" or "CRI Version" beside podctl's own 0.1.0 read as podctl's.
    const fields: Array<[string, string]> = [['podctl Version', report.client.version]]
    if (report.runtime) {
      fields.push(
        ['Runtime Name', report.runtime.runtimeName],
        ['Runtime Version', report.runtime.runtimeVersion],
        ['Runtime API Version', report.runtime.runtimeApiVersion],
        ['Kubelet API Version', report.runtime.version],
      )
    }

    return renderFields(fields)
  }
}
