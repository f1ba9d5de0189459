/**
 * `podctl run`: a Pod manifest (or crictl's config pair) → validated pods (manifest/) → the
 * kubelet's SyncPod for each (kubelet/sync-pod.ts), with live events, a spinner, Ctrl-C rollback
 * and a table of what runs. The command only wires flags to those and renders the result.
 */
import {existsSync} from 'node:fs'

import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {InterruptedError} from '../lib/errors.js'
import {
  admissionFlags,
  besideKubeletFlag,
  claimsRootFlag,
  crictlConfigFlags,
  durationFlag,
  outputFlag,
  podDirRootFlag,
  podLogsRootFlag,
  pullRetriesFlag,
  registryCredentialFlags,
  runInputFlags,
  settleFlag,
  staticPodFlags,
} from '../lib/flags.js'
import {spinnerSteps} from '../lib/images/progress-view.js'
import {discardEvents} from '../lib/kube/events.js'
import {metricsAddressFlag} from '../lib/metrics/flag.js'
import {podFullName} from '../lib/kube/helpers.js'
import {nodeSettings} from '../lib/kubelet/core/node-settings.js'
import {DEFAULT_RUN_PARALLEL, DEFAULT_RUN_TIMEOUT_MS} from '../lib/kubelet/run/run-defaults.js'
import {describeFailure, type DryRunResult, type RunResult} from '../lib/kubelet/run/run-result.js'
import type {SyncSettings} from '../lib/kubelet/kuberuntime/sync-pod.js'
import type {PlanSettings} from '../lib/kubelet/run/run-plan.js'
import type {PodRunResult, PodRunSettings} from '../lib/kubelet/run/run-pod.js'
import {refuseBesideKubelet, type RuntimeOwner} from '../lib/local-kubelet/runtime-owner.js'
import type {StaticRunResult} from '../lib/local-kubelet/static-pods.js'
import type {PodModel} from '../lib/manifest/model.js'
import {podTimeline} from '../lib/output/events.js'
import {renderRunTable} from '../lib/output/run-table.js'

export default class Run extends BaseCommand<typeof Run> {
  static override summary = 'Run pods from a Kubernetes Pod manifest (or crictl configs) the way the kubelet starts them.'

  static override description = `Reads v1 Pod manifests (YAML or JSON; several documents run several pods, --parallel at once) or \
crictl's --pod-config/--container-config pair and checks every field up front: fields podctl cannot honour are refused all at once with \
their paths and why (exit 2); scheduling fields and read-back metadata, which have no effect on one node, are listed in one warning \
(--strict refuses them). Then the kubelet's steps: admission (requests beyond the node's CPU or memory are OutOfcpu/OutOfmemory, exit 14, \
unless --skip-admission), RunPodSandbox (runtimeClassName is the handler), init containers in order to completion, then each app \
container (ensure image, CreateContainer, StartContainer, postStart hook). Labels, annotations, log paths, resources, security contexts \
and namespaces are the kubelet's. Events print live, like kubectl describe (on stderr with -o json|yaml, none with --quiet).

Waiting: --wait running (default) returns once every app container runs (exit 0) or one fails; a container that exits is restarted per \
restartPolicy with the kubelet's crash back-off (10s doubling to 5m) until --timeout. --wait ready also waits until each is ready by its \
readiness probe (started, if it has none), probed in-process; on --timeout (exit 4) it names the containers not ready and each probe's \
last output. --wait completed waits until every app container has exited and exits with the first failing container's exit code (0 when \
all succeed); only OnFailure restarts failed ones there. --wait none returns right after the start. --rm removes the pod after it \
completed (implies --wait completed). After the last start, --wait running watches for --settle (default 1s) and reports a container \
that dies in it. --supervise instead hands the pods over once their containers started, keeps them synced and probed (sync --watch) \
until Ctrl-C and kills them; a container that dies at start is restarted with the crash back-off (CrashLoopBackOff), not rolled back.

Failures and Ctrl-C/SIGTERM roll the pod back (preStop hooks, stop, remove) unless --keep-on-failure; a second Ctrl-C exits at once. A \
pod that already exists is refused (exit 8) unless --replace (new sandbox, attempt + 1). Beside a kubelet (exit 17), --static writes \
each pod into its static pod directory (or --static-dir) and the kubelet runs it as NAME-<node>.

--timeout is the deadline of the whole run (default 5m, 0 for none); with --supervise it bounds the start, not the supervision, where \
every pod syncs on its own and --parallel bounds only the pulls. A pull the registry refuses (not found, unauthorized) fails at once \
in its words (exit 10, 13) unless --pull-retries N or --supervise; one that cannot reach the registry is retried on the back-off. \
--dry-run prints the CRI requests (credentials and Secret values redacted), the admission verdict and the ignored fields, and makes no \
runtime call: as YAML with each pod's sandbox config once (the calls that resend it refer to it) and default fields left out, or with \
-o json|yaml every request whole. ConfigMaps and Secrets in the input feed env, envFrom, volumes and imagePullSecrets; workloads run \
the pods their controllers make (spec.replicas or --replicas N; StatefulSet pods in order, each once the one before is ready). Claims \
(PersistentVolumeClaim documents, claim volumes, volumeClaimTemplates) are directories under --claims-root/<namespace>/<claim>, kept \
across kill and run. Volumes, the managed /etc/hosts and termination files live under --pod-dir-root/<uid>.

Exit codes: 0 ok; 2 invalid input; 8 pod exists; 10-13 image errors; 14 the pod failed or was not admitted (OutOfcpu, OutOfmemory, \
CreateContainerConfigError, RunContainerError, PostStartHookError, CrashLoopBackOff, Init:Error, ...); 4 --timeout ran out; 130 \
interrupted; with --wait completed, the container's own exit code.`

  static override examples = [
    example('Run a pod and return once its containers run', '-f pod.yaml'),
    example("A CI smoke check: run to completion, exit with the container's code, remove the pod", '-f smoke.yaml --rm'),
    {
      description: 'Several pods from one multi-document manifest on stdin',
      command: 'cat pods.yaml | <%= config.bin %> <%= command.id %> -f -',
    },
    example('Restart a pod that already runs (new sandbox, attempt + 1)', '-f pod.yaml --replace'),
    example('See the CRI requests without creating anything', '-f pod.yaml --dry-run -o json'),
    example("crictl's config files", '--pod-config pod-config.json --container-config container-config.json'),
    example('IDs and status for a script', '-f pod.yaml -o json --quiet'),
    example('Three replicas of every Deployment and StatefulSet in a project file', '-f deploy.yaml --replicas 3'),
    example('On a node with a kubelet: hand the pod to it as a static pod', '-f pod.yaml --static'),
    example('Beside a kubelet that is about to be stopped: run anyway', '-f pod.yaml --force'),
    example('A registry that gets the tag a little later: ask again, twice, on the back-off', '-f pod.yaml --pull-retries 2'),
  ]

  static override args = {
    // The manifest may come on stdin (-f -); oclif must not take stdin as the argument itself.
    file: Args.string({description: 'Pod manifest (YAML or JSON), or - for stdin; same as -f.', ignoreStdin: true}),
  }

  static override flags = {
    ...runInputFlags,
    ...crictlConfigFlags,
    wait: Flags.option({
      options: ['running', 'ready', 'completed', 'none'] as const,
      summary: 'Return when the app containers run, are ready by their probes, have all exited, or at once (running|ready|completed|none).',
      defaultHelp: async () => 'running (completed with --rm)',
    })(),
    rm: Flags.boolean({summary: 'Remove the pod once it has completed (implies --wait completed).'}),
    settle: settleFlag,
    supervise: Flags.boolean({summary: 'Then keep the pods synced and probed (sync --watch) until Ctrl-C, and kill them.'}),
    'metrics-address': metricsAddressFlag,
    timeout: durationFlag({
      summary: 'Deadline of the whole run: image back-off, init containers, waiting (0 = none); --supervise outlasts it.',
      default: DEFAULT_RUN_TIMEOUT_MS,
      defaultHelp: async () => '5m',
      helpValue: 'DURATION',
    }),
    replace: Flags.boolean({summary: "Kill a pod of the same name first (attempt + 1); a workload's older-template pods after."}),
    'keep-on-failure': Flags.boolean({summary: 'Leave a failed pod as it is (no rollback), for debugging.'}),
    'dry-run': Flags.boolean({summary: 'Print the CRI requests that would be sent (credentials redacted); create nothing.'}),
    force: besideKubeletFlag,
    ...staticPodFlags('Hand the pods to the kubelet that uses this runtime (files in its static pod directory); start nothing.'),
    ...registryCredentialFlags,
    'pull-retries': pullRetriesFlag,
    parallel: Flags.integer({summary: 'Pods started at once, and image pulls in flight at once.', default: DEFAULT_RUN_PARALLEL, min: 1}),
    namespace: Flags.string({char: 'n', summary: 'Namespace of pods whose manifest names none (a different one is refused).'}),
    ...admissionFlags,
    'pod-logs-root': podLogsRootFlag,
    'pod-dir-root': podDirRootFlag,
    'claims-root': claimsRootFlag,
    'runtime-handler': Flags.string({summary: 'Runtime handler for RunPodSandbox (overrides runtimeClassName).', helpValue: 'NAME'}),
    quiet: Flags.boolean({char: 'q', summary: 'No event timeline and no spinner; only the result (or the error).'}),
    output: outputFlag(['table', 'json', 'yaml']),
  }

  /** Whether a kubelet (other than one --force went past) owns the runtime: --supervise pauses while one does. */
  private runtimeOwner?: RuntimeOwner
  /** --metrics-address: where --supervise reports; it listens before any pod starts, so a busy port fails the run at once. */
  private metrics?: import('../lib/kubelet/workers/supervisor-metrics.js').SupervisorMetrics

  protected override credentialFollower = {
    accepts: (token: string) => token === '-' || existsSync(token),
    description: 'an existing manifest file',
  }

  /** --timeout is the deadline of the whole run here; each runtime call keeps the client's default. */
  protected override callTimeoutMs(): number | undefined {
    return undefined
  }

  protected override commandDeadline(): number | undefined {
    const timeout = this.flags.timeout ?? DEFAULT_RUN_TIMEOUT_MS
    return timeout > 0 ? this.startedAt + timeout : undefined
  }

  public async run(): Promise<RunResult | DryRunResult | StaticRunResult> {
    const {flags} = this
    if (flags.static) return this.handToKubelet()
    const wait = (await import('../lib/kubelet/run/run-pods.js')).runWaitMode(flags.wait, flags.rm)
    const pods = await this.loadPods()
    const {credentialsFromFlags} = await import('../lib/images/credentials.js')
    const credential = await credentialsFromFlags({creds: flags.creds, auth: flags.auth})
    // What every pod of the run shares: where its directories go, and what the node looks like.
    const {'pod-logs-root': logsRoot, 'pod-dir-root': podDirRoot, 'runtime-handler': runtimeHandler, settle: settleMs} = flags
    const node = await nodeSettings({logsRoot, podDirRoot, runtimeHandler, settleMs, skipAdmission: flags['skip-admission']})
    if (flags['dry-run']) return this.dryRun(pods, {...node, auth: credential?.auth})
    this.runtimeOwner = await refuseBesideKubelet(await this.client(), {force: flags.force, warn: (line) => this.warnLine(line)})
    const settings = {...node, wait, replace: flags.replace, keepOnFailure: flags['keep-on-failure'], remove: flags.rm}
    const {serveSupervisorMetrics} = await import('../lib/kubelet/supervisor/metrics-endpoint.js')
    const say = {warn: (line: string) => this.warnLine(line), note: (line: string) => this.stderrLine(line)}
    this.metrics = (await serveSupervisorMetrics(flags['metrics-address'], {needs: '--supervise', given: flags.supervise, ...say}))?.metrics
    const {outcomes, interrupted} = await this.startPods(pods, {...settings, auth: credential?.auth, authSource: credential?.source})
    const result: RunResult = {pods: outcomes.map((outcome) => outcome.result)}
    await this.emit(result, () => renderRunTable(result.pods, this.chalk))
    const failures = outcomes.flatMap((outcome) => (outcome.failure ? [describeFailure(outcome)] : []))
    this.reportFailures(failures, (failure) => !(failure instanceof InterruptedError))
    if (flags.supervise && failures.length === 0 && !interrupted) await this.supervise(pods, result.pods, node)
    if (interrupted) {
      const rolledBack = outcomes.some((outcome) => outcome.result.rolledBack)
      throw new InterruptedError(`run interrupted${rolledBack ? '; the pods it was starting were rolled back' : ''}`)
    }

    const code = outcomes.map((outcome) => outcome.result.exitCode).find((exit) => exit !== null && exit !== 0)
    if (failures.length === 0 && code !== undefined && code !== null) process.exitCode = code
    return result
  }

  /** The pods, their ConfigMaps and Secrets checked; warnings and the workloads pods come from on stderr. */
  private async loadPods(flags = this.flags): Promise<PodModel[]> {
    const {loadPodsToRun} = await import('../lib/kubelet/volumes/pod-objects.js')
    const {pods, warnings, origins} = await loadPodsToRun(flags, this.args.file)
    for (const warning of warnings) this.warnLine(warning)
    if (!flags.quiet) for (const origin of origins) this.stderrLine(origin)
    return pods
  }

  /** Every pod through SyncPod, --parallel at once, with live events, a spinner and Ctrl-C rollback. */
  private async startPods(pods: PodModel[], settings: Omit<PodRunSettings, 'deadline'>) {
    const {flags} = this
    // Events never mix with machine-readable stdout.
    const events = flags.quiet ? discardEvents : this.printEvents(podTimeline(pods), this.machineOutput() ? 'stderr' : 'stdout')
    const only = pods.length === 1 ? podFullName(pods[0].name, pods[0].namespace) : undefined
    const spinner = flags.quiet ? undefined : await this.spinner(only ? `Starting pod ${only}` : `Starting ${pods.length} pods`)
    const interruption = this.interruptSignal({
      notice: 'Interrupted: rolling back (Ctrl-C again to exit at once)',
      exitAgain: 'Interrupted again: exiting without finishing the rollback; check with: podctl pods',
    })
    try {
      const {runPods} = await import('../lib/kubelet/run/run-pods.js')
      const deps = {events, signal: interruption.signal, parallel: flags.parallel, ...spinnerSteps(spinner, !this.machineOutput())}
      const runSettings = {...settings, deadline: this.commandDeadline(), supervised: flags.supervise, pullRetries: flags['pull-retries']}
      const outcomes = await runPods(await this.client(), pods, runSettings, deps)
      // Every pod has its outcome: a Ctrl-C from now on changes neither the result nor the exit code.
      interruption.settle()
      return {outcomes, interrupted: interruption.signal.aborted}
    } finally {
      spinner?.stop()
      interruption.release()
    }
  }

  /** --supervise: sync --watch on the pods just started, until Ctrl-C, then killed; --timeout bounded the start, not its calls. */
  private async supervise(models: readonly PodModel[], pods: PodRunResult[], node: Omit<SyncSettings, 'deadline'>): Promise<void> {
    const interruption = this.interruptSignal({notice: 'Stopping: killing the supervised pods'})
    const to = this.machineOutput() ? 'stderr' : 'stdout'
    const events = this.flags.quiet ? discardEvents : this.printEvents(podTimeline(models, {supervisor: true}), to)
    const {superviseRunPods} = await import('../lib/kubelet/supervisor/run-supervise.js')
    const client = (await this.client()).withoutCommandDeadline()
    const deps = {events, signal: interruption.signal, parallel: this.flags.parallel, runtimeOwner: this.runtimeOwner}
    await superviseRunPods(client, pods, node, {...deps, metrics: this.metrics}).finally(() => interruption.release())
  }

  /** --static: each pod becomes a file in the kubelet's static pod directory (local-kubelet/static-pods.ts); nothing runs here. */
  private async handToKubelet(): Promise<StaticRunResult> {
    const {handToKubelet, describeStaticRun} = await import('../lib/local-kubelet/static-pods.js')
    const endpoint = async () => (await this.client()).runtimeEndpoint
    const result = await handToKubelet(this.flags, this.args.file, {endpoint, warn: (line) => this.warnLine(line)})
    await this.emit(result, () => describeStaticRun(result))
    return result
  }

  private async dryRun(pods: PodModel[], settings: PlanSettings): Promise<DryRunResult> {
    const {result, shown, format} = await (await import('../lib/kubelet/run/dry-run.js')).planDryRun(pods, settings, this.output.kind)
    await this.emit(shown, undefined, {as: {kind: format}})
    return result
  }
}
