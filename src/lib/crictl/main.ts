/**
 * The crictl personality's start: decides the command line as crictl does (front.ts), prints what
 * urfave would print and sets the exit code when that is all, else returns the podctl command line
 * to run (translate.ts) with crictl's message prefix set for its failures. Loaded only when podctl
 * runs as crictl: the entries import it lazily, after the program's name says so.
 */
import {decide} from './front.js'
import {fatalPrefix} from './fatal-prefixes.js'
import {fatal, setFatalPrefix} from './log.js'
import {toPodctlArgv, UnsupportedFlagError} from './translate.js'

/** The podctl argv for a crictl command line, or undefined when crictl's answer has been printed (exit code set). */
export function crictlArgv(argv: readonly string[], podctlVersion: string): string[] | undefined {
  const outcome = decide(argv, podctlVersion)
  if (outcome.stdout) process.stdout.write(outcome.stdout)
  if (outcome.kind === 'exit') {
    if (outcome.stderr) process.stderr.write(outcome.stderr)
    if (outcome.fatal !== undefined) fatal(outcome.fatal)
    process.exitCode = outcome.exit
    return undefined
  }

  const {invocation} = outcome
  try {
    const podctlArgv = toPodctlArgv(invocation)
    const streaming = ['interactive', 'tty'].some((flag) => invocation.flags.byFlag.get(flag)?.at(-1) === 'true')
    setFatalPrefix(fatalPrefix(invocation.command.name, invocation.args, streaming))
    return podctlArgv
  } catch (error) {
    if (!(error instanceof UnsupportedFlagError)) throw error
    fatal(error.message)
    process.exitCode = 1
    return undefined
  }
}
