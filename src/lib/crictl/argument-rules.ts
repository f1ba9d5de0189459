/**
 * What each crictl v1.29 Action does with too few or too many positional arguments before it calls
 * the runtime (cmd/crictl/*.go): show the command's usage and exit 0 (cli.ShowSubcommandHelp), or
 * fail with logrus.Fatal ("ID cannot be empty", exit 1). Commands not listed take any arguments.
 */
import {compileTemplate} from '../output/template.js'
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

export const ARGUMENT_RULES: Readonly<Record<string, Rule>> = {
  attach: (args) => (args[0] === undefined || args[0] === '' ? EMPTY_ID : args.length === 1 ? undefined : USAGE),
  create: usageUnless((count) => count === 3),
  exec: usageUnless((count) => count >= 2),
  // version shows usage for arguments, then still prints the versions (its Action does not return there).
  version: (args) => (args.length === 0 ? undefined : {usage: true, andRun: true}),
  images: usageUnless((count) => count <= 1),
  inspect: idRequired,
  inspecti: usageUnless((count) => count > 0),
  inspectp: usageUnless((count) => count > 0),
  logs: (args) => (args[0] === undefined || args[0] === '' ? EMPTY_ID : args.length > 1 ? USAGE : undefined),
  'port-forward': usageUnless((count) => count >= 2),
  ps: usageUnless((count) => count === 0),
  pull: (args) => (args.length === 0 ? {error: 'Image name cannot be empty'} : undefined),
  run: usageUnless((count) => count === 2),
  runp: (args) => (args.length === 1 && args[0] !== '' ? undefined : USAGE),
  rm: idsOr('all'),
  rmi: idsOr('all', 'prune'),
  rmp: idsOr('all'),
  start: idRequired,
  info: usageUnless((count) => count === 0),
  stop: idRequired,
  stopp: usageUnless((count) => count > 0),
  update: idRequired,
  config: (args, given) => (given('get') || given('set') || given('list') || (args[0] ?? '') !== '' ? undefined : USAGE),
  stats: usageUnless((count) => count <= 1),
  statsp: usageUnless((count) => count <= 1),
  // metricsp also shows usage for an -o it cannot write.
  metricsp: (args, _given, value) => (args.length === 0 && ['', 'json', 'yaml'].includes(value('output') ?? '') ? undefined : USAGE),
  completion: usageUnless((count) => count <= 1),
  checkpoint: idRequired,
  events: (args, _given, value) => (args.length === 0 ? eventsFormat(value('output') ?? 'json', value('template') ?? '') : USAGE),
}

/**
 * crictl's events checks -o and --template before it connects (so even with no endpoint), in its words. A template
 * is parsed by podctl's go-template subset; Go's own words where they are the same failure (an unclosed action).
 */
function eventsFormat(format: string, template: string): ArgumentVerdict {
  if (format === 'json' || format === 'yaml') {
    return template === '' ? undefined : {error: `template can't be used with ${JSON.stringify(format)} format`}
  }

  if (format !== 'go-template') return {error: `don't support ${JSON.stringify(format)} format`}
  try {
    compileTemplate(template)
    return undefined
  } catch (error) {
    const reason = (error as Error).message.replace(/^template: /, '')
    return {error: `failed to parse go-template: template: :1: ${reason.startsWith('unclosed action') ? 'unclosed action' : reason}`}
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
