/**
 * The user's end of a debug container (a debug container in a pod, or the container of a debug
 * pod): with -i, this process's streams attached to its main process (CRI Attach, as `attach -i`);
 * without, its log followed from the first line, so even a command that ends before any attach could
 * be made (`-- ps`) shows all of its output. Either way the session waits for the process to exit and
 * resolves to its exit code; an interrupt (Ctrl-C without a TTY, SIGTERM, SIGHUP) ends it at once.
 */
import type {CriClient} from '../cri/client.js'
import {InterruptedError, RuntimeError} from '../errors.js'
import type {Container} from '../../generated/runtime/v1/api.js'
import {shortId} from '../kube/helpers.js'
import {LogFileReader, type LogOutput, OrderedWriter, showLog} from '../logs/follow.js'
import {containerLiveness} from '../node/container-logs.js'
import {attachInteractive} from '../streaming/runtime-streams.js'
import {sleep} from '../util/concurrency.js'

export interface DebugSessionOptions {
  /** -i: this process's stdin goes to the process (it was created with stdin and stdinOnce). */
  interactive: boolean
  /** -t: it has a terminal. */
  tty: boolean
  signal: AbortSignal
  /** Where a followed log goes; default this process's stdout and stderr. */
  output?: LogOutput
}

/** How often the runtime is asked whether the process has exited once its streams ended. */
const EXIT_POLL_MS = 200

/** Streams the container's process to the user until it exits; resolves to its exit code. */
export async function runDebugSession(client: CriClient, containerId: string, options: DebugSessionOptions): Promise<number> {
  // Interrupted while the container started: no session at all.
  throwIfInterrupted(options.signal)
  const container = await listed(client, containerId)
  // Not (or no longer) running, or not interactive: all it wrote, then what it writes until it exits.
  await (options.interactive && container.state === 'CONTAINER_RUNNING'
    ? attachInteractive(client, container, {stdin: true, tty: options.tty, signal: options.signal})
    : followOutput(client, containerId, options))

  return exitCodeOf(client, containerId, options.signal)
}

async function listed(client: CriClient, containerId: string): Promise<Container> {
  const [container] = (await client.runtime('listContainers', {filter: {id: containerId}})).containers
  if (!container) throw new RuntimeError(`debug container ${shortId(containerId)} is gone: something removed it while it started`)
  return container
}

async function followOutput(client: CriClient, containerId: string, options: DebugSessionOptions): Promise<void> {
  const {status} = await client.runtime('containerStatus', {containerId, verbose: false})
  const logPath = status?.logPath ?? ''
  if (logPath === '') return
  const reader = await LogFileReader.open(logPath)
  const writer = new OrderedWriter(options.output ?? {stdout: process.stdout, stderr: process.stderr})
  try {
    await showLog(reader, writer, {follow: true, isRunning: containerLiveness(client, containerId), signal: options.signal})
  } finally {
    await reader.close()
  }

  throwIfInterrupted(options.signal)
}

/** Waits for the process to exit (an attach ends a moment before the runtime records the exit). */
async function exitCodeOf(client: CriClient, containerId: string, signal: AbortSignal): Promise<number> {
  for (;;) {
    throwIfInterrupted(signal)
    const {status} = await client.runtime('containerStatus', {containerId, verbose: false})
    if (!status) throw new RuntimeError(`debug container ${shortId(containerId)} is gone: something removed it while it ran`)
    if (status.state === 'CONTAINER_EXITED') return status.exitCode
    await sleep(EXIT_POLL_MS, signal)
  }
}

function throwIfInterrupted(signal: AbortSignal): void {
  if (signal.aborted) throw new InterruptedError('debug session interrupted')
}
