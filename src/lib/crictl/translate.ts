/**
 * A parsed crictl invocation (front.ts) as the podctl command line that does the same: crictl's
 * command name as podctl's (inspectp is `inspect pod`), each crictl flag as the podctl flag with its
 * meaning, spelled long (`--flag=value`, a string slice as one flag per value), crictl's positional
 * forms as podctl's (`run C.json P.json` is `run --container-config C.json --pod-config P.json`), and
 * the app's flags behind the command name. test/unit/crictl/translate.test.ts checks that every
 * podctl flag named here exists, so this table cannot drift from the commands.
 */
import {flagNames} from './command-spec.js'
import type {CrictlInvocation} from './front.js'
import {parseGoBool, parseGoDuration} from './flag-set.js'

/** How one crictl flag becomes podctl's: a flag name, a name with a value conversion, or a refusal naming the way round. */
export type FlagMapping =
  | string
  | {to: string; value: (value: string) => string | undefined}
  | {unsupported: string}
  /** Accepted and left out: podctl already does what it asks, or decides it otherwise (the reason says which). */
  | {ignored: string}

export interface CommandTranslation {
  /** podctl's command words. */
  to: readonly string[]
  /** crictl flag (its Name) → podctl flag; unlisted flags keep their name. */
  flags?: Readonly<Record<string, FlagMapping>>
  /** podctl's --timeout means the command's own limit there, so crictl's global connection timeout is not passed. */
  ownTimeout?: boolean
  /** crictl's positional arguments as podctl's words (after the flags). */
  positional?: (args: readonly string[]) => string[]
}

/** crictl's whole seconds (`stop -t 10`, `exec --timeout 5`) as a podctl duration; 0 or less leaves the default. */
const seconds = (value: string): string | undefined => (Number(value) > 0 ? `${Number(value)}s` : undefined)
/** A Go duration as milliseconds podctl's duration flags read; 0 or less leaves the default. */
const duration = (value: string): string | undefined => {
  const ms = parseGoDuration(value)
  return ms !== undefined && ms > 0 ? `${ms}ms` : undefined
}

const NO_PASSWORD_PROMPT = {unsupported: 'podctl asks for no password on the terminal; give --creds USERNAME:PASSWORD'}
const WINDOWS_ONLY = {unsupported: 'it applies to Windows containers only'}
/** podctl run pulls as the kubelet does (the image's pull policy: IfNotPresent for a tagged image), with or without these. */
const RUN_PULLS_BY_POLICY = {ignored: "podctl run pulls by the container's image pull policy"}

export const TRANSLATIONS: Readonly<Record<string, CommandTranslation>> = {
  attach: {to: ['attach'], flags: {stdin: 'interactive'}},
  create: {to: ['create'], flags: {'cancel-timeout': {to: 'timeout', value: duration}, username: NO_PASSWORD_PROMPT}},
  exec: {
    to: ['exec'],
    flags: {timeout: {to: 'timeout', value: seconds}},
    ownTimeout: true,
    // The command starts after the container, as in crictl: "--" keeps its words podctl's flags never.
    positional: ([container, ...command]) => [container, '--', ...command],
  },
  version: {to: ['version']},
  images: {to: ['images']},
  inspect: {to: ['inspect', 'container']},
  inspecti: {to: ['inspect', 'image']},
  imagefsinfo: {to: ['imagefsinfo']},
  inspectp: {to: ['inspect', 'pod']},
  logs: {to: ['logs']},
  'port-forward': {to: ['port-forward']},
  ps: {to: ['ps']},
  pull: {to: ['pull']},
  run: {
    to: ['run'],
    flags: {
      runtime: 'runtime-handler',
      timeout: {to: 'timeout', value: duration},
      username: NO_PASSWORD_PROMPT,
      'no-pull': RUN_PULLS_BY_POLICY,
      'with-pull': RUN_PULLS_BY_POLICY,
    },
    ownTimeout: true,
    positional: ([container, pod]) => [`--container-config=${container}`, `--pod-config=${pod}`],
  },
  runp: {to: ['runp'], flags: {runtime: 'runtime-handler', 'cancel-timeout': {to: 'timeout', value: duration}}},
  rm: {to: ['rm']},
  rmi: {to: ['rmi']},
  rmp: {to: ['rmp']},
  pods: {to: ['pods']},
  start: {to: ['start']},
  info: {to: ['info']},
  stop: {to: ['stop'], flags: {timeout: {to: 'timeout', value: seconds}}, ownTimeout: true},
  stopp: {to: ['stopp']},
  update: {to: ['update'], flags: {'cpu-share': 'cpu-shares', 'cpu-count': WINDOWS_ONLY, 'cpu-maximum': WINDOWS_ONLY}},
  config: {to: ['config']},
  stats: {to: ['stats']},
  statsp: {to: ['statsp']},
  metricsp: {to: ['metricsp']},
  completion: {to: ['completion']},
  checkpoint: {to: ['checkpoint']},
  'runtime-config': {to: ['runtime-config']},
  events: {to: ['events']},
}

/** A crictl flag podctl cannot honour: the message of crictl's fatal line. */
export class UnsupportedFlagError extends Error {}

/** The podctl flag a crictl flag of a command becomes (its long name), or undefined where podctl refuses or ignores it. */
export function podctlFlagName(command: string, flag: string): string | undefined {
  const mapping = TRANSLATIONS[command]?.flags?.[flag] ?? flag
  if (typeof mapping === 'string') return mapping
  return 'to' in mapping ? mapping.to : undefined
}

function globalArgv(invocation: CrictlInvocation, translation: CommandTranslation): string[] {
  const out: string[] = []
  const last = (name: string) => invocation.globals.byFlag.get(name)?.at(-1)
  const config = last('config')
  if (config !== undefined) out.push(`--config=${config}`)
  for (const endpoint of ['runtime-endpoint', 'image-endpoint']) {
    const value = last(endpoint)
    // Empty means "not set" here: front.ts already refused an empty runtime endpoint where crictl does.
    if (value) out.push(`--${endpoint}=${value}`)
  }

  const timeout = last('timeout')
  const ownTimeout = translation.ownTimeout || invocation.flags.byFlag.has('cancel-timeout')
  if (timeout !== undefined && !ownTimeout) {
    const value = duration(timeout)
    if (value) out.push(`--timeout=${value}`)
  }

  if (parseGoBool(last('debug') ?? '') === true) out.push('--debug')
  return out
}

/** urfave's EnvVars: a flag not given takes the first of its variables that is set and not empty (pull's CRICTL_CREDS). */
function fromEnv(names: readonly string[] | undefined, env: NodeJS.ProcessEnv): string[] | undefined {
  const value = names?.map((name) => env[name]).find((candidate) => candidate !== undefined && candidate !== '')
  return value === undefined ? undefined : [value]
}

function commandFlagArgv(invocation: CrictlInvocation, translation: CommandTranslation, env: NodeJS.ProcessEnv): string[] {
  const out: string[] = []
  for (const flag of invocation.command.flags) {
    const values = invocation.flags.byFlag.get(flag.name) ?? fromEnv(flag.env, env)
    if (!values) continue
    const mapping = translation.flags?.[flag.name] ?? flag.name
    if (typeof mapping !== 'string' && 'ignored' in mapping) continue
    if (typeof mapping !== 'string' && 'unsupported' in mapping) {
      const spelled = flagNames(flag).map((name) => (name.length === 1 ? `-${name}` : `--${name}`))
      throw new UnsupportedFlagError(`crictl ${invocation.command.name} ${spelled.join('/')} is not supported: ${mapping.unsupported}`)
    }

    const to = typeof mapping === 'string' ? mapping : mapping.to
    const convert = typeof mapping === 'string' ? (value: string) => value : mapping.value
    if (flag.kind === 'bool') {
      if (parseGoBool(values.at(-1)!) === true) out.push(`--${to}`)
      continue
    }

    for (const value of flag.kind === 'string-slice' ? values : values.slice(-1)) {
      const converted = convert(value)
      if (converted !== undefined) out.push(`--${to}=${converted}`)
    }
  }

  return out
}

/** The podctl argv (without the program's name) that runs a crictl invocation. */
export function toPodctlArgv(invocation: CrictlInvocation, env: NodeJS.ProcessEnv = process.env): string[] {
  const translation = TRANSLATIONS[invocation.command.name]
  if (!translation) throw new Error(`no podctl translation for crictl ${invocation.command.name}`)
  const positional = translation.positional ? translation.positional(invocation.args) : invocation.args
  // An argument that looks like a flag (an ID "-x", a command's "-l") must stay an argument.
  const guard = !translation.positional && positional.some((word) => word.startsWith('-')) ? ['--'] : []
  return [
    ...translation.to,
    ...globalArgv(invocation, translation),
    ...commandFlagArgv(invocation, translation, env),
    ...guard,
    ...positional,
  ]
}
