/**
 * `podctl kill`: pods chosen by name, label or --all (node/select.ts), each through its pod worker
 * (workers/kill-pods.ts), several at once; one line per pod, warnings on stderr, every failure reported.
 */
import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {NotFoundError, type PodctlError, UsageError} from '../lib/errors.js'
import {claimsRootFlag, killManifestFlag, outputFlag, podDirRootFlag, podLogsRootFlag, staticPodFlags} from '../lib/flags.js'
import {type ClaimDeletion, claimsOfPods, deleteClaims} from '../lib/kubelet/claims/kill-claims.js'
import {graceNotice, type KillPodOptions, type KillPodResult} from '../lib/kubelet/kuberuntime/kill.js'
import {killPods, userKill} from '../lib/kubelet/workers/kill-pods.js'
import {findGoneRecords, removeGoneRecords} from '../lib/kubelet/records/kill-records.js'
import type {StaticKillResult} from '../lib/local-kubelet/static-pod-files.js'
import {leftAloneNote, nothingSelected, type PodSelection, type SelectedPod, selectPodsFromRuntime} from '../lib/node/select.js'
import {validateSelection} from '../lib/node/select.js'
import {withManifestPods} from '../lib/manifest/manifest-pods.js'
import {parseLabelSelector} from '../lib/util/filters.js'
import {collapseIdentical, type PodFailure, podFailure} from '../lib/output/collapse-failures.js'

export interface KillResult {
  items: KillPodResult[]
  failures: PodFailure[]
  /** --delete-claims: the claims whose data went, and those kept (in use by a running pod). */
  claims?: ClaimDeletion
}

export default class Kill extends BaseCommand<typeof Kill> {
  static override summary = "Stop and remove pods the kubelet's way: preStop hooks, grace period, then the sandbox."

  static override description = `For each pod: every running container in parallel gets a Killing event, its preStop exec hook (from the \
io.kubernetes.container.preStopHandler annotation) within the grace period, then StopContainer with what is left of the grace period \
(never below 2s unless --force). Sidecars (init containers with restartPolicy Always) share that one grace period: each waits for the \
app containers and the sidecars declared after it, then stops with what is left (at least 2s). Then StopPodSandbox for every sandbox \
(attempt) of the pod; then the containers and sandboxes are removed unless --keep, and with them the log directory under --pod-logs-root \
of a pod podctl made. --all, --label and -f choose only pods podctl made (their io.podctl annotations): crictl's, a kubelet's and other \
tools' pods are left alone, named on stderr; name such a pod to kill it. The grace period is --grace-period, else the pod's \
io.kubernetes.pod.terminationGracePeriod annotation, else 30s. Each pod's termination is recorded in its pod directory before the kill \
begins: nothing brings it back meanwhile, and a kill the runtime does not let finish (hung, restarting, this command interrupted) is \
finished by a running supervisor, podctl sync or the next kill. Objects already gone count as done, so killing twice is safe. A pod the \
runtime no longer has (its sandboxes were removed behind podctl's back) but that podctl still records for this runtime loses its record: \
pod.json, which supervisors and sync act on, the rest of its pod directory and its log directory under --pod-logs-root; --all and \
--label remove such records too. Records of other runtimes are never touched. With --keep such a record stays (it is all there is to \
keep) and the pod counts as not found. Pods are killed concurrently (--parallel); one pod's failure never stops the others, and the exit \
code is that of the first failure (5 for a pod that does not exist, unless --ignore-not-found). Claim directories (--claims-root) \
outlive their pods; --delete-claims removes the data of the killed pods' claims, except a claim a running pod still uses. --static NAME \
(or NAME-<node>) instead removes the file run --static wrote into the kubelet's static pod directory, and the kubelet stops the pod; \
files podctl did not write are left alone.`

  static override examples = [
    example('Kill one pod of the default namespace', 'web'),
    example('Kill by full name or sandbox ID prefix', 'web_prod 3f2a9c'),
    example('Kill every pod podctl made in a namespace, 8 at a time', '--all -n ci --parallel 8'),
    example('Kill pods labelled app=web at once, without waiting for the grace period', '-l app=web --force'),
    example('Stop a pod but keep its containers for inspection', 'web --keep --grace-period 5'),
    example('Idempotent cleanup in a script', 'web --ignore-not-found -o json'),
    example("Kill a pod and delete its PersistentVolumeClaims' data", 'db --delete-claims'),
    example('Kill the pods a manifest made (every replica of its workloads), as kubectl delete -f', '-f web.yaml'),
    example('Take back a pod handed to the kubelet with run --static', 'web --static'),
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
    label: Flags.string({char: 'l', summary: 'Kill the pods podctl made labelled KEY=VALUE (repeatable; all must match).', multiple: true}),
    all: Flags.boolean({char: 'a', summary: 'Kill every pod podctl made (restricted by --namespace when given).'}),
    'grace-period': Flags.integer({
      summary: "Seconds each container gets to stop; 0 means --force. Default: the pod's terminationGracePeriod annotation, else 30.",
      min: 0,
      helpValue: 'SECONDS',
    }),
    filename: killManifestFlag,
    force: Flags.boolean({summary: 'Kill at once: no preStop hook, no grace period (StopContainer timeout 0).'}),
    keep: Flags.boolean({summary: 'Leave the stopped containers and sandboxes in place (for debugging) instead of removing them.'}),
    'ignore-not-found': Flags.boolean({summary: 'Treat pods that do not exist as already killed (exit 0).'}),
    parallel: Flags.integer({summary: 'How many pods to kill at the same time.', default: 4, min: 1, helpValue: 'N'}),
    'delete-claims': Flags.boolean({summary: "Also remove the data of the killed pods' claims (not one a running pod uses)."}),
    'pod-dir-root': podDirRootFlag,
    'pod-logs-root': podLogsRootFlag,
    'claims-root': claimsRootFlag,
    output: outputFlag(['table', 'json', 'yaml']),
    ...staticPodFlags('Remove the static pod file run --static wrote for the pod; the kubelet then stops it.'),
  }

  public async run(): Promise<KillResult | StaticKillResult> {
    const {flags, positional: refs} = this
    if (flags.static) return this.killStatic()
    const labels = parseLabelSelector(flags.label)
    // --all, -l and -f choose only pods podctl made; naming another tool's pod kills it.
    const selection = await withManifestPods({refs, namespace: flags.namespace, labels, all: flags.all, onlyPodctl: true}, flags.filename)
    validateSelection(selection)
    const gracePeriod = flags['grace-period']
    if (flags.force && gracePeriod !== undefined && gracePeriod > 0) {
      throw new UsageError(`--force kills at once; it cannot be combined with --grace-period ${gracePeriod} (drop one of them)`)
    }

    if (flags['delete-claims'] && this.keepSandboxes())
      throw new UsageError('--delete-claims removes claims of pods it removes; drop --keep')
    const {pods, failures: found, containers, leftAlone} = await selectPodsFromRuntime(await this.client(), selection)
    if (leftAlone) this.stderrLine(leftAloneNote(leftAlone, this.id ?? 'kill'))
    const {runtimeEndpoint} = await this.client()
    const claims = flags['delete-claims'] ? await claimsOfPods(flags['pod-dir-root'], pods, runtimeEndpoint) : undefined
    const recorded = await this.removeGoneRecords(selection, found)
    const failures: PodFailure[] = recorded.unmatched
      .filter(({error}) => !(error instanceof NotFoundError && flags['ignore-not-found']))
      .map(({ref, error}) => podFailure(ref, error))
    failures.push(...recorded.failures)
    if (pods.length === 0 && refs.length === 0 && !flags.filename && recorded.items.length === 0)
      this.nothingToKill(`${nothingSelected(selection)}; nothing to kill`)

    const force = flags.force || gracePeriod === 0
    const killed = await this.killPods(this.admit(pods, failures), failures, {gracePeriodSeconds: gracePeriod, force, containers})
    const items = [...recorded.items, ...killed]
    const result: KillResult = {items, failures, ...(claims ? {claims: await this.deleteClaims(claims)} : {})}
    if (this.machineOutput()) await this.emit(result)
    this.reportKillFailures(failures)
    return result
  }

  /** --static: the pod's file leaves the kubelet's static pod directory (local-kubelet/static-pod-files.ts); no runtime call here. */
  private async killStatic(): Promise<StaticKillResult> {
    const {removeStaticPods, describeStaticKill} = await import('../lib/local-kubelet/static-pod-files.js')
    const endpoint = async () => (await this.client()).runtimeEndpoint
    const {result, errors} = await removeStaticPods(this.positional, this.flags, {endpoint})
    await this.emit(result, () => describeStaticKill(result))
    this.reportFailures(errors)
    return result
  }

  /** The pods this command goes on to kill; the others are added to `failures` (rmp refuses running pods without --force). */
  protected admit(pods: SelectedPod[], _failures: PodFailure[]): SelectedPod[] {
    return pods
  }

  /** The note when --all or --label selects no pod (rmp and stopp say it crictl's way as crictl). */
  protected nothingToKill(note: string): void {
    this.stderrLine(note)
  }

  protected reportKillFailures(failures: PodFailure[]): void {
    this.reportFailures(collapseIdentical(failures))
  }

  /** Whether the stopped containers and sandboxes stay (--keep; stopp always). */
  protected keepSandboxes(): boolean {
    return this.flags.keep
  }

  /**
   * The records of pods this runtime no longer has that the selection names (references no sandbox
   * matched; with --all or --label, every record it covers): removed, since a killed pod is no
   * longer wanted. With --keep (stopp) they stay, and a reference to one says so.
   */
  private async removeGoneRecords(
    selection: PodSelection,
    found: Array<{ref: string; error: PodctlError}>,
  ): Promise<{items: KillPodResult[]; failures: PodFailure[]; unmatched: Array<{ref: string; error: PodctlError}>}> {
    const notFound = found.filter(({error}) => error instanceof NotFoundError).map(({ref}) => ref)
    const none = {items: [], failures: [], unmatched: found}
    if (selection.refs.length > 0 ? notFound.length === 0 : this.keepSandboxes()) return none
    const client = await this.client()
    const podDirRoot = this.flags['pod-dir-root']
    const gone = await findGoneRecords(client, podDirRoot, {...selection, refs: notFound})
    if (this.keepSandboxes()) {
      // Still not found, but the error says where the pod went and how to drop what is left of it.
      const kept = (pod: string) =>
        new NotFoundError(`pod ${pod} is gone from the runtime; its record stays (podctl kill ${pod} removes it)`)
      const unmatched = found.map((miss) => {
        const pod = gone.matched.get(miss.ref)
        return pod === undefined ? miss : {ref: miss.ref, error: kept(pod)}
      })
      return {...none, unmatched}
    }

    const outcome = await removeGoneRecords(client, gone, {
      podDirRoot,
      logsRoot: this.flags['pod-logs-root'],
      lock: {
        deadline: this.commandDeadline(),
        onWait: (pod, pid) => this.stderrLine(`Another podctl (pid ${pid}) is running pod ${pod}; waiting for it`),
      },
      onKilled: (result) => {
        if (!this.machineOutput()) this.log(this.line(result))
      },
    })
    return {
      items: outcome.items,
      failures: outcome.failures.map(({pod, error}) => podFailure(pod, error)),
      unmatched: found.filter(({ref}) => !gone.matched.has(ref)),
    }
  }

  /** Every pod, --parallel at once, with progress on a terminal; a pod's failure goes to `failures`, the others go on. */
  private async killPods(pods: SelectedPod[], failures: PodFailure[], options: KillPodOptions): Promise<KillPodResult[]> {
    let waiting = '' // Grace periods make kills slow (30 s by default): progress on a terminal, on stderr.
    const progress = (done: number, why = waiting) => `Killing ${pods.length} pod${pods.length === 1 ? '' : 's'} (${done} done)${why}`
    const spinner = pods.length > 0 && !this.jsonEnabled() ? await this.spinner(progress(0)) : undefined
    let done = 0
    const outcome = await killPods(await this.client(), pods, {
      ...options,
      keep: this.keepSandboxes(),
      ...userKill(`podctl ${this.id ?? 'kill'}`, this.commandDeadline(), (pod, pid) =>
        this.aboveSpinner(() => this.stderrLine(`Another podctl (pid ${pid}) is working on pod ${pod}; waiting`)),
      ),
      parallel: this.flags.parallel,
      podDirRoot: this.flags['pod-dir-root'],
      podLogsRoot: this.flags['pod-logs-root'],
      // Killing is implied by the summary line; warnings (failed or skipped preStop hooks) matter.
      events: this.printEvents({kind: 'warnings'}),
      onGracePeriod(grace) {
        if (spinner) spinner.text = progress(done, (waiting = `: ${graceNotice(grace)}`))
      },
      onSettled() {
        if (spinner) spinner.text = progress(++done)
      },
      onKilled: (result) => {
        if (!this.machineOutput()) this.aboveSpinner(() => this.log(this.line(result)))
      },
    }).finally(() => spinner?.stop())
    failures.push(...outcome.failures.map(({pod, error}) => podFailure(pod, error)))
    return outcome.items
  }

  /** --delete-claims after the kill: one line per claim removed, a warning per claim kept. */
  private async deleteClaims(claims: Awaited<ReturnType<typeof claimsOfPods>>): Promise<ClaimDeletion> {
    const settings = {podDirRoot: this.flags['pod-dir-root'], claimsRoot: this.flags['claims-root']}
    const outcome = await deleteClaims(await this.client(), claims, settings)
    for (const {namespace, name, path} of outcome.removed)
      if (!this.machineOutput()) this.log(`claim ${namespace}/${name}: deleted ${path}`)
    for (const {claim, reason} of outcome.kept) this.warnLine(`claim ${claim.namespace}/${claim.name} kept: ${reason}`)
    return outcome
  }

  protected line(result: KillPodResult): string {
    if (result.recordOnly) return `${this.chalk.bold(result.pod)}: gone from the runtime; removed its record`
    const count = `${result.containersStopped} container${result.containersStopped === 1 ? '' : 's'} stopped`
    const fate = result.removed ? 'removed' : this.keepSandboxes() ? 'kept' : 'not removed'
    return `${this.chalk.bold(result.pod)}: ${count}, ${fate} ${this.chalk.dim(`(${(result.durationMs / 1000).toFixed(1)}s)`)}`
  }
}
