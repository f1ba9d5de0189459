/**
 * `podctl sync`: the kubelet's SyncPod for pods podctl made — one pass (or, with --watch, a
 * supervisor loop) comparing the pod `run` recorded with what runs, and `-f FILE` to apply a
 * changed manifest the kubelet's way. The command wires flags to kubelet/sync-*.ts and renders.
 */
import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {PodctlError} from '../lib/errors.js'
import {besideKubeletFlag, durationFlag, outputFlag, podDirRootFlag, podLogsRootFlag} from '../lib/flags.js'
import {discardEvents, type EventSink} from '../lib/kube/events.js'
import {nodeSettings} from '../lib/kubelet/core/node-settings.js'
import type {PodSyncResult, SyncSettings} from '../lib/kubelet/kuberuntime/reconciler.js'
import type {ApplyPlan} from '../lib/kubelet/kuberuntime/sync-apply.js'
import {metricsAddressFlag} from '../lib/metrics/flag.js'
import {refuseBesideKubelet, type RuntimeOwner} from '../lib/local-kubelet/runtime-owner.js'
import {selectPodsFromRuntime} from '../lib/node/select.js'
import {parseLabelSelector} from '../lib/util/filters.js'

export interface SyncResult {
  pods: Array<PodSyncResult | ApplyPlan>
  /** Pods podctl recorded that the runtime no longer has: their directories were removed. */
  removed: string[]
}

const DEFAULT_SYNC_TIMEOUT_MS = 5 * 60_000
/** The way out of KubeletOwnsRuntime besides --force. */
const KUBELET_WAY = 'hand the pods to the kubelet (podctl run --static)'
/** The pods a pass touches are known only as it goes: the OBJECT column fits a typical pod/container. */
const TIMELINE = {kind: 'timeline', objects: ['x'.repeat(32)]} as const

export default class Sync extends BaseCommand<typeof Sync> {
  static override summary = "Bring pods podctl made back to what their manifest says, the kubelet's way (SyncPod)."

  static override description = `One SyncPod pass per pod, from the pod \`podctl run\` recorded in the pod directory: exited \
containers are restarted per restartPolicy after the kubelet's crash back-off (10s doubling to 5m, kept in the pod \
directory between runs, reset after 10 minutes of running), a dead sandbox is recreated with attempt + 1, the sandbox of \
a pod whose containers have all terminated for good is stopped, activeDeadlineSeconds is enforced (DeadlineExceeded). \
Pods podctl recorded for this runtime that it no longer has lose their pod and log directories; records of other \
runtimes sharing the pod directory root are left alone. What it does prints as events.

-f FILE applies a changed manifest: containers whose io.kubernetes.container.hash changed are killed and recreated \
(attempt + 1), unchanged ones keep running, new ones start, removed ones are killed; a change the sandbox cannot take \
(ports, hostname, DNS, network mode, the pod's security context, runtime class) recreates the pod with attempt + 1. \
--dry-run shows what changed and the plan.

--watch stays in the foreground and keeps the pods synced (probes run, exits are seen within a second) until Ctrl-C, \
each pod in a worker of its own (one pod's slow kill or pull never delays another; --parallel bounds only pulls), \
pods run after it started included. If a kubelet comes to use the runtime, it stops starting, restarting and \
recreating pods (the kubelet would kill them) and keeps watching until the kubelet is gone; a pod whose sandbox is stopped \
from outside 3 times within 60s is no longer recreated either. One supervisor per pod (supervisor.lock in the pod directory): a pod \
another supervisor holds is left to it (AlreadySupervised) and taken over when that one stops.

--metrics-address HOST:PORT serves the supervisor's Prometheus metrics at /metrics (the kubelet's prober_probe_total, \
kubelet_running_pods, kubelet_running_containers; podctl's restarts, back-off and lag) and ok at /healthz; off by default, \
loopback unless HOST is another address, port 0 picks a free port (the address is printed on stderr).

A live kubelet that uses this runtime kills every pod it did not start: sync refuses to start next to one (exit 17) \
unless --force.

Exit codes: 0 nothing failed; 5 a named pod does not exist; 14 a container could not be started; 17 a kubelet uses the \
runtime; 130 interrupted.`

  static override examples = [
    example('Restart what should run again in one pod', 'web'),
    example('Every pod of a namespace', '--all -n ci'),
    example('Apply a changed manifest (only changed containers are recreated)', '-f pod.yaml'),
    example('Show what -f would do', '-f pod.yaml --dry-run'),
    example('Supervise pods until Ctrl-C', '--all -n ci --watch'),
    example('Supervise beside a kubelet that is about to be stopped', '--all -n ci --watch --force'),
    example('Supervise and serve Prometheus metrics on loopback', '--all --watch --metrics-address 127.0.0.1:9100'),
  ]

  static override strict = false

  static override args = {
    pod: Args.string({description: 'Pod name (in --namespace), name_namespace, or sandbox ID prefix; several may be given.'}),
  }

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Namespace of the named pods; with --all or --label, only pods of this namespace.'}),
    label: Flags.string({char: 'l', summary: 'Sync pods with this label KEY=VALUE (repeatable; all must match).', multiple: true}),
    all: Flags.boolean({summary: 'Sync every pod podctl made (restricted by --namespace when given).'}),
    filename: Flags.string({char: 'f', summary: 'Apply this changed Pod manifest to the pods it names.', helpValue: 'FILE|-'}),
    'dry-run': Flags.boolean({summary: 'With -f: show what changed and what sync would do; change nothing.'}),
    watch: Flags.boolean({char: 'w', summary: 'Keep syncing (and probing) until Ctrl-C.'}),
    'metrics-address': metricsAddressFlag,
    timeout: durationFlag({
      summary: 'Deadline of one pass (0 = none).',
      default: DEFAULT_SYNC_TIMEOUT_MS,
      defaultHelp: async () => '5m',
      helpValue: 'DURATION',
    }),
    parallel: Flags.integer({
      summary: 'Pods synced at once, and image pulls in flight at once; with --watch only the pulls (every pod syncs on its own).',
      default: 4,
      min: 1,
      helpValue: 'N',
    }),
    'pod-logs-root': podLogsRootFlag,
    'pod-dir-root': podDirRootFlag,
    quiet: Flags.boolean({char: 'q', summary: 'No event timeline; only the result (or the error).'}),
    force: besideKubeletFlag,
    output: outputFlag(['table', 'json', 'yaml']),
  }

  protected override callTimeoutMs(): number | undefined {
    return undefined
  }

  protected override commandDeadline(): number | undefined {
    const timeout = this.flags.timeout ?? DEFAULT_SYNC_TIMEOUT_MS
    return timeout > 0 && !this.flags.watch ? this.startedAt + timeout : undefined
  }

  public async run(): Promise<SyncResult> {
    const {flags} = this
    const {refuseWithoutSupervisor} = await import('../lib/kubelet/workers/metrics-endpoint.js')
    refuseWithoutSupervisor(flags['metrics-address'], {needs: '--watch', given: flags.watch})
    const check = {force: flags.force, instead: KUBELET_WAY, warn: (line: string) => this.warnLine(line)}
    const runtimeOwner = flags.filename && flags['dry-run'] ? undefined : await refuseBesideKubelet(await this.client(), check)
    const settings = await this.settings()
    const events = flags.quiet ? discardEvents : this.printEvents(TIMELINE, this.machineOutput() ? 'stderr' : 'stdout')
    const interruption = this.interruptSignal({
      notice: 'Interrupted: finishing the step in flight',
      exitAgain: 'Interrupted again: exiting',
    })
    try {
      const {ImageManager} = await import('../lib/images/image-manager.js')
      const deps = {
        client: await this.client(),
        images: new ImageManager(() => this.client(), events, {parallel: flags.parallel}),
        events,
        signal: interruption.signal,
        parallel: flags.parallel,
      }
      const result = flags.filename
        ? await this.apply(flags.filename, settings, deps)
        : await this.syncSelected(settings, deps, runtimeOwner)
      await this.emit(result, () => this.render(result))
      this.reportFailures(result.pods.flatMap((pod) => ('failure' in pod && pod.failure ? [failureOf(pod)] : [])))
      return result
    } finally {
      interruption.release()
    }
  }

  private async settings(): Promise<SyncSettings> {
    const {flags} = this
    return {
      ...(await nodeSettings({logsRoot: flags['pod-logs-root'], podDirRoot: flags['pod-dir-root']})),
      deadline: this.commandDeadline(),
    }
  }

  private async syncSelected(settings: SyncSettings, deps: SyncDeps, runtimeOwner?: RuntimeOwner): Promise<SyncResult> {
    const {flags} = this
    const selection = {refs: this.positional, namespace: flags.namespace, labels: parseLabelSelector(flags.label), all: flags.all}
    const client = await this.client()
    const {pods, failures, containers} = await selectPodsFromRuntime(client, selection)
    const {syncPods, removeGonePods, ownSelection} = await import('../lib/kubelet/workers/sync-pods.js')
    if (flags.watch) {
      const {superviseSelection} = await import('../lib/kubelet/workers/supervisor.js')
      const select = () => selectPodsFromRuntime(client, selection).then((found) => found.pods)
      const own = ownSelection(select, {podDirRoot: settings.podDirRoot, runtime: client.runtimeEndpoint, events: deps.events})
      const endpoint = await this.metricsEndpoint()
      await superviseSelection(own, settings, {...deps, runtimeOwner, metrics: endpoint?.metrics}).finally(() => endpoint?.close())
      return {pods: [], removed: []}
    }

    const results = await syncPods(pods, settings, {...deps, containers})
    const gone = this.positional.length > 0 ? [] : await removeGonePods(client, settings, (pod) => matchesNamespace(pod, flags.namespace))
    this.reportFailures(failures.map(({error}) => error))
    return {pods: results, removed: gone.map((pod) => pod.fullName)}
  }

  /** --metrics-address: listening before supervision starts, so a busy port is an error at once. */
  private async metricsEndpoint() {
    const {serveSupervisorMetrics} = await import('../lib/kubelet/workers/metrics-endpoint.js')
    const say = {warn: (line: string) => this.warnLine(line), note: (line: string) => this.stderrLine(line)}
    return serveSupervisorMetrics(this.flags['metrics-address'], {needs: '--watch', given: this.flags.watch, ...say})
  }

  private async apply(file: string, settings: SyncSettings, deps: SyncDeps): Promise<SyncResult> {
    const [{loadPodManifest}, {planApply, applyPod}, {sandboxesByFullName}] = await Promise.all([
      import('../lib/manifest/load.js'),
      import('../lib/kubelet/kuberuntime/sync-apply.js'),
      import('../lib/kubelet/run/run-pods.js'),
    ])
    const pods = await loadPodManifest(file)
    const existing = await sandboxesByFullName(deps.client, pods)
    const results: SyncResult['pods'] = []
    for (const pod of pods) {
      const sandboxes = existing.get(`${pod.name}_${pod.namespace}`) ?? []
      if (this.flags['dry-run']) results.push(await planApply(deps.client, pod, sandboxes, settings))
      else results.push(await applyPod(pod, sandboxes, settings, deps))
    }

    return {pods: results, removed: []}
  }

  private render(result: SyncResult): string {
    const {chalk} = this
    const lines = result.pods.map((pod) => {
      const name = chalk.bold(`${pod.pod}_${pod.namespace}`)
      const changes = 'changes' in pod ? [...pod.changes.sandbox.map((key) => `sandbox: ${key} changed`), ...pod.changes.containers] : []
      const done = 'steps' in pod ? pod.steps.map((step) => `would ${step}`) : pod.did
      const body = [...changes.map((line) => `  changed: ${line}`), ...done.map((line) => `  ${line}`)]
      return body.length === 0 ? `${name}: in sync` : `${name}:\n${body.join('\n')}`
    })
    for (const pod of result.removed) lines.push(`${chalk.bold(pod)}: gone from the runtime; removed its pod and log directories`)
    if (this.flags.watch) return 'Stopped watching; the pods keep running'
    return lines.join('\n') || 'no pods to sync'
  }
}

type SyncDeps = {
  client: Awaited<ReturnType<Sync['client']>>
  images: import('../lib/kubelet/kuberuntime/container.js').ImageEnsurer
  events: EventSink
  signal: AbortSignal
  parallel: number
}

function matchesNamespace(pod: {namespace: string}, namespace: string | undefined): boolean {
  return namespace === undefined || namespace === pod.namespace
}

function failureOf(pod: PodSyncResult): PodctlError {
  const failure = pod.failure!
  return new PodctlError(failure.code, failure.exitCode, `pod ${pod.pod}_${pod.namespace}: ${failure.message}`)
}
