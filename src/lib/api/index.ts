export {
  AlreadyExistsError,
  AmbiguousError,
  DeadlineExceededError,
  ExitCode,
  HostAccessError,
  InterruptedError,
  KubeletOwnsRuntimeError,
  NotFoundError,
  NotStartedError,
  PodctlError,
  RuntimeError,
  RuntimeNotReadyError,
  RuntimeUnreachableError,
  StreamingUnavailableError,
  UnimplementedError,
  UsageError,
} from '../errors.js'
export type {CopyResult} from '../host/copy-result.js'
export {
  ErrImageNeverPullError,
  ErrImagePullError,
  ImageError,
  ImagePullBackOffError,
  InvalidImageNameError,
  RegistryUnavailableError,
  UnauthorizedError,
} from '../images/errors.js'
export type {PodEvent} from '../kube/events.js'
export {PodFailedError} from '../kubelet/core/reasons.js'
export type {KillPodResult} from '../kubelet/kuberuntime/kill.js'
export type {WaitMode} from '../kubelet/run/run-pod.js'
export type {ContainerReport, PodStatusReport, SandboxReport} from '../kubelet/status/pod-status.js'
export {LogUnreadableError} from '../logs/follow.js'
export {ManifestError} from '../manifest/fields.js'
export {ContainerNotRunningError} from '../node/exec.js'
export {Container, type ExecOptions, type ExecResult, type WaitForLogOptions} from './container.js'
export type {FollowOptions, LogLine, LogOptions} from './logs.js'
export type {LoadOptions, ManifestInput, ManifestObject} from './manifest-input.js'
export {type KillOptions, Pod, type PortForward, type PortForwardOptions} from './pod.js'
/**
 * podctl as a library (`import {connect} from 'podctl'`): run pods from manifests against a CRI runtime
 * the way `podctl run` does, and drive them from a test. Loads no CLI module (oclif, tables, spinners).
 * Failures are the CLI's error classes; `error.exitCode` is the code the CLI would exit with. See docs/library.md.
 */
export {connect, type ConnectOptions, type RunOptions, Runtime} from './runtime.js'
