/**
 * The library's reaper (issue 36), without a container: every pod the library starts carries its
 * session (kube/session.ts: the pid and start time of the test process, and the test runner's
 * worker where one is known), and whoever looks next (the next `connect()` on the node, `podctl gc`,
 * a running supervisor) kills, through the pod workers, the pods whose session is gone. Only pods
 * podctl can prove it made (kube/ownership.ts) and that carry the library's mark are taken; a pod of
 * a session this process cannot judge (another pid namespace) is left alone.
 */
import type {CriClient} from '../../cri/client.js'
import type {PodSandbox} from '../../../generated/runtime/v1/api.js'
import {goneSessionPods, LIBRARY_SESSION_LABEL} from '../../kube/library-session.js'
import {currentSession, sessionAnnotations, sessionLabels} from '../../kube/session.js'
import type {PodModel} from '../../manifest/model.js'
import {podWorkers} from './pod-workers.js'

export {goneSessionPods, LIBRARY_SESSION_LABEL} from '../../kube/library-session.js'

/** The test runner's worker this process is: vitest's pool id, Jest's worker id; '' when neither runs it. */
export function testWorkerId(env: NodeJS.ProcessEnv = process.env): string {
  const vitest = env.VITEST_POOL_ID ?? env.VITEST_WORKER_ID
  if (vitest) return `vitest-${vitest}`
  return env.JEST_WORKER_ID ? `jest-${env.JEST_WORKER_ID}` : ''
}

/** The pods with this process's session on them (labels on their sandboxes), to be reaped once it is gone. */
export function withLibrarySession(pods: readonly PodModel[], env: NodeJS.ProcessEnv = process.env): PodModel[] {
  const worker = testWorkerId(env)
  const session = currentSession(worker ? `podctl library, ${worker}` : 'podctl library')
  const labels = {...sessionLabels(session), [LIBRARY_SESSION_LABEL]: worker}
  const annotations = sessionAnnotations(session)
  return pods.map((pod) => ({...pod, labels: {...pod.labels, ...labels}, annotations: {...pod.annotations, ...annotations}}))
}

export interface ReapOptions {
  podDirRoot: string
  podLogsRoot: string
  /** Who reaps, said with the termination ("the library (connect)", "podctl gc"). */
  requestedBy: string
}

/**
 * Kills one pod whose library session is gone, through its pod worker (its grace period, logs and
 * directories with it): the one way every reaper (connect(), gc, a supervisor's collector) takes a pod.
 */
export async function reapPod(client: CriClient, fullName: string, sandboxes: readonly PodSandbox[], options: ReapOptions): Promise<void> {
  const requestedBy = `${options.requestedBy}: its session is gone`
  await podWorkers.terminate(client, fullName, sandboxes, {...options, requestedBy, forget: true, cleanup: true})
}

/** The kill a garbage collection round (gc/session-gc.ts) makes of a gone session's pod: reapPod, for `options`. */
export function sessionReaper(client: CriClient, options: ReapOptions) {
  return async (fullName: string, sandboxes: readonly PodSandbox[]): Promise<void> => reapPod(client, fullName, sandboxes, options)
}

/** Kills the pods whose library session is gone (their grace period, logs and directories with them); resolves to their names. */
export async function reapGoneSessions(client: CriClient, options: ReapOptions): Promise<string[]> {
  const {items} = await client.runtime('listPodSandbox', {filter: undefined})
  const gone = goneSessionPods(items)
  const kills = [...gone].map(async ([fullName, sandboxes]) => {
    await reapPod(client, fullName, sandboxes, options)
    return fullName
  })
  const outcomes = await Promise.allSettled(kills)
  return outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []))
}
