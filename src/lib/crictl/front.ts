/**
 * crictl's command line, decided as urfave/cli v2.27 decides it for crictl v1.37 (app.go, command.go,
 * help.go): the app's flags up to the command's name, `help` and -h/--help in their places, -v, an
 * unknown command ("No help topic for 'x'", exit 3), the command's own flags up to its first
 * positional argument (usage error: "Incorrect Usage: …" and the command's help on stdout, the
 * logrus error line on stderr, exit 1), a command's subcommands (`run jsonschema`) and urfave's
 * `help` under each command, then the Action's own check of its arguments. What is left to do is a
 * parsed invocation that the command's Action (commands/) runs.
 */
import {commandNames, type CrictlCommand, GLOBAL_FLAGS, HELP_COMMAND, HELP_FLAG, VERSION_FLAG} from './command-spec.js'
import {findCommand} from './command-table.js'
import {checkArguments} from './argument-rules.js'
import {FlagParseError, type FlagValues, parseCommandFlags, parseGoBool} from './flag-set.js'
import {appHelp, commandHelp, subcommandHelp, versionLine} from './help.js'

/** A parsed crictl command for translate.ts: the command, its flags and arguments, and the app's flags. */
export interface CrictlInvocation {
  command: CrictlCommand
  flags: FlagValues
  args: string[]
  globals: FlagValues
  /** The command a subcommand (jsonschema) belongs to. */
  parent?: CrictlCommand
}

/**
 * What the front decided: print and exit, or run a command (after printing `stdout`, as `version ARG`
 * does). `before` says whether crictl's app.Before ran (it reads the config file) before this outcome:
 * not for the app's own -h, -v or a flag error of the app's.
 */
export type FrontOutcome =
  | {kind: 'exit'; stdout: string; stderr: string; exit: number; error?: string; before: boolean; globals?: FlagValues}
  | {kind: 'run'; invocation: CrictlInvocation; stdout: string; before: true}

const exit = (stdout: string, code = 0, stderr = '', before = true): FrontOutcome => ({kind: 'exit', stdout, stderr, exit: code, before})
/**
 * urfave's cli.Exit("No help topic for 'x'", 3): printed and exit 3 where a help command's Action runs,
 * but a logrus fatal line (exit 1) where -h/--help ran it (Command.Run returns that error unhandled).
 */
const noHelpTopic = (name: string, viaFlag = false): FrontOutcome =>
  viaFlag ? fatal(`No help topic for '${name}'`) : exit('', 3, `No help topic for '${name}'\n`)
/** urfave names its own help command " help" at the top level: the app's HelpName was still empty when it was set. */
const TOP_HELP_NAME = ' help'
/** A failure crictl's main reports with logrus.Error: the caller writes the line (log.ts) and exits 1. */
const fatal = (message: string, stdout = '', before = true): FrontOutcome => ({
  kind: 'exit',
  stdout,
  stderr: '',
  exit: 1,
  error: message,
  before,
})

function isTrue(values: FlagValues, name: string): boolean {
  const last = values.byFlag.get(name)?.at(-1)
  return last !== undefined && parseGoBool(last) === true
}

/** ShowCommandHelp from the app: a command's help (CommandHelpTemplate), or urfave's own help command's. */
function topLevelCommandHelp(name: string, viaFlag = false): FrontOutcome {
  const command = findCommand(name)
  if (!command) return noHelpTopic(name, viaFlag)
  if (command === HELP_COMMAND) return exit(commandHelp(HELP_COMMAND, TOP_HELP_NAME))
  // urfave v2.27 shows a command with subcommands (run, create, runp, pull) this way: NAME and USAGE only.
  if (command.subcommands?.length) return exit(commandHelp(command).replace(/\n\nCOMMANDS:[\s\S]*$/, '\n\n'))
  return exit(commandHelp(command))
}

/** ShowCommandHelp below a command: only urfave's help subcommand is there. */
function subcommandTopic(command: CrictlCommand, name: string, viaFlag = false): FrontOutcome {
  return name === 'help' || name === 'h' ? exit(commandHelp(HELP_COMMAND, `crictl ${command.name} help`)) : noHelpTopic(name, viaFlag)
}

/** `crictl help [COMMAND]` (and `crictl h`). */
function runHelpCommand(args: readonly string[]): FrontOutcome {
  let rest: string[]
  try {
    rest = parseCommandFlags([HELP_FLAG], args, false).rest
  } catch (error) {
    if (!(error instanceof FlagParseError)) throw error
    return fatal(error.message, `Incorrect Usage: ${error.message}\n\n${subcommandHelp(HELP_COMMAND, TOP_HELP_NAME)}`)
  }

  if (rest.length === 0) return exit(appHelp())
  return topLevelCommandHelp(rest[0])
}

/** `crictl CMD help [X]`: urfave's help subcommand of a command. */
function runCommandHelp(command: CrictlCommand, args: readonly string[]): FrontOutcome {
  let rest: string[]
  try {
    rest = parseCommandFlags([HELP_FLAG], args, false).rest
  } catch (error) {
    if (!(error instanceof FlagParseError)) throw error
    return fatal(error.message, `Incorrect Usage: ${error.message}\n\n${subcommandHelp(HELP_COMMAND, `crictl ${command.name} help`)}`)
  }

  return rest.length === 0 ? exit(commandHelp(command)) : subcommandTopic(command, rest[0])
}

/** Decides one crictl command line (argv without the program's name). */
export function decide(argv: readonly string[], podctlVersion: string): FrontOutcome {
  let globals: FlagValues
  let rest: string[]
  try {
    ;({
      set: {values: globals},
      rest,
    } = parseCommandFlags([...GLOBAL_FLAGS, HELP_FLAG, VERSION_FLAG], argv, false))
  } catch (error) {
    if (!(error instanceof FlagParseError)) throw error
    return fatal(error.message, `Incorrect Usage: ${error.message}\n\n${appHelp()}`, false)
  }

  const outcome = decideAfterGlobals(globals, rest, podctlVersion)
  return outcome.kind === 'exit' ? {...outcome, globals} : outcome
}

function decideAfterGlobals(globals: FlagValues, rest: string[], podctlVersion: string): FrontOutcome {
  if (isTrue(globals, 'help')) return withoutBefore(rest.length === 0 ? exit(appHelp()) : topLevelCommandHelp(rest[0], true))
  if (isTrue(globals, 'version')) return exit(versionLine(podctlVersion), 0, '', false)
  if (rest.length === 0) return exit(appHelp())
  const command = findCommand(rest[0])
  if (!command) return noHelpTopic(rest[0])
  if (command === HELP_COMMAND) return runHelpCommand(rest.slice(1))
  return decideCommand(command, rest.slice(1), globals)
}

/** The app's -h answers before app.Before runs. */
function withoutBefore(outcome: FrontOutcome): FrontOutcome {
  return outcome.kind === 'exit' ? {...outcome, before: false} : outcome
}

/** A command's part of the line: a subcommand, its flags, urfave's help in its places, then its Action's check of the arguments. */
function decideCommand(command: CrictlCommand, words: readonly string[], globals: FlagValues, parent?: CrictlCommand): FrontOutcome {
  const subcommand = command.subcommands?.find((candidate) => commandNames(candidate).includes(words[0] ?? ''))
  if (subcommand) return decideCommand(subcommand, words.slice(1), globals, command)
  let flags: FlagValues
  let args: string[]
  try {
    const parsed = parseCommandFlags([...command.flags, HELP_FLAG], words, Boolean(command.shortOptionHandling))
    flags = parsed.set.values
    args = parsed.rest
  } catch (error) {
    if (!(error instanceof FlagParseError)) throw error
    return fatal(error.message, `Incorrect Usage: ${error.message}\n\n${subcommandHelp(command, helpNameOf(command, parent))}`)
  }

  const helpName = helpNameOf(command, parent)
  if (isTrue(flags, 'help')) return args.length === 0 ? exit(commandHelp(command, helpName)) : subcommandTopic(command, args[0], true)
  if (args[0] === 'help' || args[0] === 'h') return runCommandHelp(command, args.slice(1))

  const verdict = parent ? undefined : checkArguments(command.name, args, flags)
  if (verdict && 'error' in verdict) return fatal(verdict.error)
  const usage = verdict ? subcommandHelp(command) : ''
  if (verdict && !verdict.andRun) return exit(usage)
  return {kind: 'run', invocation: {command, flags, args, globals, parent}, stdout: usage, before: true}
}

function helpNameOf(command: CrictlCommand, parent: CrictlCommand | undefined): string {
  return parent ? `crictl ${parent.name} ${command.name}` : `crictl ${command.name}`
}
