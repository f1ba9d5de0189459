/**
 * pkg/probe/exec through CRI ExecSync (the kubelet's RunInContainer): the command's stdout then
 * stderr, at most 10 KiB, is the output; exit 0 is success, any other exit a failure; a timeout
 * (the runtime's or the call's DeadlineExceeded) is a failure "command ... timed out"; any other
 * error leaves the result unknown. With `slots`, at most that many run at once (see EXEC_PROBES_IN_FLIGHT).
 */
import type {CriClient} from '../cri/client.js'
import {DeadlineExceededError} from '../errors.js'
import type {Limiter} from '../util/concurrency.js'
import {MAX_OUTPUT_BYTES, type ProbeOutcome} from './types.js'

export interface ExecProbeOptions {
  timeoutSeconds: number
  signal?: AbortSignal
  /** Shared by every exec probe of a supervisor: the call waits for a slot, and its timeout starts then. */
  slots?: Limiter
}

export async function execProbe(
  client: CriClient,
  containerId: string,
  command: string[],
  options: ExecProbeOptions,
): Promise<ProbeOutcome> {
  if (options.slots) {
    const {slots, ...unbounded} = options
    try {
      return await slots.run(() => execProbe(client, containerId, command, unbounded), options.signal)
    } catch (error) {
      return {status: 'unknown', output: '', error: error as Error}
    }
  }

  const started = performance.now()
  try {
    const response = await client.runtime(
      'execSync',
      {containerId, cmd: command, timeout: String(options.timeoutSeconds)},
      // The runtime's own timeout ends the command; the call outlives it by the usual deadline (the kubelet adds its 2 m).
      {timeoutMs: client.deadlineFor('execSync') + options.timeoutSeconds * 1000, signal: options.signal},
    )
    const output = Buffer.concat([Buffer.from(response.stdout ?? []), Buffer.from(response.stderr ?? [])])
      .subarray(0, MAX_OUTPUT_BYTES)
      .toString('utf8')
    return {status: response.exitCode === 0 ? 'success' : 'failure', output, exitCode: response.exitCode}
  } catch (error) {
    // Only the probe's own timeout is a failure; a call cut short sooner (podctl's --timeout) tells nothing.
    const timedOut = error instanceof DeadlineExceededError && performance.now() - started >= options.timeoutSeconds * 1000 - 50
    if (timedOut) return {status: 'failure', output: `command ${JSON.stringify(command.join(' '))} timed out`}
    return {status: 'unknown', output: '', error: error as Error}
  }
}
