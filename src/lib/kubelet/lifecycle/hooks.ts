/**
 * The kubelet's lifecycle.HandlerRunner (pkg/kubelet/lifecycle/handlers.go): exec hooks through one
 * ExecSync runner, httpGet / sleep / tcpSocket from the node (prober/handlers.ts), for both
 * postStart (bounded by the run's deadline) and preStop (bounded by the grace period, the kubelet's
 * executePreStopHook).
 */
import type {CriClient} from '../../cri/client.js'
import {InterruptedError} from '../../errors.js'
import type {Container} from '../../../generated/runtime/v1/api.js'
import {type EventSink, warningEvent} from '../../kube/events.js'
import {podDescription} from '../../kube/helpers.js'
import {containerPortsOf, preStopHandlerOf} from '../../kube/labels.js'
import type {ContainerModel, LifecycleHandler, PodModel} from '../../manifest/model.js'
import {type NodeHandler, runNodeHandler} from '../../prober/handlers.js'

interface ExecHookOptions {
  /** ExecSync's own timeout in seconds; 0: none. */
  timeoutSeconds: number
  /** The call's deadline (ms); undefined: the client's default. */
  callTimeoutMs?: number
  /** Stop waiting after this long even when the runtime has not answered (the call is cancelled). */
  waitAtMostMs?: number
  signal?: AbortSignal
}

type ExecHookOutcome =
  | {status: 'succeeded'}
  | {status: 'exited'; exitCode: number; stdout: Uint8Array; stderr: Uint8Array}
  | {status: 'failed'; error: Error}
  | {status: 'timedOut'}

/** One exec handler through ExecSync. Never throws: every way it can end is an outcome. */
async function runExecHook(client: CriClient, containerId: string, command: string[], options: ExecHookOptions): Promise<ExecHookOutcome> {
  const abort = new AbortController()
  const onParentAbort = () => abort.abort()
  options.signal?.addEventListener('abort', onParentAbort, {once: true})
  let timer: NodeJS.Timeout | undefined
  const request = {containerId, cmd: command, timeout: String(options.timeoutSeconds)}
  const waits: Array<Promise<ExecHookOutcome>> = [
    client.runtime('execSync', request, {signal: abort.signal, timeoutMs: options.callTimeoutMs}).then(
      (response): ExecHookOutcome =>
        response.exitCode === 0
          ? {status: 'succeeded'}
          : {status: 'exited', exitCode: response.exitCode, stdout: response.stdout ?? [], stderr: response.stderr ?? []},
      (error: Error): ExecHookOutcome => ({status: 'failed', error}),
    ),
  ]
  if (options.waitAtMostMs !== undefined) {
    const waitAtMostMs = options.waitAtMostMs
    waits.push(
      new Promise((resolve) => {
        timer = setTimeout(() => resolve({status: 'timedOut'}), waitAtMostMs)
      }),
    )
  }

  try {
    return await Promise.race(waits)
  } finally {
    clearTimeout(timer)
    options.signal?.removeEventListener('abort', onParentAbort)
    // A hook that outlived its wait is cancelled, not left running against the runtime.
    abort.abort()
  }
}

export interface PostStartContext {
  pod: PodModel
  container: ContainerModel
  containerId: string
  /** The pod's IP (first sandbox IP); undefined for host-network pods, which are reached on loopback. */
  podIP?: string
  deadline?: number
  signal?: AbortSignal
  events: EventSink
  /** The event object: name_namespace/container. */
  object: string
}

/** Go's %v of a []string: [a b c]. */
function goList(values: string[]): string {
  return `[${values.join(' ')}]`
}

/**
 * The postStart hook of a started container, any handler; resolves undefined on success, else the
 * kubelet's message ("Exec lifecycle hook ([cmd]) for Container ... failed - error: ..."). An
 * interrupt is thrown.
 */
export async function runPostStart(client: CriClient, handler: LifecycleHandler, context: PostStartContext): Promise<string | undefined> {
  const described = podDescription(context.pod.name, context.pod.namespace, context.pod.uid)
  if ('exec' in handler) {
    const failure = await runPostStartHook(client, context.containerId, handler.exec.command, context)
    if (failure === undefined) return undefined
    const where = `for Container "${context.container.name}" in Pod "${described}"`
    return `Exec lifecycle hook (${goList(handler.exec.command)}) ${where} failed - error: ${failure}`
  }

  const remainingMs = context.deadline === undefined ? 24 * 3_600_000 : Math.max(1000, context.deadline - Date.now())
  const failure = await runNodeHandler(handler, {
    containerName: context.container.name,
    pod: described,
    ports: context.container.ports,
    podIP: async () => context.podIP ?? (context.pod.hostNetwork ? '127.0.0.1' : undefined),
    timeoutMs: remainingMs,
    signal: context.signal,
    onWarning: (reason, message) => context.events(warningEvent(reason, message, context.object)),
  })
  if (context.signal?.aborted) throw new InterruptedError(`interrupted while the postStart hook of ${context.container.name} ran`)
  return failure
}

/**
 * The postStart exec hook; resolves undefined on success, else the failure text ("command 'x'
 * exited with 1: <stderr>", as the kubelet's CRI client words it). An interrupt is thrown.
 */
export async function runPostStartHook(
  client: CriClient,
  containerId: string,
  command: string[],
  options: {deadline?: number; signal?: AbortSignal},
): Promise<string | undefined> {
  // The kubelet gives hooks no timeout of their own; podctl bounds them by the run's deadline.
  const remainingSeconds = options.deadline === undefined ? 0 : Math.max(1, Math.ceil((options.deadline - Date.now()) / 1000))
  const outcome = await runExecHook(client, containerId, command, {
    timeoutSeconds: remainingSeconds,
    callTimeoutMs: remainingSeconds === 0 ? undefined : remainingSeconds * 1000 + 10_000,
    signal: options.signal,
  })
  switch (outcome.status) {
    case 'succeeded':
    case 'timedOut':
      return undefined
    case 'exited': {
      const stderr = Buffer.from(outcome.stderr).toString('utf8').trim().split('\n')[0]?.slice(0, 200) ?? ''
      return `command '${command.join(' ')}' exited with ${outcome.exitCode}: ${stderr}`
    }

    case 'failed':
      if (outcome.error instanceof InterruptedError) throw outcome.error
      return outcome.error.message
  }
}

export interface PreStopOptions {
  graceSeconds: number
  /** The container's name and the event object. */
  name: string
  object: string
  /** The pod as the message names it. */
  pod: string
  events: EventSink
  signal?: AbortSignal
}

/**
 * The kubelet's executePreStopHook for a container being killed: runs its recorded exec handler,
 * waiting at most the grace period; any failure, and a handler podctl cannot run, is a
 * FailedPreStopHook warning, never an error (the kill goes on).
 */
export async function executePreStopHook(client: CriClient, container: Container, options: PreStopOptions): Promise<void> {
  const {name, object, events} = options
  const hook = preStopHandlerOf(container.annotations)
  if (!hook || options.graceSeconds <= 0) return
  if (hook.type === 'unsupported') {
    const message = `PreStop hook (${hook.handler}) of container "${name}" skipped: podctl runs exec, httpGet and sleep hooks`
    events(warningEvent('FailedPreStopHook', message, object))
    return
  }

  if (hook.type === 'node') {
    const failure = await runNodeHandler(hook.handler as NodeHandler, {
      containerName: name,
      pod: options.pod,
      ports: containerPortsOf(container.annotations),
      podIP: () => sandboxIP(client, container.podSandboxId, options.signal),
      timeoutMs: options.graceSeconds * 1000,
      signal: options.signal,
      onWarning: (reason, message) => events(warningEvent(reason, message, object)),
    })
    if (failure) events(warningEvent('FailedPreStopHook', failure, object))
    return
  }

  if (hook.type === 'invalid') {
    events(warningEvent('FailedPreStopHook', `PreStop hook annotation of container "${name}" ignored: ${hook.reason}`, object))
    return
  }

  const outcome = await runExecHook(client, container.id, hook.command, {
    timeoutSeconds: options.graceSeconds,
    // A little over the exec's own timeout so the runtime's answer, not our deadline, ends it.
    callTimeoutMs: options.graceSeconds * 1000 + 5000,
    waitAtMostMs: options.graceSeconds * 1000,
    signal: options.signal,
  })
  const failure = preStopFailure(outcome, options.graceSeconds)
  if (failure) {
    events(
      warningEvent(
        'FailedPreStopHook',
        `Exec lifecycle hook (${JSON.stringify(hook.command)}) for Container "${name}" in Pod "${options.pod}" failed - ${failure}`,
        object,
      ),
    )
  }
}

function preStopFailure(outcome: ExecHookOutcome, graceSeconds: number): string | undefined {
  switch (outcome.status) {
    case 'succeeded':
      return undefined
    case 'exited': {
      const output = Buffer.concat([outcome.stdout, outcome.stderr]).toString('utf8').trim()
      return `error: command exited with ${outcome.exitCode}, message: ${JSON.stringify(output)}`
    }

    case 'failed':
      return `error: ${outcome.error.message}`
    case 'timedOut':
      return `error: hook did not complete within the grace period of ${graceSeconds}s`
  }
}

/**
 * The pod's IP for an httpGet hook without a host (the kubelet's GetPodStatus): the sandbox's
 * address, or loopback for a host-network pod (it listens on the node's addresses).
 */
async function sandboxIP(client: CriClient, podSandboxId: string, signal?: AbortSignal): Promise<string | undefined> {
  try {
    const {status} = await client.runtime('podSandboxStatus', {podSandboxId, verbose: false}, {signal})
    if (status?.network?.ip) return status.network.ip
    return status?.linux?.namespaces?.options?.network === 'NODE' ? '127.0.0.1' : undefined
  } catch {
    return undefined
  }
}
