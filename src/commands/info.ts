import {Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {outputFlag} from '../lib/flags.js'
import {runtimeInfo} from '../lib/node/runtime-info.js'

export default class Info extends BaseCommand<typeof Info> {
  static override summary = "Show the runtime's verbose status and configuration as JSON."

  static override description = `Calls Status with verbose=true and prints one JSON document (default; -o yaml for \
YAML): "status" with the runtime conditions, each key of the runtime's verbose info parsed as JSON (containerd: \
config, cniconfig, golang, lastCNILoadStatus, ...), and "runtimeHandlers" and "features" when the runtime reports \
them (camelCase keys). There is no table: the document is deep and runtime-specific; pick fields with -o jsonpath= or \
--template. -q asks without verbose: only "status" (and runtimeHandlers/features), as crictl info -q. For a health \
check with an exit code use podctl status.`

  static override examples = [
    example('Everything the runtime reports'),
    example(
      'The sandbox (pause) image: containerd 1.x, CRI-O 1.27+ (containerd 2.x pins it: podctl images --pinned)',
      `-o jsonpath='{.config.sandboxImage}'`,
    ),
    example('The CNI configuration it loaded', `--template '{{.cniconfig | json}}'`),
    example('As YAML', '-o yaml'),
    example('The conditions only', '-q'),
  ]

  static override flags = {
    output: outputFlag(['json', 'yaml'], {templates: true}),
    template: Flags.string({summary: 'Go-template field paths to print, e.g. {{.config.sandboxImage}}.'}),
    quiet: Flags.boolean({char: 'q', summary: "The runtime conditions only, without the runtime's verbose info."}),
  }

  public async run(): Promise<Record<string, unknown>> {
    const document = await runtimeInfo(await this.client(), !this.flags.quiet)
    await this.emit(document)
    return document
  }
}
