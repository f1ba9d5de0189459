/**
 * `podctl sync`: the kubelet's SyncPod for pods podctl made — one pass (or, with --watch, a
 * supervisor loop) comparing the pod `run` recorded with what runs, and `-f FILE` to apply a
 * changed manifest the kubelet's way. The command wires flags to kubelet/sync-*.ts and renders.
 */
import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {PodctlError} from '../lib/errors.js'
import {besideKubeletFlag, claimsRootFlag, durationFlag, outputFlag, podDirRootFlag, podLogsRootFlag} from '../lib/flags.js'
import {discardEvents, type EventSink} from '../lib/kube/events.js'
import {nodeSettings} from '../lib/kubelet/core/node-settings.js'
import type {PodSyncResult, SyncSettings} from '../lib/kubelet/kuberuntime/sync-pod.js'
import type {ApplyPlan} from '../lib/kubelet/workers/apply-pod.js'
import type {SuperviseDeps, SyncTarget} from '../lib/kubelet/supervisor/supervisor.js'
import {metricsAddressFlag} from '../lib/metrics/flag.js'
import {supervisorGcFlags} from '../lib/kubelet/gc/flags.js'
import {refuseBesideKubelet, type RuntimeOwner} from '../lib/local-kubelet/runtime-owner.js'
import {selectPodsFromRuntime, selectSandboxesFromRuntime} from '../lib/node/select.js'
import {parseLabelSelector} from '../lib/util/filters.js'

export interface SyncResult {
  pods: Array<PodSyncResult | ApplyPlan>
}

const DEFAULT_SYNC_TIMEOUT_MS = 5 * 60_000
/** The way out of KubeletOwnsRuntime besides --force. */
const KUBELET_WAY = 'hand the pods to the kubelet (podctl run --static)'
/** OBJECT fits a typical pod/container (a pass's pods are known only as it goes); --watch, days long, gives each event's TIME. */
const timelineOf = (watch: boolean) => ({kind: 'timeline', objects: ['x'.repeat(32)], clock: watch ? 'time' : 'age'}) as const

export default class Sync extends BaseCommand<typeof Sync> {
  static override summary = "Bring pods podctl made back to what their manifest says, the kubelet's way (SyncPod)."

  static override description = `One SyncPod pass per pod, from the pod \`podctl run\` recorded in the pod directory: exited \
containers are restarted per restartPolicy after the kubelet's crash back-off (10s doubling to 5m, kept in the pod \
directory between runs, reset after 10 minutes of running), a dead sandbox is recreated with attempt + 1, the sandbox of \
a pod whose containers have all terminated for good is stopped, activeDeadlineSeconds is enforced (DeadlineExceeded). \
A pod podctl recorded for this runtime that the runtime lost (a reboot wiped its state, its sandbox was removed behind \
podctl's back) comes back in a new sandbox with attempt + 1, keeping its pod directory: disk emptyDirs and claims keep \
their data (podctl kill is what removes a pod for good). Records of other runtimes sharing the pod directory root are \
left alone. What it does prints as events.

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

--watch -f PATH (files or directories, repeatable) keeps the pods of the manifests as the files say, as the kubelet \
keeps its static pod directory: a new file's pods run within seconds (as podctl run runs them), a changed pod is applied \
as -f applies it, a removed file's pods are killed (also when it went while podctl was not running: each pod's record \
names its file). ConfigMaps, Secrets and PersistentVolumeClaims in files of their own feed the pods of every file of the \
same directory. A file that does not parse or is refused is said once (ManifestInvalid, naming the file and the field) \
and its pods are left as they were until it is fixed; a file still being written is never read; a file or directory \
users other than its owner may write is refused. -n is the namespace of pods that name none; --all, -l or names \
supervise other pods too.

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
    example('Run and keep the pods of a manifest directory as its files change', '--watch -f /etc/podctl/manifests'),
    example('Supervise, collecting dead containers every 5 minutes instead of every minute', '--all --watch --gc-period 5m'),
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
    filename: Flags.string({
      char: 'f',
      summary: 'Apply this changed manifest (repeatable); with --watch, run and keep the pods of these files or directories.',
      helpValue: 'FILE|DIR|-',
      multiple: true,
    }),
    'claims-root': claimsRootFlag,
    'dry-run': Flags.boolean({summary: 'With -f: show what changed and what sync would do; change nothing.', exclusive: ['watch']}),
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
    ...supervisorGcFlags,
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
    const {refuseWithoutSupervisor} = await import('../lib/kubelet/supervisor/metrics-endpoint.js')
    refuseWithoutSupervisor(flags['metrics-address'], {needs: '--watch', given: flags.watch})
    const check = {force: flags.force, instead: KUBELET_WAY, warn: (line: string) => this.warnLine(line)}
    const runtimeOwner = flags.filename && flags['dry-run'] ? undefined : await refuseBesideKubelet(await this.client(), check)
    const settings = await this.settings()
    const events = flags.quiet ? discardEvents : this.printEvents(timelineOf(flags.watch), this.machineOutput() ? 'stderr' : 'stdout')
    const interruption = this.interruptSignal({
      notice: 'Interrupted: finishing the step in flight',
      exitAgain: 'Interrupted again: exiting',
    })
    try {
      const {ImageManager} = await import('../lib/images/image-manager.js')
      const deps = {
        client: await this.client(),
        images: new ImageManager(() => this.client(), events, {parallel: flags.parallel, recordPullsIn: settings.podDirRoot}),
        events,
        signal: interruption.signal,
        parallel: flags.parallel,
      }
      const apply = async (files: string[]) =>
        (await import('../lib/kubelet/workers/apply-manifests.js')).applyManifests(files, settings, deps, {dryRun: flags['dry-run']})
      const result =
        flags.filename && !flags.watch ? {pods: await apply(flags.filename)} : await this.syncSelected(settings, deps, runtimeOwner)
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
    // With -f, the files name the pods; --all, -l or names add other pods to supervise.
    const selected = this.positional.length > 0 || flags.all || (flags.label?.length ?? 0) > 0
    const client = await this.client()
    const [{syncPods, ownSelection}, {withLostPods}] = await Promise.all([
      import('../lib/kubelet/workers/sync-pods.js'),
      import('../lib/kubelet/workers/lost-pods.js'),
    ])
    const lost = {podDirRoot: settings.podDirRoot, runtime: client.runtimeEndpoint, selection}
    const selectWithLost = async () => withLostPods(await selectPodsFromRuntime(client, selection), lost)
    if (flags.watch) {
      const {superviseSelection} = await import('../lib/kubelet/supervisor/supervisor.js')
      const select = async () => (await withLostPods(await selectSandboxesFromRuntime(client, selection), lost)).pods
      const own = ownSelection(select, {podDirRoot: settings.podDirRoot, runtime: client.runtimeEndpoint, events: deps.events})
      const [{serveSupervisorMetrics}, {supervisorGarbage}] = await Promise.all([
        import('../lib/kubelet/supervisor/metrics-endpoint.js'),
        import('../lib/kubelet/supervisor/supervisor-gc.js'),
      ])
      const say = {warn: (line: string) => this.warnLine(line), note: (line: string) => this.stderrLine(line)}
      const endpoint = await serveSupervisorMetrics(flags['metrics-address'], {needs: '--watch', given: true, ...say})
      const garbage = supervisorGarbage(client, flags, settings, deps.events)
      const superviseDeps = {...deps, runtimeOwner, metrics: endpoint?.metrics, garbage}
      const supervising = flags.filename
        ? this.watchFiles(settings, superviseDeps, selected ? own : undefined)
        : superviseSelection(own, settings, superviseDeps)
      await supervising.finally(() => endpoint?.close())
      return {pods: []}
    }

    const {pods, failures, containers} = await selectWithLost()
    const results = await syncPods(pods, settings, {...deps, containers})
    this.reportFailures(failures.map(({error}) => error))
    return {pods: results}
  }

  /** --watch -f: the files' pods run, applied and killed as the files change, and supervised (supervisor/manifest-supervise.ts). */
  private async watchFiles(
    settings: SyncSettings,
    deps: Omit<SuperviseDeps, keyof SyncDeps> & SyncDeps,
    alsoSelect?: () => Promise<SyncTarget[]>,
  ) {
    const {watchManifests} = await import('../lib/kubelet/supervisor/manifest-supervise.js')
    const [paths, reading] = [this.flags.filename ?? [], {namespace: this.flags.namespace, claimsRoot: this.flags['claims-root']}]
    const listPods = async () => (await selectSandboxesFromRuntime(deps.client, {refs: [], all: true})).pods
    await watchManifests({paths, reading, listPods, alsoSelect}, settings, deps)
  }

  private render(result: SyncResult): string {
    const lines = result.pods.map((pod) => {
      const name = this.chalk.bold(`${pod.pod}_${pod.namespace}`)
      const changes = 'changes' in pod ? [...pod.changes.sandbox.map((key) => `sandbox: ${key} changed`), ...pod.changes.containers] : []
      const done = 'steps' in pod ? pod.steps.map((step) => `would ${step}`) : pod.did
      const body = [...changes.map((line) => `  changed: ${line}`), ...done.map((line) => `  ${line}`)]
      return body.length === 0 ? `${name}: in sync` : `${name}:\n${body.join('\n')}`
    })
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

function failureOf(pod: PodSyncResult): PodctlError {
  const failure = pod.failure!
  return new PodctlError(failure.code, failure.exitCode, `pod ${pod.pod}_${pod.namespace}: ${failure.message}`)
}
