/**
 * The way back from the recorded pod model to a v1 Pod manifest (`podctl export`), one that
 * `podctl run` and `kubectl apply` take: metadata without uid, status or anything the node added
 * (podctl's io.podctl.* and the kubelet's kubernetes.io/config.* annotations), the spec as the API
 * server defaulted it. What the model no longer holds (fields ignored at run, crictl-only
 * settings) is listed in `notes`, for the command to say on stderr.
 */
import {compact, containerManifest, crictlOnlyContainerFields, type ManifestObject, resourcesManifest} from './container-manifest.js'
import type {KeyToPathModel, PodModel, PodSecurityContextModel, VolumeModel, VolumeProjectionModel} from './model.js'

export interface ExportedPod {
  /** The v1 Pod. */
  pod: ManifestObject
  /** One line each: what the manifest cannot carry, or carries only in part. */
  notes: string[]
}

/** Annotations a node adds to a pod, never part of what the user wrote: podctl's own and the kubelet's config source. */
export function isNodeAnnotation(key: string): boolean {
  return key.startsWith('io.podctl.') || key.startsWith('kubernetes.io/config.') || key.startsWith('io.kubernetes.')
}

export function userAnnotations(annotations: Readonly<Record<string, string>>): Record<string, string> | undefined {
  const kept = Object.entries(annotations).filter(([key]) => !isNodeAnnotation(key))
  return kept.length === 0 ? undefined : Object.fromEntries(kept)
}

const nonEmpty = <T>(list: readonly T[] | undefined): T[] | undefined => (list && list.length > 0 ? [...list] : undefined)
const onlyTrue = (flag: boolean | undefined): true | undefined => (flag ? true : undefined)
/** The API's default volume file mode (0644), left out as kubectl's own manifests leave it out. */
const DEFAULT_MODE = 0o644

function items(list: readonly KeyToPathModel[]): ManifestObject[] | undefined {
  return nonEmpty(list.map((item) => compact({...item})!))
}

function projectionManifest(source: VolumeProjectionModel): ManifestObject | undefined {
  if (source.configMap) {
    const {name, optional} = source.configMap
    return {configMap: compact({name, items: items(source.configMap.items), optional: onlyTrue(optional)})}
  }

  if (source.secret) {
    const {name, optional} = source.secret
    return {secret: compact({name, items: items(source.secret.items), optional: onlyTrue(optional)})}
  }

  if (source.downwardAPI) return {downwardAPI: {items: source.downwardAPI.items.map((item) => compact({...item}))}}
  return undefined
}

const mode = (value: number) => (value === DEFAULT_MODE ? undefined : value)

/** A v1 Volume; a source the model keeps only by name (an external plugin) becomes an emptyDir, with a note. */
function volumeManifest(volume: VolumeModel, notes: string[]): ManifestObject {
  const {name} = volume
  if (volume.hostPath) return {name, hostPath: compact({path: volume.hostPath.path, type: volume.hostPath.type || undefined})}
  if (volume.emptyDir) return {name, emptyDir: compact({...volume.emptyDir}) ?? {}}
  if (volume.configMap) {
    const {configMap} = volume
    const source = {name: configMap.name, items: items(configMap.items), defaultMode: mode(configMap.defaultMode)}
    return {name, configMap: compact({...source, optional: onlyTrue(configMap.optional)})}
  }

  if (volume.secret) {
    const {secret} = volume
    const source = {secretName: secret.secretName, items: items(secret.items), defaultMode: mode(secret.defaultMode)}
    return {name, secret: compact({...source, optional: onlyTrue(secret.optional)})}
  }

  if (volume.downwardAPI) {
    const {downwardAPI} = volume
    return {
      name,
      downwardAPI: compact({items: downwardAPI.items.map((item) => compact({...item})), defaultMode: mode(downwardAPI.defaultMode)}),
    }
  }

  if (volume.projected) {
    const skipped = volume.projected.sources.filter((source) => source.skipped).map((source) => source.skipped!)
    if (skipped.length > 0) notes.push(`volume ${name}: its ${skipped.join(', ')} sources were skipped at run and are not in the export`)
    const sources = volume.projected.sources.map((source) => projectionManifest(source)).filter(Boolean)
    return {name, projected: compact({sources, defaultMode: mode(volume.projected.defaultMode)})}
  }

  if (volume.persistentVolumeClaim) {
    const {claimName, readOnly} = volume.persistentVolumeClaim
    return {name, persistentVolumeClaim: compact({claimName, readOnly: onlyTrue(readOnly)})}
  }

  if (volume.image) return {name, image: {...volume.image}}
  const source = volume.external?.source ?? 'unknown'
  notes.push(`volume ${name}: its ${source} source is not recorded (podctl binds it with --volume ${name}=DIR); exported as an emptyDir`)
  return {name, emptyDir: {}}
}

function podSecurityContext(context: PodSecurityContextModel | undefined): ManifestObject | undefined {
  if (!context) return undefined
  return compact({...context, supplementalGroups: nonEmpty(context.supplementalGroups), sysctls: nonEmpty(context.sysctls)})
}

function dnsConfigManifest(dns: PodModel['dnsConfig']): ManifestObject | undefined {
  if (!dns) return undefined
  return compact({
    nameservers: nonEmpty(dns.nameservers),
    searches: nonEmpty(dns.searches),
    options: nonEmpty(dns.options.map((option) => compact({...option}))),
  })
}

/** The notes for what the model no longer holds: fields ignored or dropped at run, crictl-only settings. */
function lostFields(pod: PodModel): string[] {
  const notes: string[] = []
  const ignored = (pod.ignoredFields ?? []).map(({path}) => path)
  if (ignored.length > 0) notes.push(`not recorded (they had no effect on this node, so run left them out): ${ignored.join(', ')}`)
  if (pod.droppedFields?.length) notes.push(`not recorded (unknown to podctl's Kubernetes version): ${pod.droppedFields.join(', ')}`)
  const crictl = [
    ...(pod.logDirectory ? ['log_directory'] : []),
    ...(pod.attempt ? ['metadata.attempt'] : []),
    ...(pod.cgroupParent ? ['linux.cgroup_parent'] : []),
    ...(pod.namespaceOptions ? ['linux.security_context.namespace_options'] : []),
  ]
  if (crictl.length > 0) notes.push(`the pod config's ${crictl.join(', ')} has no Pod field and is left out`)
  for (const container of [...pod.initContainers, ...pod.containers]) {
    const fields = crictlOnlyContainerFields(container)
    if (fields.length > 0)
      notes.push(`container ${container.name}: the container config's ${fields.join(', ')} has no Pod field and is left out`)
  }

  if (pod.overhead) notes.push('spec.overhead is left out: RuntimeClass admission sets it in a cluster')
  return notes
}

/** The recorded pod as a v1 Pod manifest, and what it cannot carry. */
export function podManifest(pod: PodModel): ExportedPod {
  const notes = lostFields(pod)
  const volumes = pod.volumes.map((volume) => volumeManifest(volume, notes))
  const spec = compact({
    restartPolicy: pod.restartPolicy,
    terminationGracePeriodSeconds: pod.terminationGracePeriodSeconds,
    activeDeadlineSeconds: pod.activeDeadlineSeconds,
    dnsPolicy: pod.dnsPolicy,
    dnsConfig: dnsConfigManifest(pod.dnsConfig),
    hostNetwork: onlyTrue(pod.hostNetwork),
    hostPID: onlyTrue(pod.hostPID),
    hostIPC: onlyTrue(pod.hostIPC),
    shareProcessNamespace: onlyTrue(pod.shareProcessNamespace),
    hostname: pod.hostname,
    subdomain: pod.subdomain,
    hostnameOverride: pod.hostnameOverride,
    setHostnameAsFQDN: pod.setHostnameAsFQDN,
    hostAliases: nonEmpty(pod.hostAliases),
    hostUsers: pod.hostUsers,
    os: pod.os && {name: pod.os},
    securityContext: podSecurityContext(pod.securityContext),
    resources: resourcesManifest(pod.resources),
    runtimeClassName: pod.runtimeClassName,
    serviceAccountName: pod.serviceAccountName,
    automountServiceAccountToken: pod.automountServiceAccountToken,
    imagePullSecrets: nonEmpty(pod.imagePullSecrets?.map((name) => ({name}))),
    initContainers: nonEmpty(pod.initContainers.map((container) => containerManifest(container))),
    containers: pod.containers.map((container) => containerManifest(container)),
    volumes: nonEmpty(volumes),
  })
  const metadata = compact({
    name: pod.name,
    namespace: pod.namespace,
    labels: Object.keys(pod.labels).length > 0 ? {...pod.labels} : undefined,
    annotations: userAnnotations(pod.annotations),
  })
  return {pod: {apiVersion: 'v1', kind: 'Pod', metadata, spec}, notes}
}
