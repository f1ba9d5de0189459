/**
 * What `run` reports for one pod: the pod as the runtime now holds it (getPodStatus, newest
 * instance of each container in spec order) and, when the run failed, the failure with what the
 * rollback did.
 */
import type {CriClient} from '../../cri/client.js'
import {NotFoundError, type PodctlError} from '../../errors.js'
import type {PodModel} from '../../manifest/model.js'
import {podFullName} from '../../kube/helpers.js'
import type {ContainerType} from '../../kube/labels.js'
import type {PodPhase} from '../status/pod-phase.js'
import {getPodStatus} from '../status/pod-status.js'
import {withMessage} from '../core/reasons.js'
import type {PodSandbox} from '../../../generated/runtime/v1/api.js'
import {podLogDirectory, podSandboxes, type SandboxConfig} from '../kuberuntime/sandbox.js'
import type {PodPlan} from './run-plan.js'

/** What `podctl run` returns (and prints with -o json): every pod it ran. */
export interface RunResult {
  pods: PodRunResult[]
}

/** What `podctl run --dry-run` returns: the plan of each pod, nothing created. */
export interface DryRunResult {
  dryRun: true
  pods: PodPlan[]
}

export interface RunContainerResult {
  name: string
  id: string
  type: ContainerType
  state: string
  exitCode: number | null
  attempt: number
  reason: string
}

export interface PodRunResult {
  pod: string
  namespace: string
  uid: string
  sandboxId: string | null
  attempt: number
  ip: string | null
  containers: RunContainerResult[]
  phase: PodPhase | null
  logDirectory: string
  /** With --wait completed: the first failing app container's exit code (spec order), 0 when all succeeded. */
  exitCode: number | null
  rolledBack: boolean
  removed: boolean
  error: ReturnType<PodctlError['toJSON']> | null
}

export interface PodRunOutcome {
  result: PodRunResult
  failure?: PodctlError
}

/** What the run got to, which is all a result can say before the runtime is asked. */
export interface RunProgress {
  pod: PodModel
  attempt: number
  sandboxId?: string
  ips: readonly string[]
  /** The sandbox this run made, once RunPodSandbox answered: what run sent is what the runtime holds. */
  sandbox?: {id: string; config: SandboxConfig; runtimeHandler: string}
}

export function emptyResult(progress: RunProgress, logsRoot: string): PodRunResult {
  const {pod} = progress
  return {
    pod: pod.name,
    namespace: pod.namespace,
    uid: pod.uid,
    sandboxId: progress.sandboxId ?? null,
    attempt: progress.attempt,
    ip: progress.ips[0] ?? null,
    containers: [],
    phase: null,
    logDirectory: podLogDirectory(pod, logsRoot),
    exitCode: null,
    rolledBack: false,
    removed: false,
    error: null,
  }
}

/** The pod as the runtime now reports it (getPodStatus): newest instance of each container, spec order. */
export async function reportResult(
  client: CriClient,
  progress: RunProgress,
  logsRoot: string,
  exitCode: number | null,
): Promise<PodRunResult> {
  const result = emptyResult(progress, logsRoot)
  result.exitCode = exitCode
  const {pod, sandboxId} = progress
  // The sandbox run made needs no ListPodSandbox to be found again; PodSandboxStatus reads it.
  const sandboxes =
    progress.sandbox?.id === sandboxId && progress.sandbox
      ? [madeSandbox(progress.sandbox)]
      : (await podSandboxes(client, pod)).filter((sandbox) => sandbox.id === sandboxId)
  if (sandboxes.length === 0) return result
  let status
  try {
    status = await getPodStatus(client, sandboxes)
  } catch (error) {
    // Removed since (by another podctl): the result says what run did, with no status.
    if (error instanceof NotFoundError) return result
    throw error
  }

  result.phase = status.phase
  result.ip = status.ip ?? result.ip
  for (const {name} of [...pod.initContainers, ...pod.containers]) {
    const newest = status.containers.find((container) => container.name === name && container.podSandboxId === sandboxId)
    if (!newest) continue
    const {id, type, state, exitCode: code, attempt, reason} = newest
    result.containers.push({name, id, type, state, exitCode: code, attempt, reason})
  }

  return result
}

/** The listing entry of a sandbox run made, from what it sent (getPodStatus reads the state itself). */
function madeSandbox({id, config, runtimeHandler}: NonNullable<RunProgress['sandbox']>): PodSandbox {
  return {
    id,
    metadata: {name: '', uid: '', namespace: '', attempt: 0, ...config.metadata},
    state: 'SANDBOX_READY' as PodSandbox['state'],
    createdAt: '0',
    labels: {...config.labels} as Record<string, string>,
    annotations: {...config.annotations} as Record<string, string>,
    runtimeHandler,
  }
}

/** "pod web_default: PostStartHookError: …", the kubelet's reason first; the failure keeps its class. */
export function describeFailure({failure, result}: {failure?: PodctlError; result: Pick<PodRunResult, 'pod' | 'namespace'>}): PodctlError {
  const {code, message} = failure!
  const prefix = message.startsWith(`${code}:`) ? '' : `${code}: `
  return withMessage(failure!, `pod ${podFullName(result.pod, result.namespace)}: ${prefix}${message}`)
}
