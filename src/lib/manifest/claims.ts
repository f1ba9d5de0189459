/**
 * PersistentVolumeClaims as the API server validates them, for a node that serves every claim from
 * a local directory (local-path-provisioner's model, kubelet/volumes/claims.ts): the claim
 * document (name, namespace, accessModes, resources.requests.storage, storageClassName, volumeMode
 * Filesystem), a pod volume's persistentVolumeClaim source (claimName, readOnly), and matching
 * the two by namespace and name.
 */
import {FieldReader, type Json} from './fields.js'
import type {ClaimObject, PodModel, VolumeModel} from './model.js'
import {dns1123Subdomain} from './names.js'
import {checkApiVersion, readMetadata} from './objects.js'
import {isNegative, parseQuantity} from './quantity.js'

export const CLAIM_KIND = 'PersistentVolumeClaim'

const ACCESS_MODES = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'] as const
const CLAIM_RULE = {supported: ['apiVersion', 'kind', 'metadata', 'spec'], ignored: ['status']}
const CLAIM_SPEC_RULE = {
  supported: ['accessModes', 'resources', 'storageClassName', 'volumeMode'],
  unsupported: {
    selector: 'a claim here is always a new local directory, never an existing PersistentVolume; remove it',
    volumeName: 'there are no PersistentVolumes to bind; remove it (or bind a directory with --volume NAME=DIR)',
    dataSource: 'a local claim starts empty; copy the data in, or bind a directory with --volume NAME=DIR',
    dataSourceRef: 'a local claim starts empty; copy the data in, or bind a directory with --volume NAME=DIR',
    volumeAttributesClassName: 'a local directory has no volume attributes; remove it',
  },
}
const RESOURCES_RULE = {supported: ['requests', 'limits']}
const CLAIM_SOURCE_RULE = {supported: ['claimName', 'readOnly']}

function storageQuantity(r: FieldReader, value: Json | undefined, path: string, required: boolean): string | undefined {
  if (value === undefined || value === null) {
    if (required) r.fail(path, 'is required (e.g. storage: 1Gi)')
    return undefined
  }

  const quantity = typeof value === 'string' || typeof value === 'number' ? parseQuantity(value) : undefined
  if (!quantity || isNegative(quantity)) r.fail(path, 'must be a quantity such as 1Gi or 500Mi')
  if (quantity.numerator === 0n) r.fail(path, 'must be greater than zero')
  return quantity.text
}

/** A PersistentVolumeClaim document (ValidatePersistentVolumeClaim); Block volumes are refused. */
export function parseClaim(document: Json, source: string): ClaimObject {
  const r = new FieldReader(source)
  const root = r.object(document, '', CLAIM_RULE)
  checkApiVersion(r, root, CLAIM_KIND)
  const {name, namespace} = readMetadata(r, root.metadata)
  const spec = r.object(root.spec, 'spec', CLAIM_SPEC_RULE)
  if (root.spec === undefined || root.spec === null) r.fail('spec', 'is required (accessModes and resources.requests.storage)')
  const accessModes = r
    .list(spec.accessModes, 'spec.accessModes')
    .map((mode, index) => r.oneOf(mode, `spec.accessModes[${index}]`, ACCESS_MODES) ?? '')
  if (accessModes.length === 0) r.fail('spec.accessModes', 'at least 1 access mode is required (e.g. [ReadWriteOnce])')
  if (accessModes.includes('ReadWriteOncePod') && accessModes.length > 1) {
    r.fail('spec.accessModes', 'may not use ReadWriteOncePod with other access modes')
  }

  const resources = r.object(spec.resources, 'spec.resources', RESOURCES_RULE)
  const requests = r.object(resources.requests, 'spec.resources.requests', {supported: ['storage']})
  const storage = storageQuantity(r, requests.storage, 'spec.resources.requests.storage', true)!
  const limits = r.object(resources.limits, 'spec.resources.limits', {supported: ['storage']})
  storageQuantity(r, limits.storage, 'spec.resources.limits.storage', false)
  const storageClassName = r.string(spec.storageClassName, 'spec.storageClassName')
  const classProblem = storageClassName ? dns1123Subdomain(storageClassName) : undefined
  if (classProblem) r.fail('spec.storageClassName', `"${storageClassName}" is invalid: ${classProblem}`)
  const volumeMode = r.oneOf(spec.volumeMode, 'spec.volumeMode', ['Filesystem', 'Block'] as const) ?? 'Filesystem'
  if (volumeMode === 'Block') {
    r.fail('spec.volumeMode', 'Block is not supported by podctl: a claim here is a local directory; use Filesystem (the default)')
  }

  r.finish()
  return {
    name,
    namespace,
    accessModes,
    storage,
    ...(storageClassName ? {storageClassName} : {}),
    volumeMode: 'Filesystem',
    source,
  }
}

/** A pod volume's persistentVolumeClaim source (validatePersistentClaimVolumeSource). */
export function readClaimSource(r: FieldReader, value: Json | undefined, where: string): NonNullable<VolumeModel['persistentVolumeClaim']> {
  const source = r.object(value, where, CLAIM_SOURCE_RULE)
  const claimName = r.string(source.claimName, `${where}.claimName`, {required: true})!
  const problem = dns1123Subdomain(claimName)
  if (problem) r.fail(`${where}.claimName`, `"${claimName}" is invalid: ${problem}`)
  return {claimName, readOnly: r.boolean(source.readOnly, `${where}.readOnly`) ?? false}
}

/** The claims of one run's input, by namespace and name; a claim without a namespace matches any pod's. */
export class ClaimStore {
  private readonly claims = new Map<string, ClaimObject>()

  get size(): number {
    return this.claims.size
  }

  add(claim: ClaimObject): void {
    const key = `${claim.namespace}/${claim.name}`
    const first = this.claims.get(key)
    if (first) new FieldReader(claim.source).fail('metadata.name', `${CLAIM_KIND} "${claim.name}" is already defined in ${first.source}`)
    this.claims.set(key, claim)
  }

  /** The claims no pod's volume names: not provisioned, as a WaitForFirstConsumer StorageClass waits for a pod. */
  unused(pods: readonly PodModel[]): ClaimObject[] {
    const used = (claim: ClaimObject) =>
      pods.some(
        (pod) =>
          (claim.namespace === '' || claim.namespace === pod.namespace) &&
          pod.volumes.some((volume) => volume.persistentVolumeClaim?.claimName === claim.name),
      )
    return [...this.claims.values()].filter((claim) => !used(claim))
  }

  claim(namespace: string, name: string): ClaimObject | undefined {
    return this.claims.get(`${namespace}/${name}`) ?? this.claims.get(`/${name}`)
  }
}

/** Each persistentVolumeClaim volume of the pod gets the claim document of the input that it names, if there is one. */
export function attachClaims(pod: PodModel, claims: ClaimStore): void {
  if (claims.size === 0) return
  pod.volumes = pod.volumes.map((volume) => {
    const source = volume.persistentVolumeClaim
    const claim = source && claims.claim(pod.namespace, source.claimName)
    return claim ? {...volume, persistentVolumeClaim: {...source, claim: {...claim, namespace: pod.namespace}}} : volume
  })
}
