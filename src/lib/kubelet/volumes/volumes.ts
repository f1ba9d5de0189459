/**
 * The kubelet's volume plugins for what a single node can serve, under the pod directory at
 * <pod-dir>/volumes/kubernetes.io~<plugin>/<name>: configMap, secret, downwardAPI and projected
 * volumes (their payloads, MakePayload / CollectData, written by the AtomicWriter, then
 * SetVolumeOwnership for fsGroup), emptyDir with medium Memory (a tmpfs of sizeLimit), and
 * secret and projected volumes on a tmpfs too, as the kubelet keeps secrets off the disk.
 * Mounts made here are unmounted before the pod directory is removed.
 */
import {execFile} from 'node:child_process'
import {readFile} from 'node:fs/promises'
import {promisify} from 'node:util'

import type {ConfigMapObject, DownwardAPIFileModel, KeyToPathModel, PodModel, SecretObject, VolumeModel} from '../../manifest/model.js'
import {parseQuantity, quantityValue} from '../../manifest/quantity.js'
import {type FileProjection, type Payload} from './atomic-writer.js'
import {type DownwardContext, fieldRefValue, liveObjects, resourceFieldRefValue} from '../core/env.js'

const run = promisify(execFile)

/** The kubelet's plugin directory names (kubernetes.io~<plugin>). */
export function volumePluginDir(volume: VolumeModel): string | undefined {
  if (volume.configMap) return 'kubernetes.io~configmap'
  if (volume.secret) return 'kubernetes.io~secret'
  if (volume.downwardAPI) return 'kubernetes.io~downward-api'
  if (volume.projected) return 'kubernetes.io~projected'
  if (volume.emptyDir) return 'kubernetes.io~empty-dir'
  return undefined
}

/**
 * The plugins whose mounts are always read-only (their Mounter attributes), whatever volumeMounts
 * says (image volumes included); and a claim volume with persistentVolumeClaim.readOnly.
 */
export function isReadOnlyVolume(volume: VolumeModel | undefined): boolean {
  return Boolean(
    volume &&
    (volume.configMap || volume.secret || volume.downwardAPI || volume.projected || volume.image || volume.persistentVolumeClaim?.readOnly),
  )
}

/** Volumes kept on a tmpfs: emptyDir medium Memory, and secret and projected volumes (the kubelet's wrapped Memory emptyDir). */
export function isMemoryBacked(volume: VolumeModel): boolean {
  return volume.emptyDir?.medium === 'Memory' || Boolean(volume.secret || volume.projected)
}

/** A volume that cannot be set up: the kubelet's MountVolume.SetUp failure text. */
export class VolumeSetupError extends Error {}

/**
 * A volume whose files come from ConfigMaps or Secrets that this pod model cannot read (a recorded
 * pod): a recreation keeps what the volume holds, as written by the run that recorded the pod.
 */
export function keepsRecordedPayload(pod: PodModel, volume: VolumeModel): boolean {
  if (pod.objects === undefined || liveObjects(pod)) return false
  return Boolean(volume.configMap || volume.secret || volume.projected?.sources.some((source) => source.configMap || source.secret))
}

function keyPayload(
  kind: 'configmap' | 'secret',
  data: Record<string, Buffer | string>,
  items: KeyToPathModel[],
  defaultMode: number,
  optional: boolean,
): Payload {
  const payload: Payload = new Map()
  if (items.length === 0) {
    for (const [key, value] of Object.entries(data)) payload.set(key, {data: Buffer.from(value), mode: defaultMode})
    return payload
  }

  for (const item of items) {
    if (!Object.hasOwn(data, item.key)) {
      if (optional) continue
      throw new VolumeSetupError(
        `${kind === 'configmap' ? 'configmap references non-existent config key' : 'references non-existent secret key'}: ${item.key}`,
      )
    }

    payload.set(item.path, {data: Buffer.from(data[item.key]), mode: item.mode ?? defaultMode})
  }

  return payload
}

function configMapData(configMap: ConfigMapObject): Record<string, Buffer | string> {
  return {...configMap.binaryData, ...configMap.data}
}

function configMapPayload(pod: PodModel, ref: {name: string; items: KeyToPathModel[]; optional: boolean}, defaultMode: number): Payload {
  const found = liveObjects(pod)?.configMap(pod.namespace, ref.name)
  if (!found) {
    if (ref.optional) return new Map()
    throw new VolumeSetupError(`configmap "${ref.name}" not found`)
  }

  return keyPayload('configmap', configMapData(found), ref.items, defaultMode, ref.optional)
}

function secretPayload(pod: PodModel, ref: {name: string; items: KeyToPathModel[]; optional: boolean}, defaultMode: number): Payload {
  const found: SecretObject | undefined = liveObjects(pod)?.secret(pod.namespace, ref.name)
  if (!found) {
    if (ref.optional) return new Map()
    throw new VolumeSetupError(`secret "${ref.name}" not found`)
  }

  return keyPayload('secret', found.data, ref.items, defaultMode, ref.optional)
}

function downwardPayload(pod: PodModel, items: DownwardAPIFileModel[], defaultMode: number, context: DownwardContext): Payload {
  const payload: Payload = new Map()
  for (const item of items) {
    let value: string
    if (item.fieldRef) value = fieldRefValue(pod, item.fieldRef.fieldPath, context)
    else {
      const containerName = item.resourceFieldRef!.containerName
      const container = [...pod.initContainers, ...pod.containers].find((candidate) => candidate.name === containerName)
      if (!container) throw new VolumeSetupError(`container ${containerName} not found in the pod`)
      value = resourceFieldRefValue(pod, item.resourceFieldRef!, container, context.allocatable)
    }

    payload.set(item.path, {data: Buffer.from(value, 'utf8'), mode: item.mode ?? defaultMode})
  }

  return payload
}

/**
 * The files of a configMap, secret, downwardAPI or projected volume; undefined for other volumes.
 * Throws VolumeSetupError for a missing non-optional ConfigMap, Secret or key.
 */
export function volumePayload(pod: PodModel, volume: VolumeModel, context: DownwardContext): Payload | undefined {
  if (volume.configMap) return configMapPayload(pod, volume.configMap, volume.configMap.defaultMode)
  if (volume.secret) return secretPayload(pod, {...volume.secret, name: volume.secret.secretName}, volume.secret.defaultMode)
  if (volume.downwardAPI) return downwardPayload(pod, volume.downwardAPI.items, volume.downwardAPI.defaultMode, context)
  if (!volume.projected) return undefined
  const payload: Payload = new Map()
  const {defaultMode} = volume.projected
  for (const source of volume.projected.sources) {
    let part: Payload = new Map()
    if (source.configMap) part = configMapPayload(pod, source.configMap, defaultMode)
    else if (source.secret) part = secretPayload(pod, source.secret, defaultMode)
    else if (source.downwardAPI) part = downwardPayload(pod, source.downwardAPI.items, defaultMode, context)
    for (const [path, file] of part) payload.set(path, file)
  }

  return payload
}

/** Which secret-held files a payload has (for plans that list files without their content). */
export function payloadSummary(payload: Payload): Array<{path: string; mode: string; bytes: number}> {
  return [...payload.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([path, file]: [string, FileProjection]) => ({path, mode: `0${file.mode.toString(8)}`, bytes: file.data.length}))
}

/** tmpfs options: size=<bytes> from emptyDir.sizeLimit. */
export function tmpfsOptions(volume: VolumeModel): string[] {
  const limit = volume.emptyDir?.sizeLimit
  return limit ? [`size=${quantityValue(parseQuantity(limit)!)}`] : []
}

export async function mountTmpfs(dir: string, options: string[]): Promise<void> {
  const args = ['-t', 'tmpfs', ...(options.length > 0 ? ['-o', options.join(',')] : []), 'tmpfs', dir]
  try {
    await run('mount', args)
  } catch (error) {
    const stderr = String((error as {stderr?: string}).stderr ?? '').trim()
    throw new VolumeSetupError(`mount of a tmpfs at ${dir} failed: ${stderr || (error as Error).message}`)
  }
}

/** Mount points at or below dir, deepest first (from /proc/self/mountinfo). */
export async function mountsUnder(dir: string): Promise<string[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '')
  const prefix = dir.replace(/\/+$/, '')
  const points = text
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => point !== undefined)
    .map((point) => point.replaceAll(/\\([0-7]{3})/g, (_match, octal: string) => String.fromCodePoint(Number.parseInt(octal, 8))))
    .filter((point) => point === prefix || point.startsWith(`${prefix}/`))
  return [...new Set(points)].sort((a, b) => b.length - a.length)
}

/** Unmounts every mount below dir (a tmpfs of a volume) before the directory is removed; a busy one is detached lazily. */
export async function unmountUnder(dir: string): Promise<void> {
  for (const point of await mountsUnder(dir)) {
    try {
      await run('umount', [point])
    } catch {
      await run('umount', ['-l', point]).catch(() => {})
    }
  }
}
