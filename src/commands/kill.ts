import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'
import {outputFlag} from '../lib/flags.js'
import {settleLimit} from '../lib/util/concurrency.js'
import {ExitCode, NotFoundError, PodctlError, UsageError} from '../lib/errors.js'
import {parseLabelSelector} from '../lib/util/filters.js'
import type {PodEvent} from '../lib/kube/events.js'
import {KillPodError, killPod, type KillPodResult} from '../lib/kubelet/kill.js'
import {selectPods, validateSelection} from '../lib/node/select.js'

export interface KillFailure {
  /** The pod's full name, or the reference that matched no pod. */
  pod: string
  code: string
  exitCode: number
  message: string
}

export interface KillResult {
  items: KillPodResult[]
  failures: KillFailure[]
}

export default class Kill extends BaseCommand<typeof Kill> {
  static override summary = "Stop and remove pods the kubelet's way: preStop hooks, grace period, then the sandbox."

  static override description = `For each pod: every running container in parallel gets a Killing event, its preStop exec hook \
(from the io.kubernetes.container.preStopHandler annotation) within the grace period, then StopContainer with what is \
left of the grace period (never below 2s unless --force); then StopPodSandbox for every sandbox (attempt) of the pod; \
then the containers and sandboxes are removed unless --keep. The grace period is --grace-period, else the pod's \
io.kubernetes.pod.terminationGracePeriod annotation, else 30s. Objects already gone count as done, so killing twice is safe. \
Pods are killed concurrently (--parallel); one pod's failure never stops the others, and the exit code is that of the \
first failure (5 for a pod that does not exist, unless --ignore-not-found).`

  static override examples = [
    {description: 'Kill one pod of the default namespace', command: '<%= config.bin %> <%= command.id %> web'},
    {description: 'Kill by full name or sandbox ID prefix', command: '<%= config.bin %> <%= command.id %> web_prod 3f2a9c'},
    {description: 'Kill every pod of a namespace, 8 at a time', command: '<%= config.bin %> <%= command.id %> --all -n ci --parallel 8'},
    {description: 'Kill pods labelled app=web at once, without waiting for the grace period', command: '<%= config.bin %> <%= command.id %> -l app=web --force'},
    {description: 'Stop a pod but keep its containers for inspection', command: '<%= config.bin %> <%= command.id %> web --keep --grace-period 5'},
    {description: 'Idempotent cleanup in a script', command: '<%= config.bin %> <%= command.id %> web --ignore-not-found -o json'},
  ]

  static override strict = false

  static override args = {
    pod: Args.string({description: 'Pod name (in --namespace), name_namespace, or sandbox ID prefix; several may be given.'}),
  }

  static override flags = {
    namespace: Flags.string({
      char: 'n',
      summary: 'Namespace of the named pods (default "default"); with --all or --label, only pods of this namespace.',
    }),
    label: Flags.string({char: 'l', summary: 'Kill pods with this label KEY=VALUE (repeatable; all must match).', multiple: true}),
    all: Flags.boolean({summary: 'Kill every pod (restricted by --namespace when given).'}),
    'grace-period': Flags.integer({
      summary: 'Seconds each container gets to stop; 0 means --force. Default: the pod\'s terminationGracePeriod annotation, else 30.',
      min: 0,
      helpValue: 'SECONDS',
    }),
    force: Flags.boolean({summary: 'Kill at once: no preStop hook, no grace period (StopContainer timeout 0).'}),
    keep: Flags.boolean({summary: 'Leave the stopped containers and sandboxes in place (for debugging) instead of removing them.'}),
    'ignore-not-found': Flags.boolean({summary: 'Treat pods that do not exist as already killed (exit 0).'}),
    parallel: Flags.integer({summary: 'How many pods to kill at the same time.', default: 4, min: 1, helpValue: 'N'}),
    output: outputFlag(['table', 'json', 'yaml'] as const),
  }

  public async run(): Promise<KillResult> {
    const {flags} = this
    const {argv} = await this.parse(Kill)
    const refs = argv as string[]
    const labels = parseLabelSelector(flags.label)
    const selection = {refs, namespace: flags.namespace, labels, all: flags.all}
    validateSelection(selection)
    const gracePeriod = flags['grace-period']
    if (flags.force && gracePeriod !== undefined && gracePeriod > 0) {
      throw new UsageError(`--force kills at once; it cannot be combined with --grace-period ${gracePeriod} (drop one of them)`)
    }

    const force = flags.force || gracePeriod === 0
    const client = await this.client()
    const [{items: sandboxes}, {containers}] = await Promise.all([
      client.runtime('listPodSandbox', {filter: {labelSelector: labels}}),
      client.runtime('listContainers', {filter: {}}),
    ])
    const {pods, failures: unmatched} = selectPods(sandboxes, selection)

    const failures: KillFailure[] = []
    for (const {ref, error} of unmatched) {
      if (error instanceof NotFoundError && flags['ignore-not-found']) continue
      failures.push({pod: ref, code: error.code, exitCode: error.exitCode, message: error.message})
    }

    if (pods.length === 0 && refs.length === 0) {
      const where = flags.namespace === undefined ? '' : ` in namespace "${flags.namespace}"`
      const what = flags.all ? 'no pods' : `no pods with label ${Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',')}`
      process.stderr.write(`${what}${where}; nothing to kill\n`)
    }

    const human = !this.jsonEnabled() && (flags.output === undefined || flags.output === 'table')
    // Grace periods make kills slow (30 s by default): show progress on a terminal, on stderr.
    const spinner = pods.length > 0 && !this.jsonEnabled() ? await this.spinner(this.spinnerText(0, pods.length)) : undefined
    let done = 0
    const above = (write: () => void) => {
      spinner?.clear()
      write()
      spinner?.render()
    }

    const onEvent = (event: PodEvent) => {
      // Killing is implied by the summary line; warnings (failed or skipped preStop hooks) matter.
      if (event.type === 'Warning') above(() => this.warnLine(`${event.reason} ${event.object ?? ''}: ${event.message}`))
    }

    const items: KillPodResult[] = []
    const settled = await settleLimit(pods, flags.parallel, async (pod) => {
      const result = await killPod(client, pod.sandboxes, {
        gracePeriodSeconds: gracePeriod,
        force,
        keep: flags.keep,
        events: onEvent,
        containers,
      }).finally(() => {
        done++
        if (spinner) spinner.text = this.spinnerText(done, pods.length)
      })
      if (human) above(() => this.log(this.line(result)))
      return result
    }).finally(() => spinner?.stop())
    settled.forEach((outcome, index) => {
      if (outcome.status === 'fulfilled') {
        items.push(outcome.value)
        return
      }

      const error = outcome.reason
      if (error instanceof KillPodError) items.push(error.result)
      const failure = error instanceof PodctlError ? error : new PodctlError('InternalError', ExitCode.INTERNAL, String(error?.message ?? error))
      failures.push({pod: pods[index].fullName, code: failure.code, exitCode: failure.exitCode, message: failure.message})
    })

    const result: KillResult = {items, failures}
    if (!human) await this.emit(result)
    for (const failure of failures) this.reportFailure(new PodctlError(failure.code, failure.exitCode, failure.message))
    if (failures.length > 0) process.exitCode = failures[0].exitCode
    return result
  }


  private spinnerText(done: number, total: number): string {
    return `Killing ${total} pod${total === 1 ? '' : 's'} (${done} done)`
  }

  private line(result: KillPodResult): string {
    const count = `${result.containersStopped} container${result.containersStopped === 1 ? '' : 's'} stopped`
    const fate = result.removed ? 'removed' : this.flags.keep ? 'kept' : 'not removed'
    return `${this.chalk.bold(result.pod)}: ${count}, ${fate} ${this.chalk.dim(`(${(result.durationMs / 1000).toFixed(1)}s)`)}`
  }
}
