/**
 * Why a pod failed to start or run, in the kubelet's words (pkg/kubelet/container/sync_result.go
 * and kuberuntime's ErrCreateContainerConfig, ErrCreateContainer, ErrPostStartHook): one
 * PodFailedError whose code is the reason, with the PodFailed exit code, and the kill failure
 * that keeps what the kill did.
 */
import {DeadlineExceededError, ExitCode, InterruptedError, PodctlError, RuntimeUnreachableError} from '../../errors.js'

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
  /** The pod's termination was asked for (kill, a removed manifest) while a run waited for it. */
  Terminated: 'Terminated',
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
  /** The failed container's log file (kept after a rollback). */
  logPath?: string
}

/** A pod or container failed to run: exit code 14 (PodFailed), the kubelet's reason as the code. */
export class PodFailedError extends PodctlError {
  readonly reason: string
  readonly container?: string
  readonly containerId?: string
  readonly logPath?: string

  constructor(message: string, details: PodFailureDetails = {}) {
    const reason = details.reason ?? PodFailureReason.PodFailed
    super(reason, ExitCode.POD_FAILED, message)
    this.reason = reason
    this.container = details.container
    this.containerId = details.containerId
    this.logPath = details.logPath
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

/** The same failure (code, exit code, class for instanceof checks) with another message. */
export function withMessage(failure: PodctlError, message: string): PodctlError {
  const copy = Object.create(Object.getPrototypeOf(failure)) as PodctlError
  Object.assign(copy, failure)
  Object.defineProperty(copy, 'message', {value: message, enumerable: false, writable: true, configurable: true})
  return copy
}
