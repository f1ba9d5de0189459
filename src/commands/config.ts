import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {configFilePath, getConfig, listConfig, parseSets, readConfigText, setConfig, writeConfigText} from '../lib/node/config-file.js'
import {UsageError} from '../lib/errors.js'
import {renderTable} from '../lib/output/table.js'

export interface ConfigResult {
  path: string
  values: Record<string, string>
}

export default class Config extends BaseCommand<typeof Config> {
  static override summary = "Get, set or list the keys of crictl's config file (/etc/crictl.yaml)."

  static override description = `Reads and edits the same file and keys crictl does: runtime-endpoint, image-endpoint, \
timeout (whole seconds; 0 means the default), debug, pull-image-on-create and disable-pull-on-run. The file is \
--config (or -c before the command), else CRI_CONFIG_FILE, else /etc/crictl.yaml. --set creates the file if it is \
missing (mode 0600) and keeps every other key and comment as it was; only the keys given are written. An unknown \
key or a value of the wrong kind is refused before anything is written. Without --get, --set or --list, \
"config KEY VALUE" sets KEY as in crictl's legacy form, and "config KEY" prints it. Nothing is sent to the runtime.`

  static override examples = [
    example('Point podctl and crictl at containerd', '--set runtime-endpoint=unix:///run/containerd/containerd.sock'),
    example('Two keys at once', '--set timeout=10,debug=true'),
    example('One value, for a script', '--get runtime-endpoint'),
    example('Every key and its value', '--list'),
    {description: 'Another file', command: '<%= config.bin %> -c ./crictl.yaml <%= command.id %> --list'},
  ]

  static override strict = false

  static override args = {
    key: Args.string({description: 'Legacy form: the key to print, or to set to VALUE.'}),
    value: Args.string({description: 'Legacy form: the value to set KEY to.'}),
  }

  static override flags = {
    get: Flags.string({summary: 'Print the value of this key.', helpValue: 'KEY', exclusive: ['set', 'list']}),
    set: Flags.string({summary: 'Set KEY=VALUE (repeatable, or comma-separated).', helpValue: 'KEY=VALUE', multiple: true}),
    list: Flags.boolean({summary: 'List every key and its value.', exclusive: ['set']}),
  }

  public async run(): Promise<ConfigResult> {
    const {flags, positional} = this
    if (positional.length > 2) throw new UsageError('config takes at most KEY VALUE; use --set KEY=VALUE for several keys')
    const path = configFilePath(flags.config)
    const [key, value] = positional
    const sets = flags.set ? parseSets(flags.set) : value === undefined ? [] : [[key, value] as [string, string]]
    let text = await readConfigText(path)
    if (sets.length > 0) {
      text = await setConfig(text, path, sets)
      await writeConfigText(path, text)
    }

    const values = Object.fromEntries(await listConfig(text, path))
    const get = flags.get ?? (value === undefined && !flags.list && sets.length === 0 ? key : undefined)
    if (get !== undefined) {
      const one = await getConfig(text, path, get)
      if (!this.jsonEnabled()) this.log(one)
      return {path, values: {[get]: one}}
    }

    if (flags.list) {
      if (!this.jsonEnabled()) this.log(renderTable(['KEY', 'VALUE'], Object.entries(values)))
    } else if (sets.length === 0) {
      throw new UsageError('config needs --get KEY, --set KEY=VALUE or --list')
    }

    return {path, values}
  }
}
