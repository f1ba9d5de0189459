/**
 * The ConfigMaps and Secrets each pod needs, checked before anything is created: where the kubelet
 * would leave the pod waiting (CreateContainerConfigError for env and envFrom, FailedMount for a
 * volume) until someone creates the object, podctl — which has no API server to wait for — refuses
 * the run up front with the kubelet's words. Missing imagePullSecrets only warn, as the kubelet's
 * FailedToRetrieveImagePullSecret does.
 */
import {type CredentialStore, pullSecretCredentials} from '../../images/credentials.js'
import {podFullName} from '../../kube/helpers.js'
import {loadRunInput, type RunInput} from '../../manifest/load.js'
import type {PodModel} from '../../manifest/model.js'
import {EnvReferenceError, makeEnvironmentVariables, PLACEHOLDER_NODE} from '../core/env.js'
import {PodFailedError, PodFailureReason} from '../core/reasons.js'
import {claimsRootFromEnv, resolveClaims} from './claims.js'
import {volumePayload, VolumeSetupError} from './volumes.js'

export function checkPodReferences(pods: readonly PodModel[]): void {
  for (const pod of pods) {
    const object = podFullName(pod.name, pod.namespace)
    for (const volume of pod.volumes) {
      try {
        volumePayload(pod, volume, {...PLACEHOLDER_NODE, podIPs: []})
      } catch (error) {
        if (!(error instanceof VolumeSetupError)) throw error
        throw new PodFailedError(`pod ${object}: MountVolume.SetUp failed for volume "${volume.name}" : ${error.message}`, {
          reason: PodFailureReason.FailedMount,
        })
      }
    }

    for (const container of [...pod.initContainers, ...pod.containers]) {
      try {
        makeEnvironmentVariables(pod, container, {...PLACEHOLDER_NODE, podIPs: []})
      } catch (error) {
        if (!(error instanceof EnvReferenceError)) throw error
        throw new PodFailedError(`pod ${object}: container ${container.name}: CreateContainerConfigError: ${error.message}`, {
          reason: PodFailureReason.CreateContainerConfigError,
          container: container.name,
        })
      }
    }

    const missing = (pod.imagePullSecrets ?? []).filter((name) => !pod.objects?.secret(pod.namespace, name))
    if (missing.length > 0) {
      pod.warnings = [
        ...(pod.warnings ?? []),
        `pod ${object}: Unable to retrieve some image pull secrets (${missing.join(', ')}); attempting to pull the image may not succeed.`,
      ]
    }
  }
}

/**
 * Where each workload's pod comes from, for the human output: "pod web-…_default: from Deployment
 * web (ReplicaSet web-…), replica 1 of 2", and what it waits for ("after db-0 is ready").
 */
export function podOrigins(pods: readonly PodModel[]): string[] {
  return pods.flatMap(({owner, name, namespace, startAfter}) => {
    if (!owner) return []
    const replica = owner.replicas === undefined ? 'one replica' : `replica ${(owner.replica ?? 0) + 1} of ${owner.replicas}`
    const after = startAfter ? `, started once ${startAfter.pod} is ${startAfter.until}` : ''
    return [
      `pod ${podFullName(name, namespace)}: from ${owner.kind} ${owner.name}${owner.via ? ` (${owner.via})` : ''}, ${replica}${after}`,
    ]
  })
}

/**
 * `run`'s input → pods whose references are all there, their claims resolved under --claims-root,
 * the warnings to print, and the notes: where workload pods come from, claims provisioned without a document.
 */
export async function loadPodsToRun(
  flags: {
    filename?: string[]
    volume?: string[]
    'pod-config'?: string
    'container-config'?: string
    namespace?: string
    strict?: boolean
    'claims-root'?: string
    replicas?: number
  },
  file?: string,
  stdin?: Pick<RunInput, 'stdin' | 'stdinSource'>,
): Promise<{pods: PodModel[]; warnings: string[]; origins: string[]}> {
  const {filename, volume: volumes, namespace, strict, replicas} = flags
  const input: RunInput = {filename, file, volumes, namespace, strict, replicas, ...stdin}
  const loaded = await loadRunInput({...input, podConfig: flags['pod-config'], containerConfig: flags['container-config']})
  const {pods, warning} = loaded
  checkPodReferences(pods)
  const claimNotes = resolveClaims(pods, flags['claims-root'] ?? claimsRootFromEnv())
  const warnings = [...(loaded.notices ?? []), ...(warning ? [warning] : []), ...pods.flatMap((pod) => pod.warnings ?? [])]
  if (pods.length === 0) warnings.push(`no pod to run: the workloads have 0 replicas${replicas === 0 ? ' (--replicas 0)' : ''}`)
  if (replicas !== undefined && pods.length > 0 && !pods.some((pod) => pod.owner)) {
    warnings.push('--replicas has no effect: the input holds no Deployment, ReplicaSet, StatefulSet or Job')
  }

  return {pods, warnings, origins: [...podOrigins(pods), ...claimNotes]}
}

/** The pod's imagePullSecrets as a keyring (dockerconfigjson and dockercfg Secrets of the input), or undefined. */
export function podPullSecrets(pod: PodModel): {pullSecrets: CredentialStore; pullSecretsKey: string} | undefined {
  const secrets = (pod.imagePullSecrets ?? []).flatMap((name) => {
    const secret = pod.objects?.secret(pod.namespace, name)
    const config = secret?.data['.dockerconfigjson'] ?? secret?.data['.dockercfg']
    return secret && config ? [{label: `Secret ${pod.namespace}/${name}`, config: config.toString('utf8')}] : []
  })
  if (secrets.length === 0) return undefined
  return {pullSecrets: pullSecretCredentials(secrets), pullSecretsKey: `${pod.namespace}/${pod.imagePullSecrets!.join(',')}`}
}
