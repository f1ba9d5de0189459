/**
 * `completion fish`: `complete` lines for fish from the same command model as bash and zsh
 * (scripts.ts): commands with their summaries, each command's flags, fixed flag values and arguments.
 */
import type {CompletionCommand} from './scripts.js'

/** A fish single-quoted string. */
const quote = (text: string) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", String.raw`\'`)}'`

export function fishScript(bin: string, commands: readonly CompletionCommand[]): string {
  const ids = commands.map((command) => command.id).join(' ')
  const lines = [
    `# fish completion for ${bin}; install: ${bin} completion fish > ~/.config/fish/completions/${bin}.fish`,
    `complete -c ${bin} -f`,
  ]
  for (const command of commands) {
    lines.push(`complete -c ${bin} -n ${quote(`not __fish_seen_subcommand_from ${ids}`)} -a ${command.id} -d ${quote(command.summary)}`)
  }

  for (const command of commands) {
    const when = `-n ${quote(`__fish_seen_subcommand_from ${command.id}`)}`
    for (const flag of command.flags) {
      const parts = [`complete -c ${bin}`, when, `-l ${flag.name}`]
      if (flag.char) parts.push(`-s ${flag.char}`)
      if (flag.takesValue) parts.push(flag.options ? `-x -a ${quote(flag.options.join(' '))}` : '-r')
      parts.push(`-d ${quote(flag.summary)}`)
      lines.push(parts.join(' '))
      if (flag.allowNo) lines.push(`complete -c ${bin} ${when} -l no-${flag.name} -d ${quote(flag.summary)}`)
    }

    for (const arg of command.args) if (arg.options) lines.push(`complete -c ${bin} ${when} -a ${quote(arg.options.join(' '))}`)
  }

  return `${lines.join('\n')}\n`
}
