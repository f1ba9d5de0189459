/**
 * crictl's and kubectl's command-line habits, applied to the raw argv once, before oclif looks for
 * the command: both entries (the bundle's scripts/bundle/entry.js and bin/dev.js) call normalizeArgv.
 *
 * - Global flags before the command (`podctl -r unix:///… ps`, `podctl -D version`, `podctl -t 5s
 *   pods`) move behind it, spelled long (`--runtime-endpoint=…`), so a command's own short flag
 *   with the same letter (`ps -r` is --resolve-image-path, `exec -t` is --tty, as in crictl) never
 *   takes them, and a flag's value is never read as the command.
 * - `help [COMMAND…]` is `COMMAND… --help`; `-h` before the command is `--help` after it.
 * - A command's own flags before it (`podctl -r EP --pod-dir-root DIR pods`) move behind it as
 *   typed, when the entry says which words are commands: a word after such a flag is its value
 *   unless it is a command, so `--all ps` stays a flag and a command.
 * - crictl's command names that podctl spells otherwise (`inspectp`, `event`, …) are renamed.
 *
 * Anything not recognised is left exactly where it stands, for oclif to report.
 */

/** A global flag as it may stand before the command: long name, one-letter alias, whether it takes a value. */
export interface GlobalFlag {
  name: string
  char?: string
  value: boolean
}

/** The flags every command has (BaseCommand.baseFlags; test/unit/util/argv.test.ts keeps the two in step). */
export const GLOBAL_FLAGS: readonly GlobalFlag[] = [
  {name: 'runtime-endpoint', char: 'r', value: true},
  {name: 'image-endpoint', char: 'i', value: true},
  {name: 'config', char: 'c', value: true},
  {name: 'timeout', char: 't', value: true},
  {name: 'connect-timeout', value: true},
  {name: 'debug', char: 'D', value: false},
  {name: 'color', value: false},
  {name: 'no-color', value: false},
  {name: 'json', value: false},
]

/**
 * crictl command names → podctl argv. Only names podctl has no file for; plain aliases of one
 * command (img, image, event) are oclif aliases on that command.
 */
export const COMMAND_RENAMES: Readonly<Record<string, readonly string[]>> = {
  inspectp: ['inspect', 'pod'],
  inspecti: ['inspect', 'image'],
  h: ['help'],
}

const HELP = new Set(['-h', '--help'])
const VERSION = new Set(['-v', '--version'])

/** What an entry knows of oclif's manifest: each command's id and aliases. */
export interface ManifestCommands {
  commands: Readonly<Record<string, {aliases?: readonly string[]; hiddenAliases?: readonly string[]}>>
}

/** Every word that names a command: ids, aliases, crictl's renamed names and `help`. */
export function commandWords(manifest: ManifestCommands): Set<string> {
  const words = new Set(['help', ...Object.keys(COMMAND_RENAMES)])
  for (const [id, command] of Object.entries(manifest.commands)) {
    for (const word of [id, ...(command.aliases ?? []), ...(command.hiddenAliases ?? [])]) words.add(word)
  }

  return words
}

interface Taken {
  /** The flag in the form it is moved to. */
  tokens: string[]
  /** How many argv tokens it used. */
  used: number
}

/** The global flag at argv[index] as long-form tokens, or undefined if argv[index] is not one. */
function takeGlobal(argv: readonly string[], index: number): Taken | undefined {
  const token = argv[index]
  let flag: GlobalFlag | undefined
  let inline: string | undefined
  if (token.startsWith('--')) {
    const eq = token.indexOf('=')
    const name = token.slice(2, eq === -1 ? undefined : eq)
    flag = GLOBAL_FLAGS.find((candidate) => candidate.name === name)
    if (eq !== -1) inline = token.slice(eq + 1)
  } else if (/^-[A-Za-z]/.test(token)) {
    flag = GLOBAL_FLAGS.find((candidate) => candidate.char === token[1])
    const rest = token.slice(2)
    if (rest !== '') inline = rest.startsWith('=') ? rest.slice(1) : rest
  }

  if (!flag) return undefined
  if (!flag.value) return inline === undefined ? {tokens: [`--${flag.name}`], used: 1} : undefined
  if (inline !== undefined) return {tokens: [`--${flag.name}=${inline}`], used: 1}
  const next = argv[index + 1]
  // A missing value is left for oclif to report against the flag's name.
  if (next === undefined) return {tokens: [`--${flag.name}`], used: 1}
  return {tokens: [`--${flag.name}=${next}`], used: 2}
}

/**
 * A flag that is not global, at argv[index], as typed: with the next word as its value unless that
 * word is a command, or the last word and shaped like a command name (then it is the command,
 * perhaps mistyped, for oclif to name; `--pod-dir-root /tmp` alone has no command).
 */
function takeCommandFlag(argv: readonly string[], index: number, commands: ReadonlySet<string>): Taken {
  const next = argv[index + 1]
  const mayBeCommand = index + 2 >= argv.length && /^[a-z][a-z-]*$/.test(next ?? '')
  const isValue = !argv[index].includes('=') && next !== undefined && !next.startsWith('-') && !commands.has(next) && !mayBeCommand
  return isValue ? {tokens: [argv[index], next], used: 2} : {tokens: [argv[index]], used: 1}
}

/**
 * The argv oclif should see: global flags behind the command, `help X` as `X --help`, crictl's names
 * renamed. With `commands` (commandWords of the manifest), other flags before the command move
 * behind it too; without, an unknown leading flag leaves argv as typed.
 */
export function normalizeArgv(argv: readonly string[], commands?: ReadonlySet<string>): string[] {
  const moved: string[] = []
  let help = false
  let unknown = false
  let index = 0
  while (index < argv.length && argv[index].startsWith('-') && argv[index] !== '--') {
    if (HELP.has(argv[index])) {
      help = true
      index++
      continue
    }

    const taken = takeGlobal(argv, index)
    if (taken) {
      moved.push(...taken.tokens)
      index += taken.used
      continue
    }

    // -v/--version, and anything unknown when the commands are not known: leave the rest as typed.
    if (!commands || VERSION.has(argv[index])) return [...argv]
    unknown = true
    const own = takeCommandFlag(argv, index, commands)
    moved.push(...own.tokens)
    index += own.used
  }

  let rest = argv.slice(index)
  // Only flags, one of them not global: there is no command to move them behind.
  if (rest.length === 0 && unknown) return [...argv]
  if (rest.length === 0) return help || moved.length > 0 ? ['--help'] : []
  const rename = COMMAND_RENAMES[rest[0]]
  if (rename) rest = [...rename, ...rest.slice(1)]
  if (rest[0] === 'help') {
    const topic = rest.slice(1).filter((token) => !token.startsWith('-'))
    return [...topic, '--help']
  }

  const [command, ...after] = rest
  return [command, ...moved, ...(help ? ['--help'] : []), ...after]
}
