import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {NotFoundError, RuntimeNotReadyError, UsageError} from '../lib/errors.js'
import {durationFlag, outputFlag, podDirRootFlag} from '../lib/flags.js'
import {humanDuration, truncateId} from '../lib/output/format.js'
import {renderFields, renderTable} from '../lib/output/table.js'
import {resolvePodSandboxes} from '../lib/node/resolve.js'
import * as runtime from '../lib/node/runtime-status.js'
import {podFullName} from '../lib/kube/helpers.js'
import {getPodStatus, type PodStatusReport} from '../lib/kubelet/status/pod-status.js'
import {
  describePodFailure,
  describePodState,
  POD_WAIT_CONDITIONS,
  type PodWaitCondition,
  waitForPod,
} from '../lib/kubelet/status/wait-for-pod.js'
import {PodFailedError} from '../lib/kubelet/core/reasons.js'
import type {PodConditions} from '../lib/kubelet/status/status-manager.js'
import {describeContainerState} from '../lib/kubelet/status/container-status.js'
import {readTermination, type TerminationIntent, terminationNote} from '../lib/kubelet/config/termination-record.js'

/** What `status POD --wait-for deleted` returns once the pod is gone. */
export interface PodDeletedResult {
  pod: string
  deleted: true
}

export const DEFAULT_WAIT_TIMEOUT_MS = 2 * 60_000

export default class Status extends BaseCommand<typeof Status> {
  // --timeout here is each call; --wait-timeout bounds the wait, not a bound on the whole command.
  static override timeoutBoundsCommand = false
  static override summary = "Show the runtime's health, or with POD one pod's status and phase the kubelet's way."

  static override description = `Without POD: calls Version, Status, RuntimeConfig, ListPodSandbox, ListContainers and ListImages \
concurrently (RuntimeConfig is optional: older runtimes answer UNIMPLEMENTED and the cgroup driver shows as not reported). \
Exits 7 (RuntimeNotReady) when RuntimeReady or NetworkReady is false or missing, the kubelet's test, \
so CI and node checks can use it as a health probe. Any other condition that is false (containerd 1.7's \
ContainerdHasNoDeprecationWarnings) is shown as a warning on stderr and leaves the exit code 0.

With POD (a name in --namespace, name_namespace, or sandbox ID prefix): the kubelet's GetPodStatus — every sandbox \
(attempt) newest first, the pod IP from the newest sandbox when it is ready, every container newest first — and the \
phase the kubelet would compute (Pending, Running, Succeeded, Failed) from the container states, the \
io.podctl.containerType annotation (init|app) and the sandbox's io.podctl.restartPolicy annotation (default Always). \
A pod whose sandbox is stopped and that runs nothing is terminal: Succeeded if every app container exited 0, else Failed. \
Exits 5 when the pod does not exist. Then the status manager's view: the conditions, and \
\`ready\` is the Ready condition (every container running and ready by its readiness probe, as a supervisor's prober \
records it; started, for a container without one). A container that exited and waits out its crash back-off (the \
backoff.json sync keeps) is Waiting with reason CrashLoopBackOff, the kubelet's message and the time left; its last \
state is then the attempt that just exited. A finished init container is Terminated, Completed.

--wait-for polls every 500ms until the pod is running (phase Running), ready (Running, every app container and sidecar running \
and ready by its readiness probe, which podctl runs in-process meanwhile as the kubelet would; started, for a container \
without one), completed (Succeeded or Failed; Failed exits 14) or deleted (no sandbox left; exits 0 when it \
never existed), for at most --wait-timeout; on timeout it exits 4 and says what state the pod is in (and each unready container's last \
probe output).`

  static override examples = [
    example('Runtime health at a glance'),
    example('Health check in a script', '-o json >/dev/null || echo "runtime not ready"'),
    example('A runtime on a non-default socket', '-r unix:///run/crio/crio.sock'),
    example('One pod: phase, IP, sandboxes and containers', 'web -n prod'),
    example('Wait up to a minute for a pod to be ready', 'web_prod --wait-for ready --wait-timeout 1m'),
    example('CI: wait for a job pod to finish; exit 14 if it failed', 'migrate --wait-for completed -o json'),
    example('Block until a killed pod is gone', 'web --wait-for deleted'),
  ]

  static override args = {
    pod: Args.string({description: 'Pod name (in --namespace), name_namespace, or sandbox ID prefix. Omit for the runtime status.'}),
  }

  static override flags = {
    output: outputFlag(['table', 'json', 'yaml']),
    namespace: Flags.string({char: 'n', summary: 'Namespace of POD (default "default").'}),
    'wait-for': Flags.option({
      options: POD_WAIT_CONDITIONS,
      summary: 'Wait until POD is running, ready, completed or deleted.',
      helpValue: POD_WAIT_CONDITIONS.join('|'),
    })(),
    'wait-timeout': durationFlag({
      summary: 'How long --wait-for waits in total (the global --timeout is the deadline of each runtime call).',
      default: DEFAULT_WAIT_TIMEOUT_MS,
      defaultHelp: async () => '2m',
      helpValue: 'DURATION',
    }),
    'no-trunc': Flags.boolean({summary: 'Show full IDs in the POD tables.'}),
    'pod-dir-root': podDirRootFlag,
  }

  public async run(): Promise<runtime.RuntimeStatusReport | PodStatusReport | PodDeletedResult> {
    if (this.args.pod !== undefined) return this.podStatus(this.args.pod)
    for (const flag of ['namespace', 'wait-for', 'no-trunc'] as const) {
      if (this.flags[flag] !== undefined && this.flags[flag] !== false) {
        throw new UsageError(`--${flag} needs a POD argument, e.g. podctl status web --${flag} ...`)
      }
    }

    const report = await runtime.runtimeStatus(await this.client())
    await this.emit(report, () => this.render(report))
    for (const condition of runtime.advisoryFalseConditions(report.conditions)) this.warnLine(runtime.falseConditionWarning(condition))
    const notReady = runtime.notReadyMessage(report)
    if (notReady !== undefined) this.reportFailure(new RuntimeNotReadyError(notReady))

    return report
  }

  private async podStatus(ref: string): Promise<PodStatusReport | PodDeletedResult> {
    const {flags} = this
    const condition = flags['wait-for'] as PodWaitCondition | undefined
    const client = await this.client()
    let sandboxes
    try {
      sandboxes = await resolvePodSandboxes(client, ref, {namespace: flags.namespace})
    } catch (error) {
      if (condition === 'deleted' && error instanceof NotFoundError) return this.deleted(ref)
      throw error
    }

    const pod = {name: sandboxes[0].metadata?.name ?? '', namespace: sandboxes[0].metadata?.namespace ?? ''}
    let report: PodStatusReport | undefined
    const probedReady = new Set<string>()
    if (condition === undefined) report = await getPodStatus(client, sandboxes)
    else {
      const waiting = `Waiting for pod ${podFullName(pod.name, pod.namespace)} to be ${condition}`
      const spinner = await this.spinner(waiting)
      try {
        report = await waitForPod(client, pod, condition, {
          timeoutMs: flags['wait-timeout'],
          podDirRoot: flags['pod-dir-root'],
          probedReady,
          onPoll(current) {
            if (spinner) spinner.text = `${waiting} (${describePodState(current)})`
          },
        })
      } finally {
        spinner?.stop()
      }

      if (report === undefined) return this.deleted(podFullName(pod.name, pod.namespace))
    }

    const {podConditions} = await import('../lib/kubelet/status/status-manager.js')
    const conditions = await podConditions(client, report, flags['pod-dir-root'], {probedReady})
    // "ready" is the Ready condition (readiness probes included), never more than the runtime's half of it.
    const shown = {...report, ready: conditions.conditions.some((c) => c.type === 'Ready' && c.status)}
    // A kill under way (recorded in the pod's directory) makes the pod Terminating, as kubectl shows it.
    const killing = readTermination(flags['pod-dir-root'], report.uid)
    await this.emit({...shown, ...conditions}, () => `${this.renderPod(shown, killing)}\n\n${this.renderConditions(conditions)}`)
    if (condition === 'completed' && report.phase === 'Failed') this.reportFailure(new PodFailedError(describePodFailure(report)))
    return shown
  }

  private async deleted(pod: string): Promise<PodDeletedResult> {
    const result: PodDeletedResult = {pod, deleted: true}
    await this.emit(result, () => `pod ${pod} is gone`)
    return result
  }

  private renderPod(report: PodStatusReport, killing?: TerminationIntent): string {
    const {chalk} = this
    const noTrunc = this.flags['no-trunc']
    const now = Date.now()
    const age = (iso: string | null) => (iso === null ? '-' : `${humanDuration(now - Date.parse(iso))} ago`)
    const phaseColor = {Running: chalk.green, Succeeded: chalk.green, Pending: chalk.yellow, Failed: chalk.red, Unknown: chalk.yellow}
    const header = renderFields([
      ['Name', report.name],
      ['Namespace', report.namespace],
      ['UID', report.uid],
      ['Phase', phaseColor[report.phase](report.phase) + (report.ready ? chalk.dim(' (ready)') : '') + terminationNote(killing)],
      ['IP', report.ips.join(', ') || '-'],
      ['Restart policy', report.restartPolicy],
    ])
    const sandboxes = renderTable(
      ['POD ID', 'ATTEMPT', 'STATE', 'CREATED', 'IP'],
      report.sandboxes.map((sandbox) => [
        truncateId(sandbox.id, noTrunc),
        String(sandbox.attempt),
        sandbox.state === 'Ready' ? chalk.green('Ready') : chalk.yellow('NotReady'),
        age(sandbox.createdAt),
        sandbox.ip ?? '-',
      ]),
    )
    const withMessage = report.containers.some((container) => container.message !== '')
    const stateColor = {Running: chalk.green, Created: chalk.yellow, Exited: (text: string) => text, Unknown: chalk.yellow}
    const headers = ['CONTAINER', 'NAME', 'TYPE', 'STATE', 'IMAGE', 'ATTEMPT', 'STARTED', 'FINISHED', 'EXIT CODE', 'REASON']
    const containers = renderTable(
      [...headers, ...(withMessage ? ['MESSAGE'] : [])],
      report.containers.map((container) => [
        truncateId(container.id, noTrunc),
        container.name,
        container.type,
        container.state === 'Exited' && container.exitCode !== 0 ? chalk.red('Exited') : stateColor[container.state](container.state),
        container.image,
        String(container.attempt),
        age(container.startedAt),
        age(container.finishedAt),
        container.exitCode === null ? '-' : String(container.exitCode),
        container.reason || '-',
        ...(withMessage ? [container.message.replaceAll(/\s+/g, ' ').trim() || '-'] : []),
      ]),
    )
    const noContainers = report.containers.length === 0 ? chalk.dim('(no containers)') : containers
    return `${header}\n\n${sandboxes}\n\n${noContainers}`
  }

  /** The status manager's view: conditions, per-container readiness and last state, and who (if anyone) restarts what. */
  private renderConditions(report: PodConditions): string {
    const {chalk} = this
    const conditions = report.conditions.map((c) => `${c.type}=${c.status ? 'True' : 'False'}`).join('  ')
    const table = renderTable(
      ['NAME', 'STATE', 'READY', 'STARTED', 'RESTARTS', 'LAST STATE', 'MESSAGE'],
      report.containerStatuses.map((c) => [
        c.name,
        c.waiting?.reason === 'CrashLoopBackOff' ? chalk.red(describeContainerState(c)) : describeContainerState(c),
        String(c.ready),
        String(c.started),
        String(c.restartCount),
        c.lastState ? `${c.lastState.reason} (exit ${c.lastState.exitCode}) at ${c.lastState.finishedAt ?? '-'}` : '-',
        // The kubelet's back-off message whole; a termination message (a log tail, perhaps) cut short.
        c.waiting?.message || (c.message || c.lastState?.message || '').replaceAll(/\s+/g, ' ').trim().slice(0, 60) || '-',
      ]),
    )
    const notice = report.notice ? `\n${chalk.yellow(report.notice)}` : ''
    const {supervisor} = report
    const by = supervisor ? `\nSupervised by pid ${supervisor.pid} (${supervisor.holder}) since ${supervisor.since}` : ''
    return `Conditions: ${conditions}${report.supervised ? chalk.dim(' (supervised)') : ''}${by}${notice}\n\n${table}`
  }

  private render(report: runtime.RuntimeStatusReport): string {
    const {chalk} = this
    const {runtime} = report
    const header = renderFields([
      ['Endpoint', report.endpoint + (this.runtimeSource ? chalk.dim(` (from ${this.runtimeSource})`) : '')],
      ...(report.imageEndpoint === report.endpoint ? [] : [['Image endpoint', report.imageEndpoint] as const]),
      ['Runtime', `${runtime.name} ${runtime.version} (CRI ${runtime.apiVersion})`],
      ['Pods', `${report.pods.ready} ready / ${report.pods.total} total`],
      ['Containers', `${report.containers.running} running / ${report.containers.total} total`],
      ['Images', String(report.images)],
      ['Cgroup driver', report.cgroupDriver ?? chalk.dim('(not reported: runtime has no RuntimeConfig)')],
    ])
    const conditions = renderTable(
      ['CONDITION', 'STATUS', 'REASON', 'MESSAGE'],
      report.conditions.map((c) => [c.type, c.status ? chalk.green('true') : chalk.red('false'), c.reason, c.message]),
    )
    return `${header}\n\n${conditions}`
  }
}
