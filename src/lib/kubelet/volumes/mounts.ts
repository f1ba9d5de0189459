/**
 * The kubelet's makeMounts (kubelet_pods.go) for volumeMounts: the volume's host path, or a path
 * inside it for subPath / subPathExpr (expanded from the container's env, ExpandContainerVolumeMounts),
 * created when missing and resolved so it cannot leave the volume (the kubelet's safe subpath);
 * read-only when asked or when the plugin is read-only (configMap, secret, downwardAPI, projected);
 * mountPropagation and recursiveReadOnly as CRI fields.
 */
import {mkdir, realpath, stat} from 'node:fs/promises'
import {join, sep} from 'node:path'

import type {Mount, MountPropagation} from '../../../generated/runtime/v1/api.js'
import {expandReferences} from '../../kube/expansion.js'
import type {ContainerModel, PodModel, VolumeMountModel} from '../../manifest/model.js'
import {isReadOnlyVolume} from './volumes.js'

type CriMount = Partial<Mount>

const PROPAGATION: Record<NonNullable<VolumeMountModel['mountPropagation']>, MountPropagation> = {
  None: 'PROPAGATION_PRIVATE' as MountPropagation,
  HostToContainer: 'PROPAGATION_HOST_TO_CONTAINER' as MountPropagation,
  Bidirectional: 'PROPAGATION_BIDIRECTIONAL' as MountPropagation,
}

/** A subPath the kubelet refuses (CreateContainerConfigError). */
export class SubPathError extends Error {}

/** The mount's subPath, subPathExpr expanded against the env (every reference must have a non-empty value). */
export function mountSubPath(mount: VolumeMountModel, env: ReadonlyMap<string, string>): string | undefined {
  if (mount.subPath) return mount.subPath
  if (!mount.subPathExpr) return undefined
  const missing = new Set<string>()
  const expanded = expandReferences(mount.subPathExpr, (name) => {
    const value = env.get(name)
    if (!value) missing.add(name)
    return value ?? ''
  })
  if (missing.size > 0) throw new SubPathError(`missing value for ${[...missing].sort().join(', ')}`)
  if (expanded.startsWith('/')) throw new SubPathError(`error SubPath \`${expanded}\` must not be an absolute path`)
  if (expanded.split('/').includes('..')) throw new SubPathError(`error SubPath \`${expanded}\` must not contain '..'`)
  return expanded
}

/**
 * Host paths of the container's subPath mounts (index in volumeMounts → path), made and resolved
 * now, as the kubelet prepares them before CreateContainer: a missing subdirectory is created with
 * the volume's mode; a symlink (a configMap key) is followed but must stay inside the volume.
 */
export async function prepareSubPaths(
  container: ContainerModel,
  volumePaths: ReadonlyMap<string, string>,
  env: ReadonlyMap<string, string>,
): Promise<Map<number, string>> {
  const out = new Map<number, string>()
  for (const [index, mount] of container.volumeMounts.entries()) {
    const subPath = mountSubPath(mount, env)
    const volumePath = volumePaths.get(mount.name)
    if (subPath === undefined || volumePath === undefined) continue
    const volumeReal = await realpath(volumePath)
    const wanted = join(volumePath, subPath)
    const exists = await stat(wanted).then(
      () => true,
      () => false,
    )
    if (!exists) {
      const {mode} = await stat(volumeReal)
      await mkdir(wanted, {recursive: true, mode: mode & 0o7777})
    }

    const resolved = await realpath(wanted)
    if (resolved !== volumeReal && !resolved.startsWith(`${volumeReal}${sep}`)) {
      throw new SubPathError(`subpath "${subPath}" not within volume path "${volumePath}"`)
    }

    out.set(index, resolved)
  }

  return out
}

/**
 * An image volume's mount: the runtime mounts the image (by the ID the pull gave) read-only, a
 * subPath (or expanded subPathExpr) of it as image_sub_path, as the kubelet's makeMounts does.
 */
function imageMount(mount: VolumeMountModel, image: {imageRef: string; reference: string}, env: ReadonlyMap<string, string>): CriMount {
  let subPath: string | undefined
  try {
    subPath = mountSubPath(mount, env)
  } catch {
    subPath = mount.subPathExpr
  }

  return {
    containerPath: mount.mountPath,
    hostPath: '',
    readonly: true,
    selinuxRelabel: false,
    propagation: PROPAGATION[mount.mountPropagation ?? 'None'],
    image: {image: image.imageRef, userSpecifiedImage: image.reference, annotations: {}, runtimeHandler: '', imageRef: ''},
    imageSubPath: subPath ?? '',
  }
}

/** The CRI mounts of the container's volumeMounts, in order. */
export function volumeMounts(
  pod: PodModel,
  container: ContainerModel,
  volumePaths: ReadonlyMap<string, string>,
  options: {
    env?: ReadonlyMap<string, string>
    subPaths?: ReadonlyMap<number, string>
    /** Each image volume's image, as ensured before CreateContainer (volume name → ID and reference). */
    images?: ReadonlyMap<string, {imageRef: string; reference: string}>
  } = {},
): CriMount[] {
  return container.volumeMounts.map((mount, index) => {
    const volume = pod.volumes.find((candidate) => candidate.name === mount.name)
    const image = options.images?.get(mount.name)
    if (volume?.image && image) return imageMount(mount, image, options.env ?? new Map())
    const volumePath = volumePaths.get(mount.name) ?? ''
    let hostPath = options.subPaths?.get(index)
    if (hostPath === undefined) {
      let subPath: string | undefined
      try {
        subPath = mountSubPath(mount, options.env ?? new Map())
      } catch {
        subPath = mount.subPathExpr
      }

      hostPath = subPath ? join(volumePath, subPath) : volumePath
    }

    const readonly = mount.readOnly || isReadOnlyVolume(volume)
    // IfPossible stays a plain read-only mount: podctl does not ask the runtime whether it can do more.
    return {
      containerPath: mount.mountPath,
      hostPath,
      readonly,
      selinuxRelabel: false,
      propagation: PROPAGATION[mount.mountPropagation ?? 'None'],
      ...(mount.recursiveReadOnly === 'Enabled' ? {recursiveReadOnly: true} : {}),
    }
  })
}
