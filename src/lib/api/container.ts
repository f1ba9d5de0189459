/** A handle on one container of a pod the API ran: exec, logs and status, each asking the runtime afresh. */
import type {Container as CriContainer} from '../../generated/runtime/v1/api.js'
import type {ContainerType} from '../kube/labels.js'
import {NotFoundError} from '../errors.js'
import {type ContainerReport, getPodStatus} from '../kubelet/status/pod-status.js'
import {sandboxesByFullName} from '../kubelet/kuberuntime/sandbox.js'
import {execInContainer} from '../node/exec.js'
import {containerLogTarget} from '../node/container-logs.js'
import {resolveContainer} from '../node/resolve.js'
import type {ApiContext} from './context.js'
import {followLog, type FollowOptions, type LogLine, type LogOptions, readLog} from './logs.js'

export interface ExecOptions {
  /** The command's own time limit (whole seconds, rounded up); the runtime stops it then (DeadlineExceededError). */
  timeoutMs?: number
  signal?: AbortSignal
}

export interface ExecResult {
  exitCode: number
  stdout: string
  stderr: string
}

export class Container {
  /** @internal */
  constructor(
    private readonly context: ApiContext,
    readonly pod: {readonly name: string; readonly namespace: string},
    readonly name: string,
    readonly type: ContainerType,
  ) {}

  /** Runs a command in the container (ExecSync, as `podctl exec` without -i/-t) and returns its exit code and output. */
  async exec(cmd: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    const container = await this.current()
    const outcome = await execInContainer(this.context.client, container, cmd, options)
    return {exitCode: outcome.exitCode, stdout: outcome.stdout.toString('utf8'), stderr: outcome.stderr.toString('utf8')}
  }

  /** The log lines written so far (of the previous attempt with previous: true). */
  async logs(options: LogOptions & {previous?: boolean} = {}): Promise<LogLine[]> {
    const target = await containerLogTarget(this.context.client, await this.current(), {previous: options.previous})
    return readLog(target.path, options)
  }

  /**
   * The log lines as they are written, until the container exits: `for await (const line of container.followLogs())`.
   * @yields each line once it is complete (the last one also when the container exits mid-line)
   */
  async *followLogs(options: FollowOptions = {}): AsyncGenerator<LogLine, void, undefined> {
    const container = await this.current()
    const target = await containerLogTarget(this.context.client, container)
    yield* followLog(this.context.client, {...target, containerId: container.id}, options)
  }

  /** The container as the kubelet's GetPodStatus reports it (state, exit code, reason, restarts as attempt). */
  async status(): Promise<ContainerReport> {
    const {client} = this.context
    const sandboxes = (await sandboxesByFullName(client, [this.pod])).values().next().value ?? []
    if (sandboxes.length === 0) throw this.gone()
    const report = await getPodStatus(client, sandboxes)
    const found = report.containers.find((container) => container.name === this.name)
    if (!found) throw this.gone()
    return found
  }

  /** The newest attempt of the container: a restart makes a new container ID. */
  private async current(): Promise<CriContainer> {
    return resolveContainer(this.context.client, `${this.pod.name}/${this.name}`, {namespace: this.pod.namespace})
  }

  private gone(): NotFoundError {
    return new NotFoundError(`container ${this.name} of pod ${this.pod.namespace}/${this.pod.name} not found: the pod was killed`)
  }
}
