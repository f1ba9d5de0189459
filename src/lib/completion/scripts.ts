/**
 * Shell completion scripts generated from the command metadata oclif already has (the manifest),
 * so they complete every command, flag and fixed flag value without running podctl on each <Tab>.
 * Pure string builders, unit tested.
 */

export interface CompletionFlag {
  name: string
  char?: string
  summary: string
  /** Takes a value (`--output json`), as opposed to a boolean switch. */
  takesValue: boolean
  /** Fixed choices of the value, if any. */
  options?: readonly string[]
  /** Also accepts `--no-<name>`. */
  allowNo?: boolean
  multiple?: boolean
}

export interface CompletionArg {
  name: string
  options?: readonly string[]
}

export interface CompletionCommand {
  id: string
  summary: string
  flags: CompletionFlag[]
  args: CompletionArg[]
  /** Takes a free list of words after the arguments (exec's command). */
  variadic?: boolean
}

export type Shell = 'bash' | 'fish' | 'zsh'

/** Minimal shape of oclif's cached flag that the scripts need. */
export interface OclifFlagLike {
  name?: string
  char?: string
  summary?: string
  description?: string
  type: string
  options?: readonly string[]
  helpValue?: string
  allowNo?: boolean
  hidden?: boolean
  multiple?: boolean
}

/** Minimal shape of oclif's cached command (Command.Loadable) that the scripts need. */
export interface OclifCommandLike {
  id: string
  hidden?: boolean
  summary?: string
  description?: string
  strict?: boolean
  aliases?: string[]
  flags: Record<string, OclifFlagLike>
  args: Record<string, {name?: string; options?: readonly string[]; hidden?: boolean}>
}

/** oclif's command list → what completion needs (hidden commands and flags left out, sorted). */
export function completionModel(commands: readonly OclifCommandLike[]): CompletionCommand[] {
  const model: CompletionCommand[] = []
  for (const command of commands) {
    if (command.hidden) continue
    const flags = Object.entries(command.flags)
      .filter(([, flag]) => !flag.hidden)
      .map(([name, flag]): CompletionFlag => ({
        name,
        char: flag.char,
        summary: firstLine(flag.summary ?? flag.description ?? ''),
        takesValue: flag.type === 'option',
        options: flag.options ?? choicesInHelpValue(flag.helpValue),
        allowNo: flag.allowNo,
        multiple: flag.multiple,
      }))
    const args = Object.entries(command.args)
      .filter(([, arg]) => !arg.hidden)
      .map(([name, arg]) => ({name, options: arg.options}))
    flags.push({name: 'help', summary: 'Show help for the command.', takesValue: false})
    const summary = firstLine(command.summary ?? command.description ?? '')
    for (const id of [command.id, ...(command.aliases ?? [])]) {
      model.push({id, summary, flags, args, variadic: command.strict === false})
    }
  }

  return model.sort((a, b) => a.id.localeCompare(b.id))
}

/**
 * The fixed words of a help value such as `table|wide|json|yaml|jsonpath=EXPR|go-template=TPL`: the
 * `-o` flag lists its formats there, as it cannot use oclif `options` (they would refuse
 * `jsonpath=…`). Only lower-case words count; placeholders (FILE|-, DURATION|TIME) give none.
 */
export function choicesInHelpValue(helpValue: string | undefined): string[] | undefined {
  const words = helpValue?.split('|').filter((word) => !word.includes('=')) ?? []
  if (words.length < 2 || !words.every((word) => /^[a-z][a-z-]*$/.test(word))) return undefined
  return words
}

function firstLine(text: string): string {
  return text.split('\n')[0].trim()
}

/** A word safe inside a single-quoted shell string. */
function singleQuoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`
}

function flagWords(flag: CompletionFlag): string[] {
  const words = [`--${flag.name}`]
  if (flag.allowNo) words.push(`--no-${flag.name}`)
  if (flag.char) words.push(`-${flag.char}`)
  return words
}

export function bashScript(bin: string, commands: readonly CompletionCommand[]): string {
  const fn = `_${bin.replaceAll(/[^A-Za-z0-9_]/g, '_')}_complete`
  // Flags every command has (the global ones) get one `*:` pattern instead of one per command.
  const global = new Set(
    commands[0]?.flags.map((f) => f.name).filter((name) => commands.every((c) => c.flags.some((f) => f.name === name))),
  )
  const patterns = (command: CompletionCommand, flag: CompletionFlag) => {
    const scope = global.has(flag.name) ? '*' : command.id
    return [`${scope}:--${flag.name}`, ...(flag.char ? [`${scope}:-${flag.char}`] : [])]
  }

  const choiceCases = new Map<string, string>()
  const fileValues = new Set<string>()
  const freeValues = new Set<string>()
  for (const command of commands) {
    for (const flag of command.flags.filter((f) => f.takesValue)) {
      const keys = patterns(command, flag)
      const choices = flag.options?.join(' ')
      if (choices) choiceCases.set(keys.join('|'), `COMPREPLY=($(compgen -W ${singleQuoted(choices)} -- "$cur"))`)
      else for (const key of keys) (flag.name === 'config' ? fileValues : freeValues).add(key)
    }
  }

  const valueCases = [...choiceCases].map(([keys, reply]) => `    ${keys}) ${reply}; return 0 ;;`)
  if (fileValues.size > 0) valueCases.push(`    ${[...fileValues].join('|')}) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;`)
  // A value podctl cannot guess (a name, a duration): offer nothing rather than flags.
  if (freeValues.size > 0) valueCases.push(`    ${[...freeValues].join('|')}) COMPREPLY=(); return 0 ;;`)
  const flagCases = commands.map(
    (command) => `    ${command.id}) flags=${singleQuoted(command.flags.flatMap(flagWords).sort().join(' '))} ;;`,
  )
  const argCases = commands
    .filter((command) => command.args[0]?.options?.length)
    .map((command) => {
      const choices = singleQuoted(command.args[0].options!.join(' '))
      return `    ${command.id}) COMPREPLY=($(compgen -W ${choices} -- "$cur")); return 0 ;;`
    })

  return `# ${bin} completion for bash.
# Load it now:            source <(${bin} completion bash)
# Load it in every shell: ${bin} completion bash > ~/.local/share/bash-completion/completions/${bin}
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" flags="" i
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W ${singleQuoted(commands.map((c) => c.id).join(' '))} -- "$cur"))
    return 0
  fi
  local cmd="\${COMP_WORDS[1]}"
  # After "--" (exec's command) bash's own file name completion applies.
  for ((i = 2; i < COMP_CWORD; i++)); do
    [[ \${COMP_WORDS[i]} == -- ]] && { compopt -o default; COMPREPLY=(); return 0; }
  done
  case "$cmd:$prev" in
${valueCases.join('\n')}
  esac
  case "$cmd" in
${flagCases.join('\n')}
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    return 0
  fi
  case "$cmd" in
${argCases.join('\n')}
  esac
  COMPREPLY=()
}
complete -F ${fn} ${bin}
`
}

/** Escapes text for a zsh _arguments description in [...] (inside single quotes). */
function zshDescription(text: string): string {
  return text
    .replaceAll('\\', '\\\\')
    .replaceAll('[', String.raw`\[`)
    .replaceAll(']', String.raw`\]`)
    .replaceAll("'", `'\\''`)
}

function zshFlagSpecs(flag: CompletionFlag): string[] {
  const description = zshDescription(flag.summary)
  const value = flag.takesValue
    ? `:${flag.name}:${flag.options?.length ? `(${flag.options.join(' ')})` : flag.name === 'config' ? '_files' : ' '}`
    : ''
  const repeat = flag.multiple ? '*' : ''
  const specs: string[] = []
  if (flag.char) {
    const exclusive = `(-${flag.char} --${flag.name})`
    const short = `-${flag.char}${flag.takesValue ? '+' : ''}`
    const long = `--${flag.name}${flag.takesValue ? '=' : ''}`
    specs.push(`'${repeat || exclusive}${short}[${description}]${value}'`, `'${repeat || exclusive}${long}[${description}]${value}'`)
  } else {
    specs.push(`'${repeat}--${flag.name}${flag.takesValue ? '=' : ''}[${description}]${value}'`)
  }

  if (flag.allowNo) specs.push(`'--no-${flag.name}[${zshDescription(`Negate --${flag.name}.`)}]'`)
  return specs
}

export function zshScript(bin: string, commands: readonly CompletionCommand[]): string {
  const fn = `_${bin.replaceAll(/[^A-Za-z0-9_]/g, '_')}`
  const global = new Set(
    commands[0]?.flags.map((f) => f.name).filter((name) => commands.every((c) => c.flags.some((f) => f.name === name))),
  )
  const globalSpecs = (commands[0]?.flags ?? []).filter((f) => global.has(f.name)).flatMap(zshFlagSpecs)
  const describe = commands.map((c) => `    ${singleQuoted(`${c.id.replaceAll(':', String.raw`\:`)}:${c.summary}`)}`)
  const cases = commands.map((command) => {
    const specs = ['$global_flags', ...command.flags.filter((f) => !global.has(f.name)).flatMap(zshFlagSpecs)]
    for (const [index, arg] of command.args.entries()) {
      const action = arg.options?.length ? `(${arg.options.join(' ')})` : ' '
      specs.push(`'${index + 1}:${arg.name}:${action}'`)
    }

    if (command.variadic) specs.push(`'*::command:_normal'`)
    return `    ${command.id})\n      _arguments -s -S \\\n        ${specs.join(' \\\n        ')}\n      ;;`
  })
  return `#compdef ${bin}
# ${bin} completion for zsh.
# Load it now:            source <(${bin} completion zsh)
# Load it in every shell: ${bin} completion zsh > "\${fpath[1]}/_${bin}"   (then start a new shell)
${fn}() {
  local -a commands global_flags
  commands=(
${describe.join('\n')}
  )
  global_flags=(
${globalSpecs.map((spec) => `    ${spec}`).join('\n')}
  )
  if (( CURRENT == 2 )); then
    _describe -t commands '${bin} command' commands
    return
  fi
  local cmd=$words[2]
  shift words
  (( CURRENT-- ))
  case $cmd in
${cases.join('\n')}
  esac
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  ${fn} "$@"
else
  compdef ${fn} ${bin}
fi
`
}
