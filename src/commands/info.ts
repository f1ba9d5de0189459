import {Flags} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'
import {parseOutputSpec, renderEach} from '../lib/output/spec.js'
import {runtimeInfo} from '../lib/node/runtime-info.js'

export default class Info extends BaseCommand<typeof Info> {
  static override summary = "Show the runtime's verbose status and configuration as JSON."

  static override description = `Calls Status with verbose=true and prints one JSON document (default; -o yaml for \
YAML): "status" with the runtime conditions, each key of the runtime's verbose info parsed as JSON (containerd: \
config, cniconfig, golang, lastCNILoadStatus, ...), and "runtimeHandlers" and "features" when the runtime reports \
them (camelCase keys). There is no table: the document is deep and runtime-specific; pick fields with -o jsonpath= or \
--template. For a health check with an exit code use podctl status.`

  static override examples = [
    {description: 'Everything the runtime reports', command: '<%= config.bin %> <%= command.id %>'},
    {description: "containerd's sandbox (pause) image", command: `<%= config.bin %> <%= command.id %> -o jsonpath='{.config.sandboxImage}'`},
    {description: 'The CNI configuration it loaded', command: `<%= config.bin %> <%= command.id %> --template '{{.cniconfig | json}}'`},
    {description: 'As YAML', command: '<%= config.bin %> <%= command.id %> -o yaml'},
  ]

  static override flags = {
    output: Flags.string({
      char: 'o',
      summary: 'Output format: json (default), yaml, jsonpath=EXPR, go-template=TPL.',
      helpValue: 'json|yaml|jsonpath=EXPR|go-template=TPL',
    }),
    template: Flags.string({summary: 'Go-template field paths to print, e.g. {{.config.sandboxImage}}.'}),
  }

  public async run(): Promise<Record<string, unknown>> {
    const spec = parseOutputSpec(this.flags.output, this.flags.template, ['json', 'yaml'], 'json')
    const document = await runtimeInfo(await this.client())
    if (spec.kind === 'jsonpath' || spec.kind === 'template') {
      if (!this.jsonEnabled()) this.log(renderEach(spec.render, [document]))
    } else {
      await this.emit(spec.kind, document, () => '')
    }

    return document
  }
}
