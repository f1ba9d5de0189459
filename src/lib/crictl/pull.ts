/**
 * crictl v1.29's pull: one PullImage (no pull policy, no retries, no events), annotations on the
 * image spec (not the sandbox config), and `Image is up to date for <image ref>` as its only output.
 */
import type {CriClient} from '../cri/client.js'
import type {RegistryAuth} from '../images/credentials.js'
import {readPullSandboxConfig} from '../images/pull-options.js'
import {crictlLabels} from './list-calls.js'
import {crictlFailure} from './errors.js'

export interface CrictlPullOptions {
  auth?: RegistryAuth
  podConfig?: string
  annotations?: readonly string[]
}

/** The line crictl prints for a pull that succeeded. */
export function pulledLine(imageRef: string): string {
  return `Image is up to date for ${imageRef}`
}

export async function crictlPullImage(client: CriClient, image: string, options: CrictlPullOptions): Promise<string> {
  const annotations = crictlLabels(options.annotations)
  let sandboxConfig
  try {
    sandboxConfig = options.podConfig === undefined ? undefined : await readPullSandboxConfig(options.podConfig)
  } catch (error) {
    throw crictlFailure('load podSandboxConfig', error)
  }

  try {
    const response = await client.image('pullImage', {image: {image, annotations}, auth: options.auth, sandboxConfig} as never)
    return response.imageRef
  } catch (error) {
    throw crictlFailure('pulling image', error)
  }
}
