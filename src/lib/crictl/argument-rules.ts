/**
 * What each crictl v1.37 Action does with too few or too many positional arguments before it calls
 * the runtime (cmd/crictl/*.go): show the command's usage and exit 0 (cli.ShowSubcommandHelp), or
 * fail ("ID cannot be empty", logged by main, exit 1). Commands not listed take any arguments.
 */
import {GoTemplateParseError} from './go-template-parse.js'
import {validateGoTemplate} from './go-template.js'
import {type FlagValues, parseGoBool} from './flag-set.js'

export type ArgumentVerdict = {usage: true; andRun?: boolean} | {error: string} | undefined

type Rule = (args: readonly string[], given: (flag: string) => boolean, value: (flag: string) => string | undefined) => ArgumentVerdict

const USAGE = {usage: true} as const
const EMPTY_ID = {error: 'ID cannot be empty'} as const

const usageUnless =
  (ok: (count: number) => boolean): Rule =>
  (args) =>
    ok(args.length) ? undefined : USAGE

const idRequired: Rule = (args) => (args.length === 0 ? EMPTY_ID : undefined)

/** Containers or pods named, or --all; with neither, crictl shows usage (rm, rmp; rmi also takes --prune). */
const idsOr =
  (...flags: string[]): Rule =>
  (args, given) =>
    args.length > 0 || flags.some((flag) => given(flag)) ? undefined : USAGE

/** exec's filter flags: with any of them set, every word is the command (exec.go). */
const EXEC_FILTERS = ['name', 'pod', 'image', 'state', 'label', 'latest', 'last']

export const ARGUMENT_RULES: Readonly<Record<string, Rule>> = {
  attach: (args) => (args[0] === undefined || args[0] === '' ? EMPTY_ID : args.length === 1 ? undefined : USAGE),
  checkpoint: idRequired,
  completion: usageUnless((count) => count <= 1),
  config: (args, given) => (given('get') || given('set') || given('list') || (args[0] ?? '') !== '' ? undefined : USAGE),
  create: usageUnless((count) => count === 3),
  events: (args, _given, value) => (args.length === 0 ? eventsFormat(value('output') ?? 'json', value('template') ?? '') : USAGE),
  exec(args, _given, value) {
    if (args.length === 0) return USAGE
    const filtered = EXEC_FILTERS.some((flag) => value(flag) !== undefined)
    return filtered || args.length >= 2 ? undefined : USAGE
  },
  images: usageUnless((count) => count <= 1),
  info: usageUnless((count) => count === 0),
  logs: (args) => (args[0] === undefined || args[0] === '' ? EMPTY_ID : args.length > 1 ? USAGE : undefined),
  metricdescs: (args, _given, value) => (args.length === 0 && ['', 'json', 'yaml'].includes(value('output') ?? '') ? undefined : USAGE),
  // metricsp also shows usage for an -o it cannot write.
  metricsp: (args, _given, value) => (args.length === 0 && ['', 'json', 'yaml'].includes(value('output') ?? '') ? undefined : USAGE),
  'port-forward': usageUnless((count) => count >= 2),
  ps: usageUnless((count) => count === 0),
  pull: (args) => (args.length === 0 || args[0] === '' ? {error: 'image name cannot be empty'} : args.length > 1 ? USAGE : undefined),
  rm: idsOr('all'),
  rmi: idsOr('all', 'prune'),
  rmp: idsOr('all'),
  run: usageUnless((count) => count === 2),
  runp: (args) => (args.length === 1 && args[0] !== '' ? undefined : USAGE),
  start: idRequired,
  stats: usageUnless((count) => count <= 1),
  statsp: usageUnless((count) => count <= 1),
  stopp: usageUnless((count) => count > 0),
  update: idRequired,
  'update-runtime-config': (args, _given, value) => (args.length === 0 && value('pod-cidr') !== undefined ? undefined : USAGE),
  version: usageUnless((count) => count === 0),
}

/**
 * crictl's events checks -o and --template before it connects (so even with no endpoint), in its words, the
 * template parsed as Go's text/template parses it.
 */
function eventsFormat(format: string, template: string): ArgumentVerdict {
  if (format === 'json' || format === 'yaml') {
    return template === '' ? undefined : {error: `template can't be used with ${JSON.stringify(format)} format`}
  }

  if (format !== 'go-template') return {error: `don't support ${JSON.stringify(format)} format`}
  try {
    validateGoTemplate(template)
    return undefined
  } catch (error) {
    if (!(error instanceof GoTemplateParseError)) throw error
    return {error: `failed to parse go-template: ${error.message}`}
  }
}

/** The verdict of the command's Action on its arguments, before anything is sent. */
export function checkArguments(command: string, args: readonly string[], flags: FlagValues): ArgumentVerdict {
  const value = (flag: string) => flags.byFlag.get(flag)?.at(-1)
  // A flag counts as given when it was set, unless it is a bool set to false (urfave's c.Bool / c.IsSet).
  const given = (flag: string) => {
    const last = value(flag)
    return last !== undefined && parseGoBool(last) !== false
  }

  return ARGUMENT_RULES[command]?.(args, given, value)
}
