import type {EnsureImageOptions, EnsureImageResult} from '../../src/lib/images/image-manager.js'

function present(options: EnsureImageOptions): EnsureImageResult {
  return {image: options.image, imageRef: `sha256:${options.image}`, pulled: false, message: '', policy: 'IfNotPresent', attempts: 0}
}

/** An image manager that finds every image present on the node (tests of what happens after the pull). */
export const presentImages = {
  async ensureImage(options: EnsureImageOptions): Promise<EnsureImageResult> {
    return present(options)
  },
}

/**
 * The same, recording each request; `fail` may answer a request with the error a failed pull
 * would throw (tests of which images a pod asks for, and of a pull that fails).
 */
export function recordingImages(fail?: (options: EnsureImageOptions) => Error | undefined) {
  const requests: EnsureImageOptions[] = []
  return {
    requests,
    async ensureImage(options: EnsureImageOptions): Promise<EnsureImageResult> {
      requests.push(options)
      const failure = fail?.(options)
      if (failure) throw failure
      return present(options)
    },
  }
}
