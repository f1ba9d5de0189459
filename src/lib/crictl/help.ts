/**
 * crictl's help texts as urfave/cli v2.27 renders them (template.go, help.go, flag.go stringifyFlag),
 * byte for byte: the app help (`crictl`, `crictl help`, `-h`), a command's help (`crictl help rm`,
 * `crictl rm -h`) and the "subcommand" help urfave shows on a usage error or when an Action asks for
 * it (`crictl rm` without IDs), which lists urfave's `help` subcommand and says "command" in USAGE.
 */
import {
  APP,
  commandNames,
  type CrictlCommand,
  type CrictlFlag,
  GLOBAL_FLAGS,
  HELP_COMMAND,
  HELP_FLAG,
  VERSION_FLAG,
} from './command-spec.js'
import {CRICTL_COMMANDS} from './command-table.js'
import {tabwriteText, URFAVE_HELP} from './tabwriter.js'

/** urfave's wrap() with its 10000-column limit: only continuation lines of a multi-line text are indented. */
function wrap(text: string, offset: number): string {
  const padding = ' '.repeat(offset)
  return text
    .split('\n')
    .map((line, index) => (line === '' || index === 0 ? line : padding + line))
    .join('\n')
}

/** urfave's unquoteUsage: the first `word` in backquotes is the placeholder, and loses its quotes. */
function unquoteUsage(usage: string): {placeholder: string; usage: string} {
  const match = /`([^`]*)`/.exec(usage)
  if (!match) return {placeholder: '', usage}
  return {placeholder: match[1], usage: usage.slice(0, match.index) + match[1] + usage.slice(match.index + match[0].length)}
}

function defaultText(flag: CrictlFlag): string {
  if (flag === HELP_FLAG || flag === VERSION_FLAG) return ''
  switch (flag.kind) {
    case 'bool':
      return 'false'
    case 'int':
      return String(flag.value ?? 0)
    case 'duration':
      return String(flag.value ?? '0s')
    case 'string':
      return flag.value === undefined || flag.value === '' ? '' : JSON.stringify(flag.value)
    case 'string-slice':
      return ''
  }
}

/** One flag's help line before tab alignment: names (with the placeholder), a tab, usage, default, env hint. */
export function flagLine(flag: CrictlFlag): string {
  const {placeholder: quoted, usage} = unquoteUsage(flag.usage)
  const placeholder = flag.kind === 'bool' ? quoted : quoted || 'value'
  const names = [flag.name, ...(flag.aliases ?? [])]
    .map((name) => `${name.length === 1 ? '-' : '--'}${name}${placeholder ? ` ${placeholder}` : ''}`)
    .join(', ')
  const shown = flag.kind === 'string-slice' ? `${names} [ ${names} ]` : names
  const fallback = defaultText(flag)
  const text = `${usage}${fallback ? ` (default: ${fallback})` : ''}`.trim()
  const env = flag.env?.length ? ` [$${flag.env.join(', $')}]` : ''
  return `${shown}\t${text}${env}`
}

function optionsSection(title: string, flags: readonly CrictlFlag[]): string {
  return `\n\n${title}:${flags.map((flag) => `\n   ${wrap(flagLine(flag), 6)}`).join('')}`
}

function commandsSection(commands: readonly CrictlCommand[]): string {
  if (commands.length === 0) return ''
  const width = Math.max(...commands.map((command) => commandNames(command).join(', ').length)) + 5
  const rows = commands.map((command) => {
    const names = commandNames(command).join(', ')
    return `\n   ${names}${' '.repeat(width - names.length - 3)}${wrap(command.usage, width)}`
  })
  return `\n\nCOMMANDS:${rows.join('')}`
}

function nameSection(helpName: string, usage: string): string {
  return `NAME:\n   ${helpName}${usage ? ` - ${wrap(usage, helpName.length + 6)}` : ''}\n\n`
}

function descriptionSection(command: CrictlCommand): string {
  return command.description ? `\n\nDESCRIPTION:\n   ${wrap(command.description, 3)}` : ''
}

/** The flags urfave shows for a command: its own, then --help. */
export function visibleFlags(command: CrictlCommand): readonly CrictlFlag[] {
  return [...command.flags, HELP_FLAG]
}

/** usageTemplate: UsageText, else the name, `[command options]` when there are flags, and ArgsUsage. */
function usageLine(command: CrictlCommand, helpName: string): string {
  if (command.usageText) return wrap(command.usageText, 3)
  return `${helpName}${visibleFlags(command).length > 0 ? ' [command options]' : ''}${command.argsUsage ? ` ${command.argsUsage}` : ''}`
}

/** `crictl`, `crictl help`, `crictl -h`. */
export function appHelp(): string {
  const text =
    nameSection(APP.name, APP.usage) +
    `USAGE:\n   ${APP.name} [global options] command [command options]` +
    `\n\nVERSION:\n   ${APP.version}` +
    commandsSection(CRICTL_COMMANDS) +
    optionsSection('GLOBAL OPTIONS', [...GLOBAL_FLAGS, HELP_FLAG, VERSION_FLAG]) +
    '\n'
  return tabwriteText(text, URFAVE_HELP)
}

/**
 * CommandHelpTemplate: `crictl help rm`, `crictl rm -h`, `crictl rm help`. helpName is what urfave set
 * as the command's HelpName ("crictl rm"; urfave's own help command has " help" at the top level and
 * "crictl rm help" below a command). A command with subcommands shows them (SubcommandHelpTemplate).
 */
export function commandHelp(command: CrictlCommand, helpName = `${APP.name} ${command.name}`): string {
  if (command.subcommands?.length) return subcommandHelp(command, helpName)
  const text =
    nameSection(helpName, command.usage) +
    `USAGE:\n   ${usageLine(command, helpName)}` +
    descriptionSection(command) +
    optionsSection('OPTIONS', visibleFlags(command)) +
    '\n'
  return tabwriteText(text, URFAVE_HELP)
}

/** SubcommandHelpTemplate: a command's help after a usage error, or when its Action shows usage (`crictl rm`). */
export function subcommandHelp(command: CrictlCommand, helpName = `${APP.name} ${command.name}`): string {
  const text =
    nameSection(helpName, command.usage) +
    `USAGE:\n   ${usageLine(command, helpName)}` +
    descriptionSection(command) +
    commandsSection([...(command.subcommands ?? []), HELP_COMMAND]) +
    optionsSection('OPTIONS', visibleFlags(command)) +
    '\n'
  return tabwriteText(text, URFAVE_HELP)
}

/** urfave's VersionPrinter, with the podctl release behind crictl's so `awk '{print $3}'` still reads v1.37.0. */
export function versionLine(podctlVersion: string): string {
  return `${APP.name} version ${APP.version} (podctl ${podctlVersion})\n`
}
