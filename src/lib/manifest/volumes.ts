/**
 * spec.volumes and volumeMounts as the API server validates them: hostPath, emptyDir (medium
 * Memory, sizeLimit), configMap, secret, downwardAPI and projected volumes with items, modes and
 * optional; persistentVolumeClaim (claims.ts, served from a local directory per claim); image volumes
 * (the runtime mounts an image's content, read-only); every other
 * volume source (nfs, csi, ...) is read as `external`, to be bound to a host directory with
 * --volume NAME=DIR (inputs.ts). Mount options: subPath,
 * subPathExpr, mountPropagation, readOnly, recursiveReadOnly.
 */
import {readClaimSource} from './claims.js'
import {configKey, readFieldRef, readResourceFieldRef, VOLUME_FIELD_PATHS} from './env.js'
import {type FieldReader, type Json} from './fields.js'
import {PULL_POLICIES, type PullPolicy} from '../kube/labels.js'
import type {DownwardAPIFileModel, HostPathType, KeyToPathModel, VolumeModel, VolumeMountModel, VolumeProjectionModel} from './model.js'
import {dns1123Label, dns1123Subdomain} from './names.js'
import {HOST_PATH_RULE, HOST_PATH_TYPES} from './pod-fields.js'
import {isNegative, parseQuantity} from './quantity.js'

/** Every volume source of a v1 Volume, besides name. */
const PLUGINS = ['hostPath', 'emptyDir', 'configMap', 'secret', 'downwardAPI', 'projected', 'persistentVolumeClaim', 'image'] as const
export const EXTERNAL_SOURCES = [
  'nfs',
  'csi',
  'ephemeral',
  'iscsi',
  'cinder',
  'gitRepo',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'azureDisk',
  'vsphereVolume',
  'quobyte',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
] as const

export const VOLUME_RULE = {api: 'Volume', supported: ['name', ...PLUGINS, ...EXTERNAL_SOURCES]}
const EMPTY_DIR_RULE = {api: 'EmptyDirVolumeSource', supported: ['medium', 'sizeLimit']}
const CONFIG_MAP_RULE = {api: 'ConfigMapVolumeSource', supported: ['name', 'items', 'defaultMode', 'optional']}
const SECRET_RULE = {api: 'SecretVolumeSource', supported: ['secretName', 'items', 'defaultMode', 'optional']}
const KEY_TO_PATH_RULE = {api: 'KeyToPath', supported: ['key', 'path', 'mode']}
const DOWNWARD_API_RULE = {api: 'DownwardAPIVolumeSource', supported: ['items', 'defaultMode']}
const DOWNWARD_FILE_RULE = {api: 'DownwardAPIVolumeFile', supported: ['path', 'fieldRef', 'resourceFieldRef', 'mode']}
const PROJECTED_RULE = {api: 'ProjectedVolumeSource', supported: ['sources', 'defaultMode']}
const PROJECTION_RULE = {
  api: 'VolumeProjection',
  supported: ['configMap', 'secret', 'downwardAPI', 'serviceAccountToken', 'clusterTrustBundle'],
  unsupported: {podCertificate: ''},
}
const PROJECTED_CONFIG_MAP_RULE = {api: 'ConfigMapProjection', supported: ['name', 'items', 'optional']}
const PROJECTED_SECRET_RULE = {api: 'SecretProjection', supported: ['name', 'items', 'optional']}
const IMAGE_VOLUME_RULE = {api: 'ImageVolumeSource', supported: ['reference', 'pullPolicy']}
const PROJECTED_DOWNWARD_RULE = {api: 'DownwardAPIProjection', supported: ['items']}
export const VOLUME_MOUNT_RULE = {
  api: 'VolumeMount',
  supported: ['name', 'mountPath', 'readOnly', 'subPath', 'subPathExpr', 'mountPropagation', 'recursiveReadOnly'],
}

/** The kubelet's default file mode for configMap, secret, downwardAPI and projected volumes. */
export const DEFAULT_FILE_MODE = 0o644
const MODE_RANGE = {min: 0, max: 0o777}

function check(r: FieldReader, path: string, value: string, problem: string | undefined): void {
  if (problem) r.fail(path, `"${value}" is invalid: ${problem}`)
}

/** validateLocalDescendingPath: relative, no '..' element. */
function descendingPath(r: FieldReader, value: string, path: string): void {
  if (value.startsWith('/')) r.fail(path, `"${value}" must be a relative path`)
  if (value.split('/').includes('..')) r.fail(path, `"${value}" must not contain '..'`)
}

/** validateLocalNonReservedPath: also not starting with '..' (the atomic writer's own names). */
function filePath(r: FieldReader, value: string, path: string): void {
  if (value === '') r.fail(path, 'is required')
  descendingPath(r, value, path)
  if (value.startsWith('..')) r.fail(path, `"${value}" must not start with '..'`)
}

function mode(r: FieldReader, value: Json | undefined, path: string): number | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0o777) {
    r.fail(path, 'must be a number between 0 and 0777 (octal), both inclusive')
  }

  return r.integer(value, path, MODE_RANGE)
}

function readItems(r: FieldReader, value: Json | undefined, path: string): KeyToPathModel[] {
  return r.list(value, path).map((entry, index) => {
    const where = `${path}[${index}]`
    const item = r.object(entry, where, KEY_TO_PATH_RULE)
    const key = r.requiredString(item.key, `${where}.key`)
    check(r, `${where}.key`, key, configKey(key))
    const itemPath = r.requiredString(item.path, `${where}.path`)
    filePath(r, itemPath, `${where}.path`)
    const itemMode = mode(r, item.mode, `${where}.mode`)
    return itemMode === undefined ? {key, path: itemPath} : {key, path: itemPath, mode: itemMode}
  })
}

function readDownwardItems(r: FieldReader, value: Json | undefined, path: string): DownwardAPIFileModel[] {
  return r.list(value, path).map((entry, index) => {
    const where = `${path}[${index}]`
    const item = r.object(entry, where, DOWNWARD_FILE_RULE)
    const itemPath = r.requiredString(item.path, `${where}.path`)
    filePath(r, itemPath, `${where}.path`)
    const hasField = item.fieldRef !== undefined && item.fieldRef !== null
    const hasResource = item.resourceFieldRef !== undefined && item.resourceFieldRef !== null
    if (hasField === hasResource) r.fail(where, 'must specify exactly one of: fieldRef or resourceFieldRef')
    const out: DownwardAPIFileModel = {path: itemPath}
    if (hasField) out.fieldRef = readFieldRef(r, item.fieldRef, `${where}.fieldRef`, VOLUME_FIELD_PATHS)
    else out.resourceFieldRef = readResourceFieldRef(r, item.resourceFieldRef, `${where}.resourceFieldRef`, true)
    const itemMode = mode(r, item.mode, `${where}.mode`)
    if (itemMode !== undefined) out.mode = itemMode
    return out
  })
}

function objectName(r: FieldReader, value: Json | undefined, path: string): string {
  const name = r.requiredString(value, path)
  check(r, path, name, dns1123Subdomain(name))
  return name
}

function readProjection(r: FieldReader, entry: Json, where: string): VolumeProjectionModel {
  const source = r.object(entry, where, PROJECTION_RULE)
  const given = PROJECTION_RULE.supported.filter((key) => source[key] !== undefined && source[key] !== null)
  if (given.length !== 1)
    r.fail(where, 'must specify exactly one of: configMap, secret, downwardAPI, serviceAccountToken or clusterTrustBundle')
  const [kind] = given
  if (kind === 'configMap' || kind === 'secret') {
    const ref = r.object(source[kind], `${where}.${kind}`, kind === 'configMap' ? PROJECTED_CONFIG_MAP_RULE : PROJECTED_SECRET_RULE)
    const value = {
      name: objectName(r, ref.name, `${where}.${kind}.name`),
      items: readItems(r, ref.items, `${where}.${kind}.items`),
      optional: r.boolean(ref.optional, `${where}.${kind}.optional`) ?? false,
    }
    return kind === 'configMap' ? {configMap: value} : {secret: value}
  }

  if (kind === 'downwardAPI') {
    const downward = r.object(source.downwardAPI, `${where}.downwardAPI`, PROJECTED_DOWNWARD_RULE)
    return {downwardAPI: {items: readDownwardItems(r, downward.items, `${where}.downwardAPI.items`)}}
  }

  return {skipped: kind as 'serviceAccountToken' | 'clusterTrustBundle'}
}

export function readVolume(r: FieldReader, item: Json, path: string): VolumeModel {
  const volume = r.object(item, path, VOLUME_RULE)
  const name = r.requiredString(volume.name, `${path}.name`)
  check(r, `${path}.name`, name, dns1123Label(name))
  const sources = [...PLUGINS, ...EXTERNAL_SOURCES].filter((key) => volume[key] !== undefined)
  if (sources.length > 1) r.fail(path, `may not specify more than one volume type (${sources.join(' and ')})`)
  // A volume with no source is an emptyDir (the API server's default).
  const [kind = 'emptyDir'] = sources
  const where = `${path}.${kind}`
  switch (kind) {
    case 'hostPath': {
      const hostPath = r.object(volume.hostPath, where, HOST_PATH_RULE)
      const hostPathPath = r.requiredString(hostPath.path, `${where}.path`)
      if (!hostPathPath.startsWith('/')) r.fail(`${where}.path`, `"${hostPathPath}" must be an absolute path`)
      if (hostPathPath.split('/').includes('..')) r.fail(`${where}.path`, `"${hostPathPath}" must not contain '..'`)
      const type = r.oneOf<HostPathType>(hostPath.type, `${where}.type`, HOST_PATH_TYPES) ?? ''
      return {name, hostPath: {path: hostPathPath, type}}
    }

    case 'emptyDir': {
      const emptyDir = r.object(volume.emptyDir, where, EMPTY_DIR_RULE)
      const medium = r.string(emptyDir.medium, `${where}.medium`)
      if (medium && medium !== 'Memory') r.fail(`${where}.medium`, `"${medium}" is not supported by podctl; use "" (disk) or Memory`)
      let sizeLimit: string | undefined
      if (emptyDir.sizeLimit !== undefined && emptyDir.sizeLimit !== null) {
        const quantity =
          typeof emptyDir.sizeLimit === 'string' || typeof emptyDir.sizeLimit === 'number' ? parseQuantity(emptyDir.sizeLimit) : undefined
        if (!quantity || isNegative(quantity)) r.fail(`${where}.sizeLimit`, 'must be a quantity such as 64Mi or 1Gi')
        sizeLimit = quantity.text
      }

      return {name, emptyDir: {...(medium ? {medium: 'Memory' as const} : {}), ...(sizeLimit ? {sizeLimit} : {})}}
    }

    case 'configMap':
    case 'secret': {
      const isSecret = kind === 'secret'
      const source = r.object(volume[kind], where, isSecret ? SECRET_RULE : CONFIG_MAP_RULE)
      const objectKey = isSecret ? 'secretName' : 'name'
      const value = {
        name: objectName(r, source[objectKey], `${where}.${objectKey}`),
        items: readItems(r, source.items, `${where}.items`),
        defaultMode: mode(r, source.defaultMode, `${where}.defaultMode`) ?? DEFAULT_FILE_MODE,
        optional: r.boolean(source.optional, `${where}.optional`) ?? false,
      }
      if (!isSecret) return {name, configMap: value}
      const {name: secretName, ...rest} = value
      return {name, secret: {secretName, ...rest}}
    }

    case 'downwardAPI': {
      const source = r.object(volume.downwardAPI, where, DOWNWARD_API_RULE)
      return {
        name,
        downwardAPI: {
          items: readDownwardItems(r, source.items, `${where}.items`),
          defaultMode: mode(r, source.defaultMode, `${where}.defaultMode`) ?? DEFAULT_FILE_MODE,
        },
      }
    }

    case 'projected': {
      const source = r.object(volume.projected, where, PROJECTED_RULE)
      const projections = r
        .list(source.sources, `${where}.sources`)
        .map((entry, index) => readProjection(r, entry, `${where}.sources[${index}]`))
      const paths = new Set<string>()
      for (const [index, projection] of projections.entries()) {
        const items = projection.configMap?.items ?? projection.secret?.items ?? projection.downwardAPI?.items ?? []
        for (const file of items) {
          if (paths.has(file.path)) r.fail(`${where}.sources[${index}]`, `conflicting duplicate paths: "${file.path}"`)
          paths.add(file.path)
        }
      }

      return {
        name,
        projected: {sources: projections, defaultMode: mode(r, source.defaultMode, `${where}.defaultMode`) ?? DEFAULT_FILE_MODE},
      }
    }

    case 'persistentVolumeClaim': {
      return {name, persistentVolumeClaim: readClaimSource(r, volume.persistentVolumeClaim, where)}
    }

    case 'image': {
      const source = r.object(volume.image, where, IMAGE_VOLUME_RULE)
      const reference = r.requiredString(source.reference, `${where}.reference`)
      const pullPolicy = r.oneOf<PullPolicy>(source.pullPolicy, `${where}.pullPolicy`, PULL_POLICIES)
      return {name, image: {reference, ...(pullPolicy ? {pullPolicy} : {})}}
    }

    default:
      // The source's own fields are the storage system's business; on a single node only --volume binds it.
      r.object(volume[kind], where, {supported: Object.keys(asObject(volume[kind]))})
      return {name, external: {source: kind}}
  }
}

function asObject(value: Json | undefined): Record<string, Json> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {}
}

const PROPAGATIONS = ['None', 'HostToContainer', 'Bidirectional'] as const
const RECURSIVE_READ_ONLY = ['Disabled', 'IfPossible', 'Enabled'] as const

export interface MountContext {
  volumeNames: Set<string>
  /** The container's securityContext.privileged: Bidirectional propagation needs it. */
  privileged: boolean
}

/** One volumeMounts entry (validateVolumeMounts). mountPaths collects this container's paths for the uniqueness check. */
export function readVolumeMount(
  r: FieldReader,
  entry: Json,
  where: string,
  context: MountContext,
  mountPaths: Set<string>,
): VolumeMountModel {
  const mount = r.object(entry, where, VOLUME_MOUNT_RULE)
  const volume = r.requiredString(mount.name, `${where}.name`)
  if (!context.volumeNames.has(volume)) r.fail(`${where}.name`, `"${volume}" is not a volume of this pod; declare it under spec.volumes`)
  const mountPath = r.requiredString(mount.mountPath, `${where}.mountPath`)
  if (!mountPath.startsWith('/')) r.fail(`${where}.mountPath`, `"${mountPath}" must be an absolute path`)
  if (mountPaths.has(mountPath)) r.fail(`${where}.mountPath`, `"${mountPath}" must be unique`)
  mountPaths.add(mountPath)
  const out: VolumeMountModel = {name: volume, mountPath, readOnly: r.boolean(mount.readOnly, `${where}.readOnly`) ?? false}
  const subPath = r.string(mount.subPath, `${where}.subPath`) || undefined
  const subPathExpr = r.string(mount.subPathExpr, `${where}.subPathExpr`) || undefined
  if (subPath && subPathExpr) r.fail(`${where}.subPathExpr`, 'subPathExpr and subPath are mutually exclusive')
  if (subPath) {
    descendingPath(r, subPath, `${where}.subPath`)
    out.subPath = subPath
  }

  if (subPathExpr) {
    descendingPath(r, subPathExpr, `${where}.subPathExpr`)
    out.subPathExpr = subPathExpr
  }

  const propagation = r.oneOf(mount.mountPropagation, `${where}.mountPropagation`, PROPAGATIONS)
  if (propagation === 'Bidirectional' && !context.privileged) {
    r.fail(`${where}.mountPropagation`, 'Bidirectional mount propagation is available only to privileged containers')
  }

  if (propagation) out.mountPropagation = propagation
  const recursive = r.oneOf(mount.recursiveReadOnly, `${where}.recursiveReadOnly`, RECURSIVE_READ_ONLY)
  if (recursive && recursive !== 'Disabled' && !out.readOnly)
    r.fail(`${where}.recursiveReadOnly`, `may only be ${recursive} if readOnly is set`)
  if (recursive === 'Enabled' && propagation && propagation !== 'None') {
    r.fail(`${where}.recursiveReadOnly`, 'may only be Enabled if mountPropagation is None')
  }

  if (recursive) out.recursiveReadOnly = recursive
  return out
}
