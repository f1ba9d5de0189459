/**
 * The shape of crictl v1.37's command line as data (cmd/crictl/*.go, urfave/cli v2.27): each command's
 * names, usage text, positional arguments, flags and subcommands. The parser (front.ts), the help
 * printer (help.ts) and the commands (commands/) all read the same table, so what crictl accepts,
 * shows and does stays one fact each.
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
  /** Subcommands (create, run, runp and pull have `jsonschema`); urfave adds `help` after them. */
  subcommands?: readonly CrictlCommand[]
  /** urfave's UsageText, shown in USAGE instead of the generated line. */
  usageText?: string
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

export const APP = {name: 'crictl', usage: 'client for CRI', version: 'v1.37.0'} as const

/** crictl's default endpoints (main_unix.go), in the order its runtime-endpoint usage names them. */
const DEFAULT_RUNTIME_ENDPOINTS = '[unix:///run/containerd/containerd.sock unix:///run/crio/crio.sock unix:///var/run/cri-dockerd.sock]'

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
  {name: 'enable-tracing', kind: 'bool', usage: 'Enable OpenTelemetry tracing.'},
  {
    name: 'image-endpoint',
    aliases: ['i'],
    kind: 'string',
    env: ['IMAGE_SERVICE_ENDPOINT'],
    usage: "Endpoint of CRI image manager service (default: uses 'runtime-endpoint' setting)",
  },
  {
    name: 'max-retries',
    kind: 'int',
    value: 3,
    usage: 'Max retries for connecting to an explicitly set endpoint with exponential backoff (0 to disable, negative for infinite)',
  },
  {name: 'profile-cpu', kind: 'string', usage: 'Write a pprof CPU profile to the provided path.'},
  {name: 'profile-mem', kind: 'string', usage: 'Write a pprof memory profile to the provided path.'},
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
  {
    name: 'tracing-endpoint',
    kind: 'string',
    value: '127.0.0.1:4317',
    usage: 'Address to which the gRPC tracing collector will send spans to.',
  },
  {
    name: 'tracing-sampling-rate-per-million',
    kind: 'int',
    value: -1,
    usage: 'Number of samples to collect per million OpenTelemetry spans. Set to 1000000 or -1 to always sample.',
  },
]

export function flagNames(flag: CrictlFlag): string[] {
  return [flag.name, ...(flag.aliases ?? [])]
}

export function commandNames(command: CrictlCommand): string[] {
  return [command.name, ...(command.aliases ?? [])]
}
