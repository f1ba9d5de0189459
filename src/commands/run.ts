import {setMaxListeners} from 'node:events'
import {existsSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import {totalmem} from 'node:os'

import {Args, Flags} from '@oclif/core'

import {BaseCommand, durationFlag, outputFlag, toPodctlError} from '../lib/base-command.js'
import {mapLimit} from '../lib/util/concurrency.js'
import {InterruptedError, PodctlError, UsageError} from '../lib/errors.js'
import type {PodModel} from '../lib/manifest/model.js'
import {makeChalk} from '../lib/output/color.js'
import {truncateId} from '../lib/output/format.js'
import {renderTable} from '../lib/output/table.js'
import {EventTimeline} from '../lib/output/timeline.js'
import type {PodEvent} from '../lib/kube/events.js'
import {podFullName} from '../lib/kube/labels.js'
import type {PodSandbox} from '../generated/runtime/v1/api.js'
import type {PodRunOutcome, PodRunResult, WaitMode} from '../lib/kubelet/sync-pod.js'
import type {PodPlan} from '../lib/kubelet/run-plan.js'

export interface RunResult {
  pods: PodRunResult[]
}

export interface DryRunResult {
  dryRun: true
  pods: PodPlan[]
}

const DEFAULT_RUN_TIMEOUT_MS = 5 * 60_000
const DEFAULT_PARALLEL = 3

export default class Run extends BaseCommand<typeof Run> {
  static override summary = 'Run pods from a Kubernetes Pod manifest (or crictl configs) the way the kubelet starts them.'

  static override description = `Reads a v1 Pod manifest (YAML or JSON; several documents run several pods, at most \
--parallel at once) or crictl's --pod-config/--container-config pair, checks every field up front (unsupported or \
misspelt fields, invalid names and quantities are refused with the field's path and exit 2, before anything is created), \
then does what the kubelet does for a new pod: RunPodSandbox (runtimeClassName is the runtime handler), then each init \
container in order to completion, then each app container (ensure image, CreateContainer, StartContainer, postStart \
hook). Labels, annotations, log paths (<pod logs root>/<namespace>_<name>_<uid>/<container>/<attempt>.log), resources, \
security context and namespaces are the kubelet's, so kubectl-style tools, podctl kill and podctl status read the pod \
like a kubelet pod. Events (Pulling, Pulled, Created, Started, Killing, Failed, BackOff, FailedPostStartHook) print live, \
like kubectl describe; on stderr with -o json|yaml, none with --quiet.

Waiting: --wait running (default) returns once every app container runs (exit 0) or one fails (non-zero with the \
reason); a container that exits is restarted per restartPolicy with the kubelet's crash back-off (10s doubling to 5m) \
until --timeout. --wait completed waits until every app container has exited and exits with the first failing \
container's exit code (0 when all succeed); only restartPolicy OnFailure restarts failed containers there. --wait none \
returns right after the containers started. --rm removes the pod after it completed (it implies --wait completed).

Failures and Ctrl-C/SIGTERM at any step roll the pod back (the kill order of podctl kill: preStop hooks, stop, remove), \
so nothing is left half-created, unless --keep-on-failure. A second Ctrl-C exits at once. A pod that already exists is \
refused (exit 8) unless --replace, which kills it and starts a new sandbox with attempt + 1.

--timeout here is the deadline of the whole run (image back-off, init containers, waiting), default 5m, 0 for none; \
each runtime call then keeps its default deadline. Image pulls of different containers run in parallel (--parallel at \
once), creation and start order stay the kubelet's. --dry-run prints the CRI requests that would be sent (credentials \
redacted) and makes no runtime call. runtimeClassName is used as the handler name as is (there is no RuntimeClass \
object without an API server). The pod's hostPath and emptyDir volumes, managed /etc/hosts and termination-message \
files live under --pod-dir-root/<uid>.

Exit codes: 0 ok; 2 invalid input; 8 pod exists; 10-13 image errors; 14 the pod failed (CreateContainerError, \
RunContainerError, PostStartHookError, CrashLoopBackOff, Init:Error, ...); 4 --timeout ran out; 130 interrupted; with \
--wait completed, the container's own exit code.`

  static override examples = [
    {description: 'Run a pod and return once its containers run', command: '<%= config.bin %> <%= command.id %> -f pod.yaml'},
    {description: 'A CI smoke check: run to completion, exit with the container\'s code, remove the pod', command: '<%= config.bin %> <%= command.id %> -f smoke.yaml --rm'},
    {description: 'Several pods from one multi-document manifest on stdin', command: 'cat pods.yaml | <%= config.bin %> <%= command.id %> -f -'},
    {description: 'Restart a pod that already runs (new sandbox, attempt + 1)', command: '<%= config.bin %> <%= command.id %> -f pod.yaml --replace'},
    {description: 'See the CRI requests without creating anything', command: '<%= config.bin %> <%= command.id %> -f pod.yaml --dry-run -o json'},
    {description: 'crictl\'s config files', command: '<%= config.bin %> <%= command.id %> --pod-config pod-config.json --container-config container-config.json'},
    {description: 'IDs and status for a script', command: '<%= config.bin %> <%= command.id %> -f pod.yaml -o json --quiet'},
  ]

  static override args = {
    // The manifest may come on stdin (-f -); oclif must not take stdin as the argument itself.
    file: Args.string({description: 'Pod manifest (YAML or JSON), or - for stdin; same as -f.', ignoreStdin: true}),
  }

  static override flags = {
    filename: Flags.string({char: 'f', summary: 'Pod manifest (YAML or JSON, one or more documents), or - for stdin.', helpValue: 'FILE|-'}),
    'pod-config': Flags.string({summary: 'crictl pod sandbox config (JSON or YAML, snake_case fields); needs --container-config.', helpValue: 'FILE'}),
    'container-config': Flags.string({summary: 'crictl container config (JSON or YAML); needs --pod-config.', helpValue: 'FILE'}),
    wait: Flags.option({
      options: ['running', 'completed', 'none'] as const,
      summary: 'Return when the app containers run (running), when they have all exited (completed), or right after start (none).',
      defaultHelp: async () => 'running (completed with --rm)',
    })(),
    rm: Flags.boolean({summary: 'Remove the pod once it has completed (implies --wait completed).'}),
    timeout: durationFlag({
      summary: 'Deadline of the whole run: image back-off, init containers, waiting (0 = none).',
      default: DEFAULT_RUN_TIMEOUT_MS,
      defaultHelp: async () => '5m',
      helpValue: 'DURATION',
    }),
    replace: Flags.boolean({summary: 'Kill a pod of the same name first and start a new sandbox with attempt + 1.'}),
    'keep-on-failure': Flags.boolean({summary: 'Leave a failed pod as it is (no rollback), for debugging.'}),
    'dry-run': Flags.boolean({summary: 'Print the CRI requests that would be sent (credentials redacted); create nothing.'}),
    // No oclif `exclusive` with --auth: its error echoes the other flag's value (a secret);
    // credentialsFromFlags refuses the pair without naming values.
    creds: Flags.string({summary: 'Registry credentials USER[:PASSWORD] for the pulls.', helpValue: 'USER[:PASSWORD]'}),
    auth: Flags.string({summary: 'Registry credentials as base64 of USER:PASSWORD.', helpValue: 'BASE64'}),
    parallel: Flags.integer({summary: 'Pods started at once, and image pulls in flight at once.', default: DEFAULT_PARALLEL, min: 1}),
    'pod-logs-root': Flags.string({
      summary: 'Root of the pod log directories.',
      env: 'PODCTL_POD_LOGS_ROOT',
      default: '/var/log/pods',
      helpValue: 'DIR',
    }),
    'pod-dir-root': Flags.string({
      summary: 'Root of the pod directories (emptyDir volumes, /etc/hosts, termination messages).',
      env: 'PODCTL_POD_DIR_ROOT',
      default: '/var/lib/podctl/pods',
      helpValue: 'DIR',
    }),
    'runtime-handler': Flags.string({summary: 'Runtime handler for RunPodSandbox (overrides runtimeClassName).', helpValue: 'NAME'}),
    quiet: Flags.boolean({char: 'q', summary: 'No event timeline and no spinner; only the result (or the error).'}),
    output: outputFlag(['table', 'json', 'yaml'] as const),
  }

  /** --timeout is the run's deadline here; the per-call deadlines keep the client's defaults. */
  private runTimeoutMs = DEFAULT_RUN_TIMEOUT_MS

  public override async init(): Promise<void> {
    // Before oclif parses: a mistyped credential flag must not turn a password into a file name.
    const {checkCredentialArgv} = await import('../lib/images/credentials.js')
    this.parsed = true // as BaseCommand.init does: a refusal here is no forgotten parse
    checkCredentialArgv(this.argv, (token) => token === '-' || existsSync(token), 'an existing manifest file')
    await super.init()
    this.runTimeoutMs = this.flags.timeout ?? DEFAULT_RUN_TIMEOUT_MS
    ;(this.flags as {timeout?: number}).timeout = undefined
  }

  public async run(): Promise<RunResult | DryRunResult> {
    const {flags} = this
    const wait = this.waitMode()
    const pods = await this.loadPods()
    await this.checkImages(pods)
    const {credentialsFromFlags} = await import('../lib/images/credentials.js')
    const credential = await credentialsFromFlags({creds: flags.creds, auth: flags.auth})
    const hostResolvConf = await readFile('/etc/resolv.conf', 'utf8').catch(() => '')
    const common = {
      logsRoot: flags['pod-logs-root'],
      podDirRoot: flags['pod-dir-root'],
      hostResolvConf,
      nodeMemoryBytes: totalmem(),
      runtimeHandler: flags['runtime-handler'],
    }

    if (flags['dry-run']) return this.dryRun(pods, {...common, auth: credential?.auth})

    const machine = this.jsonEnabled() || flags.output === 'json' || flags.output === 'yaml'
    const showEvents = !flags.quiet
    // Events never mix with machine-readable stdout.
    const eventStream = machine ? process.stderr : process.stdout
    const eventChalk = makeChalk(machine ? this.wantsColorOnStderr : this.chalk.level > 0)
    const timeline = new EventTimeline({
      objects: pods.flatMap((pod) => [
        podFullName(pod.name, pod.namespace),
        ...[...pod.initContainers, ...pod.containers].map((c) => `${podFullName(pod.name, pod.namespace)}/${c.name}`),
      ]),
      stripPrefix: pods.length === 1 ? `${podFullName(pods[0].name, pods[0].namespace)}/` : undefined,
      colorWarning: (text) => eventChalk.yellow(text),
    })
    const spinner = showEvents
      ? await this.spinner(pods.length === 1 ? `Starting pod ${podFullName(pods[0].name, pods[0].namespace)}` : `Starting ${pods.length} pods`)
      : undefined
    const printEvent = (event: PodEvent) => {
      if (!showEvents) return
      spinner?.clear()
      eventStream.write(`${timeline.format(event)}\n`)
      spinner?.render()
    }

    const controller = new AbortController()
    // One listener per pod in flight (--parallel may exceed the default warning threshold of 10).
    setMaxListeners(0, controller.signal)
    let interrupts = 0
    // Set once every pod has an outcome: a Ctrl-C after that changes neither the result nor the exit code.
    let settled = false
    const onSignal = () => {
      if (settled) return
      interrupts++
      if (interrupts > 1) {
        spinner?.stop()
        process.stderr.write('Interrupted again: exiting without finishing the rollback; check with: podctl pods\n')
        process.exit(130)
      }

      if (spinner) spinner.text = 'Interrupted: rolling back (Ctrl-C again to exit at once)'
      else process.stderr.write('Interrupted: rolling back (Ctrl-C again to exit at once)\n')
      controller.abort()
    }

    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)

    let outcomes: PodRunOutcome[]
    try {
      const [{ImageManager}, {runPod}] = await Promise.all([import('../lib/images/image-manager.js'), import('../lib/kubelet/sync-pod.js')])
      const images = new ImageManager(() => this.client(), printEvent, {parallel: flags.parallel})
      const client = await this.client()
      const existing = await this.existingSandboxes(pods)
      const deadline = this.runTimeoutMs > 0 ? Date.now() + this.runTimeoutMs : undefined
      outcomes = await mapLimit(pods, flags.parallel, (pod) =>
        runPod(
          pod,
          existing.get(podFullName(pod.name, pod.namespace)) ?? [],
          {
            ...common,
            wait,
            deadline,
            replace: flags.replace,
            keepOnFailure: flags['keep-on-failure'],
            remove: flags.rm,
            auth: credential?.auth,
            authSource: credential?.source,
          },
          {
            client,
            images,
            events: printEvent,
            signal: controller.signal,
            onStep: spinner ? (text) => (spinner.text = text) : undefined,
          },
        ).catch((error: unknown) => this.unexpected(pod, error)),
      )
      settled = true
    } finally {
      spinner?.stop()
      // Once settled the handlers stay (and ignore signals) until exit, so a late Ctrl-C cannot turn exit 0 into 130.
      if (!settled) {
        process.off('SIGINT', onSignal)
        process.off('SIGTERM', onSignal)
      }
    }

    const result: RunResult = {pods: outcomes.map((outcome) => outcome.result)}
    if (machine) await this.emit(flags.output, result, () => '')
    else {
      const table = this.render(result)
      if (table) this.log(table)
    }

    for (const outcome of outcomes) {
      if (outcome.failure && !(outcome.failure instanceof InterruptedError)) this.reportFailure(this.describeFailure(outcome))
    }

    if (controller.signal.aborted) {
      const rolledBack = outcomes.some((outcome) => outcome.result.rolledBack)
      throw new InterruptedError(`run interrupted${rolledBack ? '; the pods it was starting were rolled back' : ''}`)
    }
    const failed = outcomes.find((outcome) => outcome.failure)
    if (failed?.failure) process.exitCode = failed.failure.exitCode
    else {
      const code = outcomes.map((outcome) => outcome.result.exitCode).find((exit) => exit !== null && exit !== 0)
      if (code !== undefined && code !== null) process.exitCode = code
    }

    return result
  }

  private waitMode(): WaitMode {
    const {wait, rm} = this.flags
    if (rm && wait !== undefined && wait !== 'completed') {
      throw new UsageError(`--rm removes the pod after it completed, so it needs --wait completed, not --wait ${wait}`)
    }

    return wait ?? (rm ? 'completed' : 'running')
  }

  private async loadPods(): Promise<PodModel[]> {
    const {flags, args} = this
    const podConfig = flags['pod-config']
    const containerConfig = flags['container-config']
    if (flags.filename !== undefined && args.file !== undefined) {
      throw new UsageError(`give the manifest once: either ${args.file} or -f ${flags.filename}`)
    }

    const manifest = flags.filename ?? args.file
    const load = await import('../lib/manifest/load.js')
    if (podConfig !== undefined || containerConfig !== undefined) {
      if (manifest !== undefined) throw new UsageError('give either a Pod manifest (-f) or crictl configs (--pod-config/--container-config), not both')
      if (podConfig === undefined || containerConfig === undefined) {
        throw new UsageError('crictl configs come in pairs: pass both --pod-config FILE and --container-config FILE')
      }

      return [await load.loadCrictlConfigs(podConfig, containerConfig)]
    }

    if (manifest === undefined) {
      throw new UsageError('no manifest: pass -f pod.yaml (- for stdin), or --pod-config FILE --container-config FILE')
    }

    return load.loadPodManifest(manifest)
  }

  /** Invalid image references are refused before anything is created (InvalidImageName, exit 11). */
  private async checkImages(pods: PodModel[]): Promise<void> {
    const {applyDefaultImageTag} = await import('../lib/images/image-manager.js')
    for (const pod of pods) {
      const crictl = pod.logDirectory !== undefined || pod.attempt !== undefined
      for (const [key, list] of [
        ['initContainers', pod.initContainers],
        ['containers', pod.containers],
      ] as const) {
        for (const [index, container] of list.entries()) {
          try {
            applyDefaultImageTag(container.image)
          } catch (error) {
            const failure = error as PodctlError
            const where = crictl ? 'image.image' : `spec.${key}[${index}].image`
            throw new PodctlError(failure.code, failure.exitCode, `${pod.source}: ${where}: ${failure.message}`)
          }
        }
      }
    }
  }

  /** One ListPodSandbox for all pods: name_namespace → its sandboxes. */
  private async existingSandboxes(pods: PodModel[]): Promise<Map<string, PodSandbox[]>> {
    const wanted = new Set(pods.map((pod) => podFullName(pod.name, pod.namespace)))
    const {items} = await (await this.client()).runtime('listPodSandbox', {})
    const found = new Map<string, PodSandbox[]>()
    for (const sandbox of items) {
      const key = podFullName(sandbox.metadata?.name ?? '', sandbox.metadata?.namespace ?? '')
      if (wanted.has(key)) found.set(key, [...(found.get(key) ?? []), sandbox])
    }

    return found
  }

  private async dryRun(pods: PodModel[], settings: Parameters<typeof import('../lib/kubelet/run-plan.js').planPodRun>[1]): Promise<DryRunResult> {
    const [{planPodRun}, {DockerConfigKeyring}] = await Promise.all([
      import('../lib/kubelet/run-plan.js'),
      import('../lib/images/credentials.js'),
    ])
    const credentials = new DockerConfigKeyring()
    const plans = await Promise.all(pods.map((pod) => planPodRun(pod, {...settings, credentials})))
    const result: DryRunResult = {dryRun: true, pods: plans}
    await this.emit(this.flags.output === 'json' ? 'json' : 'yaml', result, () => '')
    return result
  }

  /** A bug or a failure outside the pod's own steps: reported for that pod, the others go on. */
  private unexpected(pod: PodModel, error: unknown): PodRunOutcome {
    const failure = toPodctlError(error)
    return {
      failure,
      result: {
        pod: pod.name,
        namespace: pod.namespace,
        uid: pod.uid,
        sandboxId: null,
        attempt: 0,
        ip: null,
        containers: [],
        phase: null,
        logDirectory: '',
        exitCode: null,
        rolledBack: false,
        removed: false,
        error: failure.toJSON(),
      },
    }
  }

  private describeFailure(outcome: PodRunOutcome): PodctlError {
    const failure = outcome.failure!
    const {result} = outcome
    const prefix = failure.message.startsWith(`${failure.code}:`) ? '' : `${failure.code}: `
    return new PodctlError(failure.code, failure.exitCode, `pod ${podFullName(result.pod, result.namespace)}: ${prefix}${failure.message}`)
  }

  /** One row per container; the pod's columns only on its first row. Pods that never got a sandbox only have their error line. */
  private render(result: RunResult): string {
    const rows: string[][] = []
    for (const pod of result.pods) {
      if (pod.sandboxId === null) continue
      const podColumns = [
        podFullName(pod.pod, pod.namespace),
        pod.sandboxId && !pod.rolledBack && !pod.removed ? truncateId(pod.sandboxId) : pod.removed ? '(removed)' : pod.rolledBack ? '(rolled back)' : '-',
        String(pod.attempt),
        pod.ip ?? '-',
        this.colorPhase(pod.phase ?? (pod.error ? 'Failed' : '-')),
      ]
      const containers = pod.containers.length > 0 ? pod.containers : [undefined]
      for (const [index, container] of containers.entries()) {
        const first = index === 0
        rows.push([
          ...(first ? podColumns : podColumns.map(() => '')),
          container?.name ?? '-',
          container?.type ?? '',
          container ? this.colorState(container.state) : '',
          container?.exitCode === null || container?.exitCode === undefined ? '' : String(container.exitCode),
          container ? String(container.attempt) : '',
          container ? truncateId(container.id) : '',
        ])
      }
    }

    if (rows.length === 0) return ''
    return renderTable(['POD', 'SANDBOX', 'ATTEMPT', 'IP', 'PHASE', 'CONTAINER', 'TYPE', 'STATE', 'EXIT', 'RESTARTS', 'ID'], rows)
  }

  private colorPhase(phase: string): string {
    const {chalk} = this
    if (phase === 'Running' || phase === 'Succeeded') return chalk.green(phase)
    if (phase === 'Failed') return chalk.red(phase)
    return phase
  }

  private colorState(state: string): string {
    const {chalk} = this
    if (state === 'Running') return chalk.green(state)
    return state
  }
}
