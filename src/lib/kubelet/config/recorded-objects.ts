/**
 * The ConfigMaps and Secrets a recorded pod reads (env, envFrom, volumes, imagePullSecrets), kept
 * beside its pod.json so that a later `sync` can restart or recreate its containers with the same
 * values: the kubelet reads them again from the API server; podctl has only what `run` was given.
 *
 * They live in `<pod dir>/objects/objects.json` (mode 0600) on a tmpfs of their own, as the kubelet
 * keeps Secret data off the disk: gone with a reboot (when the pod's containers are gone too) and
 * unmounted when the pod directory is removed. pod.json itself keeps only names and keys.
 */
import {mkdir, readFile, rename, rm, writeFile} from 'node:fs/promises'

import type {ConfigMapObject, InputObjects, PodModel, SecretObject} from '../../manifest/model.js'
import {ObjectStore} from '../../manifest/objects.js'
import {liveObjects, makeEnvironmentVariables, PLACEHOLDER_NODE} from '../core/env.js'
import {podDirectory} from '../core/pod-directory.js'
import {mountsUnder, mountTmpfs, volumePayload} from '../volumes/volumes.js'

const OBJECTS_DIR = 'objects'
const OBJECTS_FILE = 'objects.json'
/** An upper bound, not a reservation: a tmpfs takes pages only as the file grows. */
const OBJECTS_TMPFS_OPTIONS = ['mode=0700', 'size=64m']

interface RecordedFile {
  configMaps: Array<{name: string; namespace: string; data: Record<string, string>; binaryData: Record<string, string>; immutable: boolean}>
  secrets: Array<{name: string; namespace: string; type: string; data: Record<string, string>}>
}

/** The objects the pod looks up, found by making its lookups (the same code that uses them). */
export function referencedObjects(pod: PodModel): {configMaps: ConfigMapObject[]; secrets: SecretObject[]} {
  const configMaps = new Map<string, ConfigMapObject>()
  const secrets = new Map<string, SecretObject>()
  const live = liveObjects(pod)
  if (!live) return {configMaps: [], secrets: []}
  const recording: InputObjects = {
    configMap(namespace, name) {
      const found = live.configMap(namespace, name)
      if (found) configMaps.set(`${found.namespace}/${found.name}`, found)
      return found
    },
    secret(namespace, name) {
      const found = live.secret(namespace, name)
      if (found) secrets.set(`${found.namespace}/${found.name}`, found)
      return found
    },
  }
  const probe: PodModel = {...pod, objects: recording}
  const node = {...PLACEHOLDER_NODE, podIPs: []}
  for (const volume of pod.volumes) {
    try {
      volumePayload(probe, volume, node)
    } catch {
      // A missing object was refused before the run; here only the ones found matter.
    }
  }

  for (const container of [...pod.initContainers, ...pod.containers]) {
    try {
      makeEnvironmentVariables(probe, container, node)
    } catch {
      // As above.
    }
  }

  for (const name of pod.imagePullSecrets ?? []) recording.secret(pod.namespace, name)
  return {configMaps: [...configMaps.values()], secrets: [...secrets.values()]}
}

const base64 = (data: Record<string, Buffer>) =>
  Object.fromEntries(Object.entries(data).map(([key, value]) => [key, value.toString('base64')]))
const decode = (data: Record<string, string>) =>
  Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value, 'base64')]))

/**
 * Keeps the objects the pod reads (none: any earlier record goes). A node where no tmpfs can be
 * mounted keeps none: a later sync then asks for the manifest again rather than put Secrets on disk.
 */
export async function recordPodObjects(root: string, pod: PodModel): Promise<void> {
  const dir = `${podDirectory(root, pod.uid)}/${OBJECTS_DIR}`
  if (!liveObjects(pod)) return
  const {configMaps, secrets} = referencedObjects(pod)
  if (configMaps.length === 0 && secrets.length === 0) {
    await rm(`${dir}/${OBJECTS_FILE}`, {force: true})
    return
  }

  await mkdir(dir, {recursive: true, mode: 0o700})
  try {
    if ((await mountsUnder(dir)).length === 0) await mountTmpfs(dir, OBJECTS_TMPFS_OPTIONS)
  } catch {
    return
  }

  const record: RecordedFile = {
    configMaps: configMaps.map(({name, namespace, data, binaryData, immutable}) => ({
      name,
      namespace,
      data,
      binaryData: base64(binaryData),
      immutable,
    })),
    secrets: secrets.map(({name, namespace, type, data}) => ({name, namespace, type, data: base64(data)})),
  }
  const temporary = `${dir}/${OBJECTS_FILE}.${process.pid}.tmp`
  await writeFile(temporary, JSON.stringify(record), {mode: 0o600})
  await rename(temporary, `${dir}/${OBJECTS_FILE}`)
}

/** The recorded objects of a pod read back from pod.json, or undefined when none were kept (or they are gone). */
export async function readPodObjects(root: string, uid: string): Promise<InputObjects | undefined> {
  try {
    const text = await readFile(`${podDirectory(root, uid)}/${OBJECTS_DIR}/${OBJECTS_FILE}`, 'utf8')
    const record = JSON.parse(text) as RecordedFile
    if (!Array.isArray(record.configMaps) || !Array.isArray(record.secrets)) return undefined
    // The same store the input's objects live in: the same lookups, and printed as names and keys only.
    const store = new ObjectStore()
    const source = 'the pod record'
    for (const {binaryData, ...configMap} of record.configMaps)
      store.add({kind: 'ConfigMap', value: {...configMap, binaryData: decode(binaryData), source}})
    for (const {data, ...secret} of record.secrets) store.add({kind: 'Secret', value: {...secret, data: decode(data), source}})
    return store
  } catch {
    return undefined
  }
}
