import {Flags} from '@oclif/core'

import {BaseCommand, toPodctlError} from '../lib/base-command.js'
import {renderFields} from '../lib/output/table.js'
import {parseOutputSpec, renderEach} from '../lib/output/spec.js'
import {runtimeVersion, type VersionReport} from '../lib/node/runtime-info.js'

export default class Version extends BaseCommand<typeof Version> {
  static override summary = "Show podctl's version and the runtime's (CRI Version call)."

  static override description = `Prints the client version, then the runtime's answer to Version: the CRI version, \
runtime name, runtime version and CRI API version. When the runtime cannot be reached the client version is still \
printed and the exit code says why (3 unreachable, 4 deadline). JSON: {"client": {"version"}, "runtime": \
{"version", "runtimeName", "runtimeVersion", "runtimeApiVersion"}}.`

  static override examples = [
    {description: 'Client and runtime versions', command: '<%= config.bin %> <%= command.id %>'},
    {description: 'For a script', command: '<%= config.bin %> <%= command.id %> -o json'},
    {description: 'Just the runtime version', command: `<%= config.bin %> <%= command.id %> -o jsonpath='{.runtime.runtimeVersion}'`},
  ]

  static override flags = {
    output: Flags.string({
      char: 'o',
      summary: 'Output format: table (default), json, yaml, jsonpath=EXPR, go-template=TPL.',
      helpValue: 'table|json|yaml|jsonpath=EXPR|go-template=TPL',
    }),
    template: Flags.string({summary: 'Go-template field paths to print, e.g. {{.runtime.runtimeVersion}}.'}),
  }

  public async run(): Promise<VersionReport> {
    const spec = parseOutputSpec(this.flags.output, this.flags.template, ['table', 'json', 'yaml'], 'table')
    const report: VersionReport = {client: {version: this.config.version}}
    let failure: Error | undefined
    try {
      report.runtime = await runtimeVersion(await this.client())
    } catch (error) {
      failure = error as Error
    }

    if (spec.kind === 'jsonpath' || spec.kind === 'template') {
      if (failure) throw failure
      if (!this.jsonEnabled()) this.log(renderEach(spec.render, [report]))
    } else {
      await this.emit(spec.kind === 'table' ? undefined : spec.kind, report, () => this.render(report))
    }

    if (failure) this.reportFailure(toPodctlError(failure))
    return report
  }

  private render(report: VersionReport): string {
    const fields: Array<[string, string]> = [['Client Version', report.client.version]]
    if (report.runtime) {
      fields.push(
        ['Runtime Name', report.runtime.runtimeName],
        ['Runtime Version', report.runtime.runtimeVersion],
        ['Runtime API Version', report.runtime.runtimeApiVersion],
        ['CRI Version', report.runtime.version],
      )
    }

    return renderFields(fields)
  }
}
