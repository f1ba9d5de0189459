import type {CriClient} from '../cri/client.js'
import {DeadlineExceededError, ExitCode, formatMs, PodctlError, UsageError} from '../errors.js'
import type {Container} from '../../generated/runtime/v1/api.js'
import {shortId} from '../kube/helpers.js'

/** exec needs a running container; the runtime would refuse anyway, less clearly. */
export class ContainerNotRunningError extends PodctlError {
  constructor(message: string) {
    super('ContainerNotRunning', ExitCode.RUNTIME, message)
  }
}

/** How long podctl waits beyond the command's own timeout for the runtime to answer. */
export const EXEC_DEADLINE_GRACE_MS = 10_000
/** Without --timeout the command may run as long as it needs; the call still has a (generous) deadline. */
export const EXEC_UNBOUNDED_DEADLINE_MS = 24 * 3_600_000

export interface ExecTiming {
  /** ExecSyncRequest.timeout: seconds, 0 = no limit. */
  timeoutSeconds: number
  /** The gRPC deadline: always longer than the command's own timeout, so the runtime reports it. */
  deadlineMs: number
}

/** --timeout (ms) → the command's timeout (whole seconds, rounded up) and the RPC deadline. */
export function execTiming(timeoutMs: number | undefined): ExecTiming {
  if (timeoutMs === undefined || timeoutMs <= 0) return {timeoutSeconds: 0, deadlineMs: EXEC_UNBOUNDED_DEADLINE_MS}
  const timeoutSeconds = Math.ceil(timeoutMs / 1000)
  return {timeoutSeconds, deadlineMs: timeoutSeconds * 1000 + EXEC_DEADLINE_GRACE_MS}
}

export interface ExecOutcome {
  exitCode: number
  stdout: Buffer
  stderr: Buffer
}

/** Runs a command in a running container with ExecSync and returns its exit code and raw output. */
export async function execInContainer(
  client: CriClient,
  container: Container,
  cmd: readonly string[],
  options: {timeoutMs?: number; signal?: AbortSignal} = {},
): Promise<ExecOutcome> {
  if (cmd.length === 0) throw new UsageError('no command given; usage: podctl exec CONTAINER -- CMD [ARG...]')
  const name = container.metadata?.name ?? ''
  const label = `${name ? `${name} ` : ''}(${shortId(container.id)})`
  if (container.state !== 'CONTAINER_RUNNING') {
    const state = container.state.replace(/^CONTAINER_/, '').toLowerCase()
    throw new ContainerNotRunningError(`container ${label} is not running (${state}); exec needs a running container`)
  }

  const timing = execTiming(options.timeoutMs)
  const started = Date.now()
  const timedOut = () =>
    new DeadlineExceededError(
      `command ${JSON.stringify(cmd.join(' '))} in container ${label} did not finish within ${formatMs(timing.timeoutSeconds * 1000)} ` +
        '(--timeout) and was stopped; raise --timeout to give it longer',
    )
  let response
  try {
    response = await client.runtime(
      'execSync',
      {containerId: container.id, cmd: [...cmd], timeout: String(timing.timeoutSeconds)},
      {timeoutMs: timing.deadlineMs, signal: options.signal},
    )
  } catch (error) {
    // containerd answers DEADLINE_EXCEEDED when the command outlives its own timeout (before our longer deadline).
    if (timing.timeoutSeconds > 0 && error instanceof DeadlineExceededError && Date.now() - started < timing.deadlineMs) throw timedOut()
    throw error
  }

  if (timing.timeoutSeconds > 0 && isTimedOutAnswer(response)) throw timedOut()
  return {exitCode: response.exitCode, stdout: Buffer.from(response.stdout), stderr: Buffer.from(response.stderr)}
}

/** conmon's TimedOutMessage: what CRI-O's stderr holds when it stopped the command at its timeout. */
const CONMON_TIMED_OUT = 'command timed out'

/**
 * CRI-O answers a command that outlived its timeout with exit code -1 and conmon's message on stderr
 * (not an error: the kubelet's prober must see a failed probe), where containerd fails the call.
 */
export function isTimedOutAnswer(response: {exitCode: number; stderr: Uint8Array}): boolean {
  return response.exitCode === -1 && Buffer.from(response.stderr).toString('utf8').trim() === CONMON_TIMED_OUT
}
