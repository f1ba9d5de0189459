/**
 * What a pod asks of the runtime, checked before anything is made: a user namespace (hostUsers:
 * false) needs a runtime handler that reports user namespace support (the kubelet's
 * GetOrCreateUserNamespaceMappings check); an image volume needs containerd 2.1+ or CRI-O 1.31+, and a
 * subPath of one containerd 2.2+ or CRI-O 1.33+ (an older runtime ignores the CRI field and would
 * mount something else). Each refusal names the pod, the runtime and its version.
 */
import {CRI_CLIENT_VERSION, type CriClient} from '../../cri/client.js'
import {type Feature, missingFeature, runtimeNamed} from '../../cri/runtime-releases.js'
import {podFullName} from '../../kube/helpers.js'
import type {PodModel} from '../../manifest/model.js'
import type {VersionResponse} from '../../../generated/runtime/v1/api.js'
import {PodFailedError, PodFailureReason} from '../core/reasons.js'

/** The features of the runtime release a pod needs, by what in it needs them. */
function neededFeatures(pod: PodModel): Array<{feature: Feature; by: string}> {
  const images = new Set(pod.volumes.filter((volume) => volume.image).map((volume) => volume.name))
  const needs: Array<{feature: Feature; by: string}> = [...images].map((name) => ({feature: 'imageVolumes', by: `volume ${name}`}))
  for (const container of [...pod.initContainers, ...pod.containers]) {
    for (const mount of container.volumeMounts) {
      if (images.has(mount.name) && (mount.subPath || mount.subPathExpr)) {
        needs.push({feature: 'imageVolumeSubPath', by: `container ${container.name}'s mount of ${mount.name}`})
      }
    }
  }

  return needs
}

export async function checkRuntimeSupport(client: CriClient, pods: readonly PodModel[], runtimeHandler?: string): Promise<void> {
  const wantUsers = pods.filter((pod) => pod.hostUsers === false)
  const needing = pods.filter((pod) => neededFeatures(pod).length > 0)
  if (wantUsers.length === 0 && needing.length === 0) return
  const version = await client.runtime('version', {version: CRI_CLIENT_VERSION}).catch(() => undefined)
  for (const pod of needing) {
    for (const {feature, by} of neededFeatures(pod)) {
      const missing = version && missingFeature(version, feature)
      if (missing)
        throw new PodFailedError(`pod ${podFullName(pod.name, pod.namespace)}: ${by}: ${missing}`, {
          reason: PodFailureReason.CreateContainerConfigError,
        })
    }
  }

  if (wantUsers.length > 0) await checkUserNamespaces(client, wantUsers, version, runtimeHandler)
}

/** hostUsers: false needs a runtime handler reporting user namespace support (RuntimeStatus runtime_handlers[].features). */
async function checkUserNamespaces(
  client: CriClient,
  pods: readonly PodModel[],
  version: VersionResponse | undefined,
  runtimeHandler?: string,
): Promise<void> {
  const status = await client.runtime('status', {verbose: false})
  const handlers = status.runtimeHandlers ?? []
  const runtime = version ? runtimeNamed(version) : `the runtime at ${client.runtimeEndpoint}`
  for (const pod of pods) {
    const handler = runtimeHandler ?? pod.runtimeClassName ?? ''
    const found = handlers.find((entry) => entry.name === handler)
    if (found?.features?.userNamespaces) continue
    const why =
      handlers.length === 0
        ? `${runtime} reports no handler features (containerd before 2.0 cannot make user namespaces)`
        : `${runtime} reports none for it (it needs a runc that makes idmapped mounts, 1.2+, on a kernel that has them)`
    throw new PodFailedError(
      `pod ${podFullName(pod.name, pod.namespace)}: spec.hostUsers is false, ` +
        `but RuntimeClass handler "${handler}" does not support user namespaces: ${why}`,
      {reason: PodFailureReason.CreatePodSandboxError},
    )
  }
}
