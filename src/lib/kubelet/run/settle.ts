/**
 * `run --wait running`'s settle window: once every app container runs, they are watched for a
 * short while after the last start (--settle, default 1 s), so a container that dies at once
 * (a crash 0.3 s after it started, an OOM kill) fails the run with its exit code and reason —
 * OOMKilled, CrashLoopBackOff (the policy would restart it), or Error — instead of a false success,
 * with the last lines of its log, which show why (`config error: DB_URL unset`).
 */
import {NotFoundError} from '../../errors.js'
import type {ContainerStatus} from '../../../generated/runtime/v1/api.js'
import {sleep} from '../../util/concurrency.js'
import {nanosToMs} from '../../util/time.js'
import {readLogTail} from '../../logs/log-tail.js'
import type {PodWaitContext} from './wait-context.js'
import type {RestartPolicy} from '../../kube/labels.js'
import {policyRestarts} from '../kuberuntime/pod-actions.js'
import {longRunningContainers} from '../kuberuntime/sidecars.js'
import {PodFailedError, PodFailureReason} from '../core/reasons.js'

export const DEFAULT_SETTLE_MS = 1000
const SETTLE_POLL_MS = 100

/** ContainerStatus, or undefined when the container is gone. */
export async function containerStatus(
  ctx: Pick<PodWaitContext, 'client' | 'signal'>,
  containerId: string,
): Promise<ContainerStatus | undefined> {
  try {
    return (await ctx.client.runtime('containerStatus', {containerId, verbose: false}, {signal: ctx.signal})).status
  } catch (error) {
    if (error instanceof NotFoundError) return undefined
    throw error
  }
}

/** The reason a container that died in the window is reported with. */
export function settleReason(status: Pick<ContainerStatus, 'reason' | 'exitCode'>, restartPolicy: RestartPolicy): string {
  if (status.reason === 'OOMKilled') return 'OOMKilled'
  return policyRestarts(restartPolicy, status.exitCode) ? PodFailureReason.CrashLoopBackOff : status.reason || 'Error'
}

/** Watches the newest instance of each sidecar and app container (`ids`, by name) for the settle window. */
export async function settleRunning(ctx: PodWaitContext, ids: ReadonlyMap<string, string | undefined>, settleMs: number): Promise<void> {
  if (settleMs <= 0) return
  const app = longRunningContainers(ctx.pod).map(({container, restartPolicy}) => ({
    name: container.name,
    id: ids.get(container.name),
    restartPolicy,
  }))
  const started = await Promise.all(app.map(async ({id}) => (id ? (await containerStatus(ctx, id))?.startedAt : undefined)))
  const lastStart = Math.max(Date.now() - settleMs, ...started.map((nanos) => (nanos && nanos !== '0' ? nanosToMs(nanos) : 0)))
  const until = Math.min(lastStart + settleMs, ctx.deadline ?? Number.POSITIVE_INFINITY)
  ctx.step(`watching the containers for ${(settleMs / 1000).toFixed(1)} s after the last start`)
  for (;;) {
    const {containers} = await ctx.client.runtime('listContainers', {filter: {podSandboxId: ctx.sandboxId}}, {signal: ctx.signal})
    const exited = new Set(containers.filter((c) => c.state === 'CONTAINER_EXITED').map((c) => c.id))
    for (const {name, id, restartPolicy} of app) {
      if (!id || !exited.has(id)) continue
      const status = await containerStatus(ctx, id)
      const exitCode = status?.exitCode ?? -1
      if (exitCode === 0 && restartPolicy !== 'Always') continue
      const reason = settleReason({reason: status?.reason ?? '', exitCode}, restartPolicy)
      const why = status?.reason && status.reason !== reason ? `${reason}, ${status.reason}` : reason
      const tail = status?.logPath ? await readLogTail(status.logPath) : []
      const lines = tail.length > 0 ? `\n  the last lines of its log:${tail.map((line) => `\n    ${line}`).join('')}` : '; its log is empty'
      throw new PodFailedError(
        `container "${name}" exited with code ${exitCode} (${why}) within ${(settleMs / 1000).toFixed(1)} s of starting${lines}`,
        {
          reason,
          container: name,
          containerId: id,
          logPath: status?.logPath || undefined,
        },
      )
    }

    if (Date.now() >= until) return
    await sleep(Math.min(SETTLE_POLL_MS, Math.max(1, until - Date.now())), ctx.signal)
  }
}
