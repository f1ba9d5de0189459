import type {CriClient, RuntimeMethod, RuntimeRequest} from '../cri/client.js'
import {
  AmbiguousError,
  DeadlineExceededError,
  ExitCode,
  NotFoundError,
  PodctlError,
  RuntimeError,
  RuntimeUnreachableError,
  StreamingUnavailableError,
  UsageError,
} from '../errors.js'
import type {Container, PodSandbox} from '../../generated/runtime/v1/api.js'
import {shortId} from '../kube/helpers.js'
import {type LocalStreams, type StreamIo, withLocalStreams} from './local.js'
import {runRemoteCommand, type StatusOutcome} from './remote-command.js'
import {type Forwarder, type ForwardOptions, type PortSpec, startPortForward} from './port-forward.js'

/**
 * exec -i/-t, attach and port-forward: ask the runtime for a streaming URL (Exec, Attach,
 * PortForward; each call keeps its deadline), then speak the streaming protocol at that URL for as
 * long as the session lasts. A runtime whose answer is unusable, or whose streaming server cannot
 * be reached, fails with StreamingUnavailable.
 */
export interface SessionOptions {
  stdin: boolean
  tty: boolean
  /** Ctrl-C (without a TTY: with one, Ctrl-C is a key sent to the container). */
  signal?: AbortSignal
  /** Defaults to this process's stdin, stdout and stderr. */
  streams?: LocalStreams
  /** With stdin and tty: the sequence that detaches (detach-keys.ts parseDetachKeys). */
  detachKeys?: Buffer
}

/** exec -i/-t: the command in the container with this process's streams; its exit code is the outcome's. */
export async function execInteractive(
  client: CriClient,
  container: Container,
  cmd: readonly string[],
  options: SessionOptions,
): Promise<StatusOutcome> {
  return withLocalStreams(options, (io) => execStream(client, container, {cmd, stdin: options.stdin, tty: options.tty}, io))
}

/** attach -i/-t: this process's streams on the container's main process. */
export async function attachInteractive(client: CriClient, container: Container, options: SessionOptions): Promise<StatusOutcome> {
  return withLocalStreams(options, (io) => attachStream(client, container, options, io))
}

export async function execStream(
  client: CriClient,
  container: Container,
  exec: {cmd: readonly string[]; stdin: boolean; tty: boolean},
  io: StreamIo,
): Promise<StatusOutcome> {
  requireRunning(container, 'exec')
  if (exec.cmd.length === 0) throw new UsageError('no command given; usage: podctl exec -it CONTAINER -- CMD [ARG...]')
  const url = await streamingUrl(client, 'exec', {
    containerId: container.id,
    cmd: [...exec.cmd],
    stdin: exec.stdin,
    tty: exec.tty,
    stdout: true,
    // A terminal merges stderr into stdout; the server refuses both.
    stderr: !exec.tty,
  })
  return runRemoteCommand(url, {...io, stdin: exec.stdin ? io.stdin : undefined, tty: exec.tty, timeoutMs: client.callTimeoutMs})
}

export async function attachStream(
  client: CriClient,
  container: Container,
  attach: {stdin: boolean; tty: boolean},
  io: StreamIo,
): Promise<StatusOutcome> {
  requireRunning(container, 'attach')
  const url = await streamingUrl(client, 'attach', {
    containerId: container.id,
    stdin: attach.stdin,
    tty: attach.tty,
    stdout: true,
    stderr: !attach.tty,
  })
  return runRemoteCommand(url, {...io, stdin: attach.stdin ? io.stdin : undefined, tty: attach.tty, timeoutMs: client.callTimeoutMs})
}

/** Listens on every address and port and forwards each connection to the pod; resolves once listening. */
export async function portForwardStream(
  client: CriClient,
  sandbox: PodSandbox,
  ports: readonly PortSpec[],
  options: Omit<ForwardOptions, 'timeoutMs'>,
): Promise<Forwarder> {
  if (sandbox.state !== 'SANDBOX_READY') {
    throw new RuntimeError(`pod ${sandboxLabel(sandbox)} is not ready; port-forward needs a running pod`)
  }

  const url = await streamingUrl(client, 'portForward', {podSandboxId: sandbox.id, port: ports.map((p) => p.remotePort)})
  return startPortForward(url, ports, {...options, timeoutMs: client.callTimeoutMs})
}

type StreamMethod = Extract<RuntimeMethod, 'exec' | 'attach' | 'portForward'>

/** The runtime's answer to Exec/Attach/PortForward as a URL podctl can use, or a StreamingUnavailable error. */
export async function streamingUrl<M extends StreamMethod>(client: CriClient, method: M, request: RuntimeRequest<M>): Promise<URL> {
  const rpc = method === 'portForward' ? 'PortForward' : method === 'exec' ? 'Exec' : 'Attach'
  let answer: string
  try {
    answer = ((await client.runtime(method, request)) as {url: string}).url
  } catch (error) {
    if (keepsItsCode(error)) throw error
    throw new StreamingUnavailableError(
      `the runtime at ${client.runtimeEndpoint} cannot stream (${rpc}: ${(error as Error).message}); ` +
        'interactive exec, attach and port-forward need its streaming server',
    )
  }

  return usableUrl(answer, `${rpc} at ${client.runtimeEndpoint}`)
}

/** A URL podctl can open: absolute http(s). The message names what answered and what is wrong. */
export function usableUrl(answer: string, from: string): URL {
  const hint = 'the runtime needs a streaming server (containerd: stream_server_address in its CRI config)'
  if (answer.trim() === '') throw new StreamingUnavailableError(`${from} answered without a streaming URL; ${hint}`)
  let url: URL
  try {
    url = new URL(answer)
  } catch {
    throw new StreamingUnavailableError(`${from} answered an unusable streaming URL ${JSON.stringify(answer)}; ${hint}`)
  }

  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new StreamingUnavailableError(`${from} answered a ${url.protocol.replace(':', '')} URL; podctl streams over http(s) only`)
  }

  return url
}

/** Failures that say something else than "no streaming": the object is gone, the runtime is down or slow. */
function keepsItsCode(error: unknown): boolean {
  return (
    error instanceof NotFoundError ||
    error instanceof AmbiguousError ||
    error instanceof RuntimeUnreachableError ||
    error instanceof DeadlineExceededError ||
    (error as PodctlError).code === 'Interrupted'
  )
}

/** Exec and attach need a running container; the runtime would refuse anyway, less clearly. */
function requireRunning(container: Container, what: string): void {
  if (container.state === 'CONTAINER_RUNNING') return
  const name = container.metadata?.name ? `${container.metadata.name} ` : ''
  const state = container.state.replace(/^CONTAINER_/, '').toLowerCase()
  throw new PodctlError(
    'ContainerNotRunning',
    ExitCode.RUNTIME,
    `container ${name}(${shortId(container.id)}) is not running (${state}); ${what} needs a running container`,
  )
}

function sandboxLabel(sandbox: PodSandbox): string {
  const name = sandbox.metadata ? `${sandbox.metadata.name}_${sandbox.metadata.namespace} ` : ''
  return `${name}(${shortId(sandbox.id)})`
}
