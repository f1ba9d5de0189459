/**
 * Image references are checked with the other fields, before anything is created: each is parsed
 * as the kubelet parses it when applying the default tag, and an invalid one is refused
 * (InvalidImageName, exit 11) naming the field it came from, in the form the input was written in.
 */
import {PodctlError} from '../errors.js'
import {applyDefaultImageTag} from '../images/reference.js'
import type {PodModel} from './model.js'

/** Which of `run`'s two inputs the pods were read from: a v1 Pod manifest, or crictl's config pair. */
export type InputForm = 'manifest' | 'crictl'

/** Throws for the first invalid image reference, e.g. "pod.yaml: spec.containers[0].image: Failed to apply default image tag …". */
export function checkImageReferences(pods: readonly PodModel[], form: InputForm): void {
  for (const pod of pods) {
    const references = [
      ...pod.initContainers.map((container, index) => [container.image, `spec.initContainers[${index}].image`]),
      ...pod.containers.map((container, index) => [container.image, `spec.containers[${index}].image`]),
      ...pod.volumes.flatMap((volume, index) => (volume.image ? [[volume.image.reference, `spec.volumes[${index}].image.reference`]] : [])),
    ]
    for (const [image, path] of references) {
      try {
        applyDefaultImageTag(image)
      } catch (error) {
        if (!(error instanceof PodctlError)) throw error
        const where = form === 'crictl' ? 'image.image' : path
        throw new PodctlError(error.code, error.exitCode, `${pod.source}: ${where}: ${error.message}`)
      }
    }
  }
}
