/**
 * The crictl personality's front end: crictl's command line decided as urfave decides it (front.ts),
 * app.Before (the config file and settings, server-config.ts), then the command's Action
 * (commands/, loaded for that command only), and main.go's ending: an Action's error logged at
 * error level and exit 1, its usage shown (exit 0), or cli.Exit's message and code. podctl's own
 * commands and oclif are never loaded on this path.
 */
import {decide} from './front.js'
import {subcommandHelp} from './help.js'
import {error as logError, setLogDebug} from './log.js'
import {ConfigError, programDirectory, resolveSettings} from './server-config.js'
import {CrictlExit, CrictlSession, describe, ShowUsage} from './session.js'
import {loadAction} from './actions.js'

/** Runs one crictl command line; the process's exit code is set, never thrown. */
export async function runCrictl(argv: readonly string[], program: string | undefined, podctlVersion: string): Promise<void> {
  const outcome = decide(argv, podctlVersion)
  // Loaded before anything is read or printed: in podctl's quick bundle an action it left out
  // throws here, and the full bundle then runs the same command line from the start (src/launch.ts).
  const action = outcome.kind === 'run' ? await loadAction(outcome.invocation) : undefined
  let settings
  if (outcome.before) {
    try {
      settings = await resolveSettings({
        globals: globalsOf(outcome),
        env: process.env,
        programDir: programDirectory(program),
        command: commandOf(outcome),
      })
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      logError(error.message)
      process.exitCode = 1
      return
    }

    setLogDebug(settings.debug)
  }

  if (outcome.stdout) process.stdout.write(outcome.stdout)
  if (outcome.kind === 'exit') {
    if (outcome.stderr) process.stderr.write(outcome.stderr)
    if (outcome.error !== undefined) logError(outcome.error)
    process.exitCode = outcome.exit
    return
  }

  const session = new CrictlSession(outcome.invocation, settings!)
  try {
    await action!(session)
  } catch (error) {
    endWith(session, error)
  } finally {
    await session.close()
  }
}

function endWith(session: CrictlSession, error: unknown): void {
  if (error instanceof ShowUsage) {
    const {command, parent} = session.invocation
    process.stdout.write(subcommandHelp(command, parent ? `crictl ${parent.name} ${command.name}` : undefined))
    return
  }

  if (error instanceof CrictlExit) {
    process.stderr.write(`${error.message}\n`)
    process.exitCode = error.code
    return
  }

  logError(describe(error))
  process.exitCode = 1
}

function globalsOf(outcome: ReturnType<typeof decide>) {
  return outcome.kind === 'run' ? outcome.invocation.globals : (outcome.globals ?? {byFlag: new Map(), typed: new Set()})
}

function commandOf(outcome: ReturnType<typeof decide>): string {
  return outcome.kind === 'run' ? outcome.invocation.command.name : ''
}
