/**
 * Flags more than one command uses, with their parsing and help text in one place (as
 * sf-plugins-core keeps them in src/flags/): durations and the one `-o` flag.
 */
import {Args, type Config, Flags, type Interfaces} from '@oclif/core'

import {UsageError} from './errors.js'
import {DEFAULT_CLAIMS_ROOT, DEFAULT_POD_DIR_ROOT, DEFAULT_POD_LOGS_ROOT} from './kube/helpers.js'
import type {OutputChoices, OutputFormat} from './output/spec.js'
import {clampTimerMs, parseDuration} from './util/duration.js'

/** Clamped to what timers accept (~24.8 days). A duration flag ("10s", "500ms", "2m" or seconds) parsed to milliseconds. */
export const durationFlag = Flags.custom<number>({
  async parse(input, _context, opts) {
    const ms = parseDuration(input)
    if (ms === undefined) throw new UsageError(`--${opts.name} "${input}" is not a duration; use e.g. 10s, 500ms or 2m`)
    return clampTimerMs(ms)
  },
})

export interface OutputFlagOptions {
  /** Also take `-o jsonpath=EXPR` and `-o go-template=TPL` (picking fields out of what `-o json` prints). */
  templates?: boolean
  /** What no `-o` means; the first format unless said (pull: its human lines, which `-o` cannot name). */
  fallback?: OutputFormat
}

/**
 * `-o FORMAT`. The value stays the text typed; BaseCommand.init reads it, with `--template` where a
 * command has one, through the one parser (output/spec.ts parseOutputSpec) into `this.output`. The
 * formats are not oclif `options`, which would refuse `jsonpath=…`; completion offers the plain
 * formats from the help value instead.
 */
export function outputFlag(formats: readonly OutputFormat[], options: OutputFlagOptions = {}) {
  const choices: OutputChoices = {formats, templates: options.templates ?? false, fallback: options.fallback ?? formats[0]}
  const templates = choices.templates ? ['jsonpath=EXPR', 'go-template=TPL'] : []
  const summary = choices.templates
    ? `Output format: ${[`${choices.fallback} (default)`, ...formats.filter((f) => f !== choices.fallback), ...templates].join(', ')}.`
    : `Output format: ${formats.join('|')}.`
  return Flags.custom<string, {outputChoices: OutputChoices}>({
    char: 'o',
    summary,
    helpValue: [...formats, ...templates].join('|'),
  })({outputChoices: choices})
}

/** The formats a command's `-o` flag takes, from its flag definitions; undefined for commands without one. */
export function outputChoicesOf(flags: Readonly<Record<string, unknown>> | undefined): OutputChoices | undefined {
  return (flags?.output as {outputChoices?: OutputChoices} | undefined)?.outputChoices
}

/** --pod-logs-root: where the pods' log directories are (run writes them, kill and status read them). */
export const podLogsRootFlag = Flags.string({
  summary: 'Root of the pod log directories.',
  env: 'PODCTL_POD_LOGS_ROOT',
  default: DEFAULT_POD_LOGS_ROOT,
  helpValue: 'DIR',
})

/** run's -f: files, directories or stdin, repeatable as kubectl's. */
export const manifestFlag = Flags.string({
  char: 'f',
  summary: 'Manifest (Pods, workloads, ConfigMaps, Secrets, Lists), a directory of them, or - for stdin; repeatable.',
  helpValue: 'FILE|DIR|-',
  multiple: true,
})

/** kill -f: the pods a manifest would create (kubectl delete -f). */
export const killManifestFlag = Flags.string({
  char: 'f',
  helpValue: 'FILE|DIR|-',
  multiple: true,
  summary: 'Kill the pods these manifests would create: Pods by name, every replica of their workloads; repeatable.',
})

/** run --replicas N: replaces spec.replicas of every Deployment, ReplicaSet and StatefulSet, and Jobs' completions. */
export const replicasFlag = Flags.integer({
  summary: "Replicas of every Deployment, ReplicaSet and StatefulSet (and a Job's completions) in the input; 0 runs none.",
  min: 0,
  max: 1000,
  helpValue: 'N',
})

/** run's --volume NAME=DIR: a volume source with no single-node plugin (nfs, csi, ...), or a claim volume, bound to a host directory. */
export const volumeBindingFlag = Flags.string({
  summary: 'Bind a volume to a host directory (nfs, csi, ...; a claim volume instead of its claim directory); repeatable.',
  helpValue: 'NAME=DIR',
  multiple: true,
})

/** --pod-dir-root: where the pods' host directories are (run makes them, kill removes only those under it). */
export const podDirRootFlag = Flags.string({
  summary: 'Root of the pod directories (emptyDir volumes, /etc/hosts, termination messages).',
  env: 'PODCTL_POD_DIR_ROOT',
  default: DEFAULT_POD_DIR_ROOT,
  helpValue: 'DIR',
})

/** --claims-root: where the PersistentVolumeClaims' directories are (run makes them, kill --delete-claims removes only those under it). */
export const claimsRootFlag = Flags.string({
  summary: 'Root of the claim directories (<root>/<namespace>/<claim>), kept across kill and run.',
  env: 'PODCTL_CLAIMS_ROOT',
  default: DEFAULT_CLAIMS_ROOT,
  helpValue: 'DIR',
})

/** run --settle: how long --wait running watches the containers after the last start (a crash in it fails the run). */
export const settleFlag = durationFlag({
  summary: 'With --wait running: watch the containers this long after the last start; one that dies fails the run.',
  default: 1000,
  defaultHelp: async () => '1s',
  helpValue: 'DURATION',
})

const CREDENTIAL_FLAGS = ['--creds', '--auth'] as const

/**
 * Catches the command-line slips that would turn part of a secret into an image name or a file
 * name, and so into events, errors and a registry request, before anything is parsed or sent:
 * `-creds` with one dash (read as `-c reds`, and the value becomes an argument), and an argument
 * right after a credential's value that `accept` does not recognise (the rest of a password split
 * at an unquoted space, or a password given as a separate word). The messages never quote argv.
 */
export function checkCredentialArgv(argv: readonly string[], accept: (token: string) => boolean, expected: string): void {
  for (const [index, token] of argv.entries()) {
    if (token === '--') return
    const dashed = /^-(creds|auth)(=|$)/.exec(token)
    if (dashed) {
      throw new UsageError(
        `-${dashed[1]} has one dash, so it would be read as short flags and its value as an argument; write --${dashed[1]} ` +
          '(nothing was sent, and no argument is shown as one may be a password)',
      )
    }

    const flag = CREDENTIAL_FLAGS.find((name) => token === name || token.startsWith(`${name}=`))
    if (!flag) continue
    const next = argv[token === flag ? index + 2 : index + 1]
    if (next === undefined || next.startsWith('-') || accept(next)) continue
    throw new UsageError(
      `the argument after the ${flag} value is not ${expected}, so it may be the rest of a password split by the shell (not shown); ` +
        `quote the whole value (${flag} 'USER:PASS WORD'), or put that argument before ${flag}`,
    )
  }
}

/** A command run without its required argument shows its usage (on stderr, before the error line), as crictl does. */
export async function showUsage(config: Config, id: string | undefined): Promise<void> {
  const command = id === undefined ? undefined : config.findCommand(id)
  if (!command) return
  const {default: PodctlHelp} = await import('./output/help.js')
  class StderrHelp extends PodctlHelp {
    protected override log(...lines: string[]): void {
      process.stderr.write(`${lines.join('\n')}\n`)
    }
  }

  await new StderrHelp(config, config.pjson.oclif.helpOptions).showCommandHelp(command)
}

/** exec, logs: the container as crictl names it (an ID prefix) or as kubectl does (a pod, its container found as kubectl finds it). */
export const containerOrPodArg = Args.string({
  description:
    'Container ID prefix, POD/CONTAINER, or POD: its only container or its ' +
    'kubectl.kubernetes.io/default-container (pod name in --namespace).',
  required: true,
})

/**
 * exec, attach: -i means stdin there (crictl's and kubectl's -i), so the global --image-endpoint keeps only its long
 * name in these commands.
 */
export const streamImageEndpointFlag = Flags.string({
  summary: 'CRI image endpoint (defaults to the runtime endpoint; -i means --interactive in this command).',
  helpGroup: 'GLOBAL',
})

/** exec -it, attach -it: docker's --detach-keys (streaming/detach-keys.ts reads it; its DEFAULT_DETACH_KEYS is this default). */
export const detachKeysFlag = Flags.string({
  summary: 'With -i and -t: the keys that end the session and leave the process running, in docker\'s spelling ("" for none).',
  default: 'ctrl-p,ctrl-q',
  helpValue: 'KEYS',
})

/** crictl's pair of config files, the other input of run (and runp/create): both or neither. */
export const crictlConfigFlags = {
  'pod-config': Flags.string({
    summary: 'crictl pod sandbox config (JSON or YAML, snake_case fields); needs --container-config.',
    helpValue: 'FILE',
  }),
  'container-config': Flags.string({summary: 'crictl container config (JSON or YAML); needs --pod-config.', helpValue: 'FILE'}),
}

/**
 * Credentials for the pulls of a run. No oclif `exclusive` between them: its error echoes the other
 * flag's value (a secret); credentialsFromFlags refuses the pair without naming values.
 */
export const registryCredentialFlags = {
  creds: Flags.string({summary: 'Registry credentials USER[:PASSWORD] for the pulls.', helpValue: 'USER[:PASSWORD]'}),
  auth: Flags.string({summary: 'Registry credentials as base64 of USER:PASSWORD.', helpValue: 'BASE64'}),
}

/** What is checked before a pod is admitted: fields with no effect on one node, and the node's CPU and memory. */
export const admissionFlags = {
  strict: Flags.boolean({
    summary: 'Refuse fields that have no effect on a single node (scheduling, read-back metadata) instead of warning.',
  }),
  'skip-admission': Flags.boolean({summary: "Run pods whose requests exceed the node's CPU or memory (no OutOfcpu/OutOfmemory)."}),
}

/**
 * --force on the commands that create or restart pods: go on although a kubelet uses the runtime
 * (local-kubelet/runtime-owner.ts), for a kubelet the user knows is about to be stopped.
 */
export const besideKubeletFlag = Flags.boolean({
  summary: 'Go on although a kubelet uses this runtime (it kills pods it did not start within ~2 s unless it is stopped first).',
})

/**
 * run --static / kill --static: hand a pod to the kubelet that owns the runtime (a file in its static pod
 * directory, local-kubelet/static-pods.ts) or take it back; --static-dir names that directory.
 */
export function staticPodFlags(summary: string) {
  return {
    static: Flags.boolean({summary}),
    'static-dir': Flags.string({
      summary: "With --static: the kubelet's static pod directory on this machine (default: its --pod-manifest-path or staticPodPath).",
      helpValue: 'DIR',
      dependsOn: ['static'],
    }),
  }
}

/**
 * A command's flags without --static and --static-dir (stopp and rmp take kill's flags, not its --static). Typed as
 * the flags given, so a subclass of kill still matches kill's static side; at run time flags.static is undefined.
 */
export function withoutStaticPodFlags<T extends Record<string, unknown>>(flags: T): T {
  return Object.fromEntries(Object.entries(flags).filter(([name]) => name !== 'static' && name !== 'static-dir')) as T
}

/** run's manifest flags: -f, --volume NAME=DIR and --replicas N. */
export const runInputFlags = {filename: manifestFlag, volume: volumeBindingFlag, replicas: replicasFlag}

/**
 * `--state`/`-s` of ps and pods: one of `states`, in any case (crictl takes `Running` and `running` alike);
 * the value is the lower-case name (commands narrow it to their state type).
 */
export function stateFlag(states: readonly string[], summary: string) {
  const flag = Flags.custom<string>({
    async parse(input) {
      const state = states.find((known) => known === input.toLowerCase())
      if (state === undefined) throw new UsageError(`--state "${input}" is not a state; use one of ${states.join(', ')} (any case)`)
      return state
    },
  })
  return flag({char: 's', summary, helpValue: states.join('|')})
}

/**
 * oclif fills an omitted positional argument from stdin whenever stdin is not a terminal, waiting
 * up to 10 ms for it: `podctl status` in a `while read` loop or over ssh took the next input line
 * as the pod name. podctl reads stdin only where a command says so (`run -`, which sets
 * ignoreStdin itself); an argument may still opt in with `ignoreStdin: false`.
 */
export function withoutStdin(args: Interfaces.ArgInput | undefined): Interfaces.ArgInput {
  return Object.fromEntries(Object.entries(args ?? {}).map(([name, arg]) => [name, {ignoreStdin: true, ...arg}]))
}

/** `pull --progress`: how layer progress shows on stderr (images/progress-view.ts's ProgressMode; tsc checks the two agree). */
export const progressFlag = Flags.option({
  options: ['auto', 'tty', 'plain', 'none'] as const,
  default: 'auto' as const,
  summary: 'Layer progress on stderr: tty (bars under the spinner; auto on a terminal), plain (a line per layer step), none.',
})()
