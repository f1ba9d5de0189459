import type {EnsureImageOptions, EnsureImageResult} from '../../src/lib/images/image-manager.js'

/** An image manager that finds every image present on the node (tests of what happens after the pull). */
export const presentImages = {
  async ensureImage(options: EnsureImageOptions): Promise<EnsureImageResult> {
    return {image: options.image, imageRef: `sha256:${options.image}`, pulled: false, message: '', policy: 'IfNotPresent', attempts: 0}
  },
}
