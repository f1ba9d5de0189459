/**
 * The image manager's failures, named as the kubelet names them (pkg/kubelet/images/types.go,
 * k8s.io/cri-api/pkg/errors): `code` is what `kubectl get pod` would show as the waiting reason,
 * the message is the kubelet's message. Unauthorized is podctl's own refinement of ErrImagePull
 * (the kubelet reports it as ErrImagePull, kept in `reason`) so scripts can tell bad credentials apart.
 */
import {ExitCode, InterruptedError, PodctlError, RuntimeUnreachableError, UnimplementedError} from '../errors.js'
import {grpcCodeName} from '../cri/status-names.js'

/** A failure of the ensure-image flow. `reason` is the kubelet's container waiting reason. */
export abstract class ImageError extends PodctlError {
  /** The image exactly as the user wrote it. */
  readonly image: string
  readonly reason: string

  constructor(code: string, exitCode: number, message: string, image: string, reason = code) {
    super(code, exitCode, message)
    this.image = image
    this.reason = reason
  }

  override toJSON(): {code: string; exitCode: number; message: string; reason: string; image: string} {
    return {...super.toJSON(), reason: this.reason, image: this.image}
  }
}

/** The pull failed (runtime error text as the message, like the kubelet). */
export class ErrImagePullError extends ImageError {
  constructor(message: string, image: string) {
    super('ErrImagePull', ExitCode.IMAGE_PULL, message, image)
  }
}

/** The runtime said the registry is unavailable (error text starting with "RegistryUnavailable"). */
export class RegistryUnavailableError extends ImageError {
  constructor(message: string, image: string) {
    super('RegistryUnavailable', ExitCode.IMAGE_PULL, message, image)
  }
}

/** Still inside the back-off window after an earlier failure; no pull was attempted. */
export class ImagePullBackOffError extends ImageError {
  constructor(message: string, image: string) {
    super('ImagePullBackOff', ExitCode.IMAGE_PULL, message, image)
  }
}

/** The reference does not parse; nothing was sent to the runtime. */
export class InvalidImageNameError extends ImageError {
  constructor(message: string, image: string) {
    super('InvalidImageName', ExitCode.INVALID_IMAGE_NAME, message, image)
  }
}

/** Pull policy Never and the image is not on the node. */
export class ErrImageNeverPullError extends ImageError {
  constructor(message: string, image: string) {
    super('ErrImageNeverPull', ExitCode.IMAGE_NEVER_PULL, message, image)
  }
}

/** The runtime's signature policy rejected the image (error text starting with "SignatureValidationFailed"). */
export class SignatureValidationFailedError extends ImageError {
  constructor(message: string, image: string) {
    super('SignatureValidationFailed', ExitCode.IMAGE_PULL, message, image)
  }
}

/** The registry refused the credentials, or wanted some and got none (401/403 in the runtime's error). */
export class UnauthorizedError extends ImageError {
  constructor(message: string, image: string) {
    super('Unauthorized', ExitCode.UNAUTHORIZED, message, image, 'ErrImagePull')
  }
}

/** ImageStatus failed while checking for a local image (the kubelet's ImageInspectError). */
export class ImageInspectError extends ImageError {
  constructor(message: string, image: string) {
    super('ImageInspectError', ExitCode.RUNTIME, message, image)
  }
}

/**
 * The error text the kubelet sees from its CRI client: for gRPC Unknown only the status message
 * (so a "RegistryUnavailable" prefix can be matched), otherwise grpc-go's full status string.
 */
export function kubeletErrorText(code: number | undefined, details: string): string {
  if (code === undefined || code === 2) return details
  return `rpc error: code = ${grpcCodeName(code)} desc = ${details}`
}

const REGISTRY_UNAVAILABLE = 'RegistryUnavailable'
const SIGNATURE_VALIDATION_FAILED = 'SignatureValidationFailed'
/** Registries answer 401/403; containerd words it "unexpected status code … 401 Unauthorized", "pull access denied", … */
const UNAUTHORIZED_PATTERN = /\b(401|403)\b|unauthori[sz]ed|\bdenied\b|authentication required|forbidden/i

/**
 * The image or tag is not in the registry: containerd answers gRPC NotFound ("…: not found"), CRI-O
 * words the registry's own error codes (MANIFEST_UNKNOWN, NAME_UNKNOWN).
 */
const NOT_FOUND_PATTERN = /\bcode = NotFound\b|\bmanifest unknown\b|\bname unknown\b|: not found$/i

/**
 * A registry's answer that no retry changes (the image or tag does not exist, the credentials were
 * refused), unlike a registry that cannot be reached: what the image manager's refusedPullRetries counts.
 */
export function refusedByRegistry(failure: ImageError): boolean {
  return failure instanceof UnauthorizedError || (failure instanceof ErrImagePullError && NOT_FOUND_PATTERN.test(failure.message))
}

/**
 * evalCRIPullErr: a runtime pull error → the kubelet's error and message. `errText` is already in
 * the form of kubeletErrorText. Credentials are never part of it: the runtime does not echo them.
 */
export function pullFailure(errText: string, image: string): ImageError {
  if (errText.startsWith(REGISTRY_UNAVAILABLE)) {
    return new RegistryUnavailableError(
      `image pull failed for ${image} because the registry is unavailable${errText.slice(REGISTRY_UNAVAILABLE.length)}`,
      image,
    )
  }

  if (errText.startsWith(SIGNATURE_VALIDATION_FAILED)) {
    return new SignatureValidationFailedError(
      `image pull failed for ${image} because the signature validation failed${errText.slice(SIGNATURE_VALIDATION_FAILED.length)}`,
      image,
    )
  }

  if (UNAUTHORIZED_PATTERN.test(errText)) return new UnauthorizedError(errText, image)
  return new ErrImagePullError(errText, image)
}

/** A failed PullImage (every credential tried), with what the kubelet would print and which credentials were used. */
export class PullFailed extends Error {
  constructor(
    readonly text: string,
    readonly sources: string[],
    readonly registry: string,
  ) {
    super(text)
  }
}

/** Says which credentials were refused (by origin, never content), or that none were found. */
export function withCredentialHint(failure: UnauthorizedError, pull: PullFailed): UnauthorizedError {
  const hint =
    pull.sources.length > 0
      ? `credentials from ${pull.sources.join(', ')} were refused`
      : `no credentials found for ${pull.registry}; pass --creds or --auth, or log in to write a docker config file`
  return new UnauthorizedError(`${failure.message} (${hint})`, failure.image)
}

/** Failures that are not about the image (no runtime, interrupted, no image service) keep their own class. */
export function passThrough(error: unknown): boolean {
  return error instanceof InterruptedError || error instanceof RuntimeUnreachableError || error instanceof UnimplementedError
}

/** The error text the kubelet would print: the runtime's status as its CRI client formats it. */
export function pullErrorText(error: unknown): string {
  if (error instanceof PullFailed) return error.text
  if (error instanceof PodctlError && error.grpc) return kubeletErrorText(error.grpc.code, error.grpc.details)
  return error instanceof Error ? error.message : String(error)
}
