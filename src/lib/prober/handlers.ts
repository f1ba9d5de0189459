/**
 * The kubelet's lifecycle HandlerRunner (pkg/kubelet/lifecycle/handlers.go) for the handlers that
 * run from the node: httpGet (to the pod IP unless a host is given; any answer counts, only a
 * transport error fails; an HTTPS hook answered in plain HTTP is retried over HTTP), sleep, and
 * tcpSocket, which the API server keeps for compatibility and the kubelet refuses to run ("invalid
 * handler"). Exec hooks go through ExecSync in kubelet/hooks.ts.
 */
import type {HttpGetAction, LifecycleHandler} from '../manifest/model.js'
import {httpGet} from './http.js'
import {resolvePort} from './prober.js'
import {KUBE_VERSION} from './types.js'

export interface NodeHookContext {
  containerName: string
  /** The pod as the kubelet's messages name it (format.Pod: name_namespace(uid)). */
  pod: string
  ports: ReadonlyArray<{name?: string; containerPort: number}>
  /** The pod's IP, looked up only when an httpGet hook has no host. */
  podIP: () => Promise<string | undefined>
  /** How long the hook may take: the run's deadline (postStart) or the grace period (preStop). */
  timeoutMs: number
  signal?: AbortSignal
  /** LifecycleHTTPFallback, as the kubelet records it. */
  onWarning?: (reason: string, message: string) => void
}

export type NodeHandler = Exclude<LifecycleHandler, {exec: unknown}>

/** Runs one non-exec handler; resolves undefined on success, else the kubelet's failure message. Never rejects. */
export async function runNodeHandler(handler: NodeHandler, context: NodeHookContext): Promise<string | undefined> {
  const where = `for Container "${context.containerName}" in Pod "${context.pod}"`
  if ('httpGet' in handler) {
    const error = await runHttpHandler(handler.httpGet, context).catch((error_: unknown) => error_ as Error)
    return error ? `HTTP lifecycle hook (${handler.httpGet.path}) ${where} failed - error: ${error.message}` : undefined
  }

  if ('sleep' in handler) {
    const finished = await sleepFor(Math.min(handler.sleep.seconds * 1000, Math.max(0, context.timeoutMs)), context.signal)
    return finished
      ? undefined
      : `Sleep lifecycle hook (${handler.sleep.seconds}) ${where} failed - error: container terminated before sleep hook finished`
  }

  const port = typeof handler.tcpSocket.port === 'number' ? handler.tcpSocket.port : JSON.stringify(handler.tcpSocket.port)
  return `Cannot run handler: invalid handler: tcpSocket (port ${port}) is not supported as a lifecycle handler; use exec, httpGet or sleep`
}

async function runHttpHandler(action: HttpGetAction, context: NodeHookContext): Promise<Error | undefined> {
  const host = action.host || (await context.podIP())
  if (!host) return new Error('failed to find networking container: the pod has no IP address')
  const request = {
    scheme: action.scheme === 'HTTPS' ? ('https' as const) : ('http' as const),
    host,
    port: resolvePort(action.port, context),
    path: action.path,
    headers: action.httpHeaders,
    userAgent: `kube-lifecycle/${KUBE_VERSION.major}.${KUBE_VERSION.minor}`,
    timeoutMs: context.timeoutMs,
    signal: context.signal,
  }
  try {
    // The status code does not matter: any answer is success.
    await httpGet(request)
    return undefined
  } catch (error) {
    if (!(error as {httpResponseToHttps?: boolean}).httpResponseToHttps) return error as Error
    const headers = request.headers.filter((header) => header.name.toLowerCase() !== 'authorization')
    try {
      await httpGet({...request, scheme: 'http', headers})
    } catch {
      return error as Error
    }

    const address = request.host.includes(':') ? `[${request.host}]:${request.port}` : `${request.host}:${request.port}`
    context.onWarning?.('LifecycleHTTPFallback', `request to HTTPS lifecycle hook ${address} got HTTP response, retry with HTTP succeeded`)
    return undefined
  }
}

/** Resolves true after `ms`, false if the signal aborts first. */
function sleepFor(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false)
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer)
      resolve(false)
    }

    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    signal?.addEventListener('abort', onAbort, {once: true})
  })
}
