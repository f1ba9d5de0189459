/**
 * The shape of crictl v1.29's command line as data (cmd/crictl/*.go, urfave/cli v2.26): each command's
 * names, usage text, positional arguments and flags. The parser (parse.ts), the help printer (help.ts)
 * and the translation to podctl's commands (translate.ts) all read the same table, so what crictl
 * accepts, shows and does stays one fact each.
 */

/** urfave's flag types as crictl uses them (Int64Flag parses as IntFlag does on 64-bit Linux). */
export type FlagKind = 'bool' | 'string' | 'int' | 'duration' | 'string-slice'

export interface CrictlFlag {
  name: string
  aliases?: readonly string[]
  kind: FlagKind
  /** The Go default when it is not the zero value ("table", -1, 1). */
  value?: string | number
  /** Environment variables urfave reads the value from when the flag is not given. */
  env?: readonly string[]
  takesFile?: boolean
  /** Usage as written in Go: a `word` in backquotes is the value's placeholder in help. */
  usage: string
}

export interface CrictlCommand {
  name: string
  aliases?: readonly string[]
  usage: string
  argsUsage?: string
  description?: string
  /** urfave's UseShortOptionHandling: `-it` is `-i -t` when every letter is a flag. */
  shortOptionHandling?: boolean
  /** Sorted by name, as crictl's main() sorts them (cli.FlagsByName); --help is added after them. */
  flags: readonly CrictlFlag[]
}

/** What urfave appends to every command and to the app. */
export const HELP_FLAG: CrictlFlag = {name: 'help', aliases: ['h'], kind: 'bool', usage: 'show help'}
export const VERSION_FLAG: CrictlFlag = {name: 'version', aliases: ['v'], kind: 'bool', usage: 'print the version'}

/** urfave's own `help` command, present in the app and (since v2.2x) under every command. */
export const HELP_COMMAND: CrictlCommand = {
  name: 'help',
  aliases: ['h'],
  usage: 'Shows a list of commands or help for one command',
  argsUsage: '[command]',
  flags: [],
}

export const APP = {name: 'crictl', usage: 'client for CRI', version: 'v1.29.0'} as const

/** crictl's default endpoints, in the order its runtime-endpoint usage names them. */
const DEFAULT_RUNTIME_ENDPOINTS =
  '[unix:///var/run/dockershim.sock unix:///run/containerd/containerd.sock unix:///run/crio/crio.sock unix:///var/run/cri-dockerd.sock]'

/** The app's flags (main.go), sorted by name; --help and --version follow them. */
export const GLOBAL_FLAGS: readonly CrictlFlag[] = [
  {
    name: 'config',
    aliases: ['c'],
    kind: 'string',
    value: '/etc/crictl.yaml',
    env: ['CRI_CONFIG_FILE'],
    usage:
      "Location of the client config file. If not specified and the default does not exist, the program's directory " +
      'is searched as well',
  },
  {name: 'debug', aliases: ['D'], kind: 'bool', usage: 'Enable debug mode'},
  {
    name: 'image-endpoint',
    aliases: ['i'],
    kind: 'string',
    env: ['IMAGE_SERVICE_ENDPOINT'],
    usage: "Endpoint of CRI image manager service (default: uses 'runtime-endpoint' setting)",
  },
  {
    name: 'runtime-endpoint',
    aliases: ['r'],
    kind: 'string',
    env: ['CONTAINER_RUNTIME_ENDPOINT'],
    usage:
      `Endpoint of CRI container runtime service (default: uses in order the first successful one of ${DEFAULT_RUNTIME_ENDPOINTS}). ` +
      'Default is now deprecated and the endpoint should be set instead.',
  },
  {
    name: 'timeout',
    aliases: ['t'],
    kind: 'duration',
    value: '2s',
    usage: 'Timeout of connecting to the server in seconds (e.g. 2s, 20s.). 0 or less is set to default',
  },
]

export function flagNames(flag: CrictlFlag): string[] {
  return [flag.name, ...(flag.aliases ?? [])]
}

export function commandNames(command: CrictlCommand): string[] {
  return [command.name, ...(command.aliases ?? [])]
}
