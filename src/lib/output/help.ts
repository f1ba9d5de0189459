/**
 * podctl's help class (package.json oclif.helpClass; the bundle serves it from inside itself, see
 * scripts/bundle/oclif-patches.mjs): oclif's help with the global flags listed under the root help,
 * and the flag lists of a command aligned when a flag without a short form comes first.
 */
import {stripVTControlCharacters} from 'node:util'

import {type Command, CommandHelp, Help} from '@oclif/core'

type Row = [string, string | undefined]

/** How a flag's name column reads in help: `-r, --runtime-endpoint=<value>`, `    --[no-]color`. */
function flagLabel(flag: Command.Flag.Cached): string {
  const short = flag.char ? `-${flag.char}, ` : '    '
  if (flag.type === 'boolean') return `${short}--${flag.allowNo ? '[no-]' : ''}${flag.name}`
  return `${short}--${flag.name}=${flag.helpValue ?? '<value>'}`
}

/**
 * The rows of the global flags, from a command's manifest entry (every command has them, in
 * helpGroup GLOBAL); --json is left out as not every command takes it.
 */
export function globalFlagRows(commands: readonly Command.Loadable[]): Row[] {
  // version keeps the global flags as BaseCommand has them (exec and attach give -i to --interactive).
  const hasGlobals = (command: Command.Loadable) => Object.values(command.flags).some((flag) => flag.helpGroup === 'GLOBAL')
  const withGlobals = commands.find((command) => command.id === 'version' && hasGlobals(command)) ?? commands.find(hasGlobals)
  if (!withGlobals) return []
  return Object.values(withGlobals.flags)
    .filter((flag) => flag.helpGroup === 'GLOBAL' && flag.name !== 'json')
    .map((flag) => [flagLabel(flag), flag.summary ?? flag.description])
}

/**
 * Puts back the indentation oclif's list renderer trims from the first row (it trims the whole
 * list): a first flag without a short form (`    --id`) stood left of the `-n, --namespace` under
 * it. A list oclif renders one block per row (label, then the text below it) has every label flush
 * left, and is left so.
 */
export function keepFirstLabelIndent(input: ReadonlyArray<ReadonlyArray<string | undefined>>, output: string): string {
  const first = stripVTControlCharacters(input[0]?.[0] ?? '')
  const indent = /^\s+/.exec(first)?.[0]
  if (!indent || output.includes('\n\n') || !stripVTControlCharacters(output).startsWith(first.trim())) return output
  return `${indent}${output}`
}

class PodctlCommandHelp extends CommandHelp {
  override renderList(input: Array<Array<string | undefined>>, opts: Parameters<CommandHelp['renderList']>[1]): string {
    return keepFirstLabelIndent(input, super.renderList(input, opts))
  }
}

export default class PodctlHelp extends Help {
  protected override CommandHelpClass = PodctlCommandHelp

  override async showRootHelp(): Promise<void> {
    await super.showRootHelp()
    const rows = globalFlagRows(this.config.commands)
    if (rows.length === 0) return
    const note = 'Every command takes these, before or after its name (before it, -t is also --timeout).'
    this.log(
      this.section('GLOBAL FLAGS', `${this.wrap(note, 2)}\n\n${this.renderList(rows, {indentation: 2, stripAnsi: this.opts.stripAnsi})}`),
    )
    this.log('')
  }

  override renderList(input: Array<Array<string | undefined>>, opts: Parameters<Help['renderList']>[1]): string {
    return keepFirstLabelIndent(input, super.renderList(input, opts))
  }
}
