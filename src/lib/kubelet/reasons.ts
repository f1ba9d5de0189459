/**
 * Why a pod failed to start or run, in the kubelet's words (pkg/kubelet/container/sync_result.go
 * and kuberuntime's ErrCreateContainerConfig, ErrCreateContainer, ErrPostStartHook): one
 * PodFailedError whose code is the reason, with the PodFailed exit code, and the kill failure
 * that keeps what the kill did.
 */
import {DeadlineExceededError, ExitCode, InterruptedError, PodctlError, RuntimeUnreachableError} from '../errors.js'
import type {KillPodResult} from './kill.js'

export const PodFailureReason = {
  CreatePodSandboxError: 'CreatePodSandboxError',
  CreateContainerConfigError: 'CreateContainerConfigError',
  CreateContainerError: 'CreateContainerError',
  RunContainerError: 'RunContainerError',
  PostStartHookError: 'PostStartHookError',
  CrashLoopBackOff: 'CrashLoopBackOff',
  /** MountVolume.SetUp failed (the kubelet's FailedMount event reason). */
  FailedMount: 'FailedMount',
  /** A container podctl waits for vanished from the runtime. */
  ContainerMissing: 'ContainerMissing',
  /** The pod reached phase Failed while `status --wait-for` watched it. */
  PodFailed: 'PodFailed',
} as const

/** An init container's failure, as the kubelet shows it in the pod status: `Init:<reason>`. */
export function initReason(reason: string): string {
  return `Init:${reason}`
}

export interface PodFailureDetails {
  /** A PodFailureReason, `Init:<reason>`, or a container's exit reason (Error, OOMKilled, ...). Default PodFailed. */
  reason?: string
  /** The container that failed, when one did. */
  container?: string
  containerId?: string
}

/** A pod or container failed to run: exit code 14 (PodFailed), the kubelet's reason as the code. */
export class PodFailedError extends PodctlError {
  readonly reason: string
  readonly container?: string
  readonly containerId?: string

  constructor(message: string, details: PodFailureDetails = {}) {
    const reason = details.reason ?? PodFailureReason.PodFailed
    super(reason, ExitCode.POD_FAILED, message)
    this.reason = reason
    this.container = details.container
    this.containerId = details.containerId
  }
}

/**
 * A step of the pod failed: transport failures (unreachable, deadline, interrupted) keep their
 * class so their exit codes stay meaningful; everything else becomes the kubelet's reason.
 */
export function asPodFailure(error: unknown, message: string, details: PodFailureDetails): PodctlError {
  if (error instanceof RuntimeUnreachableError || error instanceof DeadlineExceededError || error instanceof InterruptedError) return error
  return new PodFailedError(message, details)
}

/** One pod's kill that failed somewhere; `result` still says what was done, `causes` lists every failed step. */
export class KillPodError extends PodctlError {
  readonly result: KillPodResult
  readonly causes: PodctlError[]

  constructor(result: KillPodResult, causes: PodctlError[]) {
    const [first] = causes
    const more = causes.length > 1 ? ` (and ${causes.length - 1} more failure${causes.length > 2 ? 's' : ''})` : ''
    super(first.code, first.exitCode, `killing pod ${result.pod}: ${first.message}${more}`)
    this.result = result
    this.causes = causes
  }
}
