/**
 * The kubelet's prober (pkg/kubelet/prober/prober.go): runs one probe of a container with its
 * handler, retrying up to 3 times when the handler errors, and words the Unhealthy and ProbeWarning
 * events as the kubelet does.
 */
import type {CriClient} from '../cri/client.js'
import type {ContainerModel, PortReference, ProbeModel} from '../manifest/model.js'
import type {Limiter} from '../util/concurrency.js'
import {execProbe} from './exec.js'
import {grpcProbe} from './grpc.js'
import {httpProbe} from './http.js'
import {tcpProbe} from './tcp.js'
import {KUBE_VERSION, type ProbeOutcome} from './types.js'

export type ProbeKind = 'liveness' | 'readiness' | 'startup'

/** "Liveness", as events name the probe. */
export function probeTypeName(kind: ProbeKind): string {
  return kind[0].toUpperCase() + kind.slice(1)
}

const MAX_PROBE_RETRIES = 3

/** probe.ResolveContainerPort: a number as is, a name through the container's ports. */
export function resolvePort(port: PortReference, container: {ports: ReadonlyArray<{name?: string; containerPort: number}>}): number {
  if (typeof port === 'number') return port
  const found = container.ports.find((candidate) => candidate.name === port)
  if (!found) throw new Error(`couldn't find port: ${port} in container ports`)
  return found.containerPort
}

export interface ProbeContext {
  client: CriClient
  container: Pick<ContainerModel, 'ports'>
  containerId: string
  /** The pod's IP: the host of httpGet, tcpSocket (without their own host) and grpc. */
  podIP?: string
  signal?: AbortSignal
  /** Bounds the exec probes in flight (ExecSync); without it each runs at once. */
  execSlots?: Limiter
}

/** runProbe: one attempt with the probe's handler. */
export async function runProbeOnce(probe: ProbeModel, context: ProbeContext): Promise<ProbeOutcome> {
  const handler = probe.handler
  const timeoutMs = probe.timeoutSeconds * 1000
  try {
    if ('exec' in handler) {
      return await execProbe(context.client, context.containerId, handler.exec.command, {
        timeoutSeconds: probe.timeoutSeconds,
        signal: context.signal,
        slots: context.execSlots,
      })
    }

    if ('httpGet' in handler) {
      const action = handler.httpGet
      const host = action.host || requirePodIP(context)
      return await httpProbe({
        scheme: action.scheme === 'HTTPS' ? 'https' : 'http',
        host,
        port: resolvePort(action.port, context.container),
        path: action.path,
        headers: action.httpHeaders,
        userAgent: `kube-probe/${KUBE_VERSION.major}.${KUBE_VERSION.minor}`,
        timeoutMs,
        signal: context.signal,
      })
    }

    if ('tcpSocket' in handler) {
      const host = handler.tcpSocket.host || requirePodIP(context)
      return await tcpProbe(host, resolvePort(handler.tcpSocket.port, context.container), timeoutMs)
    }

    return await grpcProbe(requirePodIP(context), handler.grpc.port, handler.grpc.service, probe.timeoutSeconds)
  } catch (error) {
    return {status: 'unknown', output: '', error: error as Error}
  }
}

function requirePodIP(context: ProbeContext): string {
  if (!context.podIP) throw new Error('the pod has no IP address to probe (host network without a host, or no network yet)')
  return context.podIP
}

/** runProbeWithRetries: an errored attempt is tried again, at most 3 times in all. */
export async function runProbe(probe: ProbeModel, context: ProbeContext): Promise<ProbeOutcome> {
  let outcome: ProbeOutcome = {status: 'unknown', output: ''}
  for (let attempt = 0; attempt < MAX_PROBE_RETRIES; attempt++) {
    if (context.signal?.aborted) break
    outcome = await runProbeOnce(probe, context)
    if (outcome.status !== 'unknown') return outcome
  }

  return outcome
}

/** The event the kubelet records for one probe's outcome (none on success). */
export function probeEvent(kind: ProbeKind, outcome: ProbeOutcome): {type: 'Warning'; reason: string; message: string} | undefined {
  const type = probeTypeName(kind)
  switch (outcome.status) {
    case 'success':
      return undefined
    case 'warning':
      return {type: 'Warning', reason: 'ProbeWarning', message: `${type} probe warning: ${outcome.output}`}
    case 'failure':
      return {type: 'Warning', reason: 'Unhealthy', message: `${type} probe failed: ${outcome.output}`}
    case 'unknown':
      return {type: 'Warning', reason: 'Unhealthy', message: `${type} probe errored: ${outcome.error?.message ?? 'unknown error'}`}
  }
}
