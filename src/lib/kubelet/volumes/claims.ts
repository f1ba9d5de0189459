/**
 * PersistentVolumeClaims on one node, as local-path-provisioner serves them: each claim is the
 * directory <claims root>/<namespace>/<claim>, made on first use (mode 0777, as the provisioner's
 * `mkdir -m 0777`, so any container user can write), kept across kill and run, and reused by the
 * next pod that names the same claim in the same namespace. Beside it (not inside, so a database
 * that wants an empty data directory gets one) <claim>.claim.json records the claim: its spec and
 * when and for which pod it was provisioned. A claim with no document in the input is provisioned
 * as a default StorageClass would (dynamically). Its data is removed only on request (removeClaim).
 */
import {existsSync} from 'node:fs'
import {chmod, lstat, mkdir, readdir, readFile, realpath, rm, writeFile} from 'node:fs/promises'
import {dirname, join, resolve} from 'node:path'

import {DEFAULT_CLAIMS_ROOT, podFullName} from '../../kube/helpers.js'
import type {ClaimObject, PodModel, VolumeModel} from '../../manifest/model.js'

export const CLAIM_RECORD_SUFFIX = '.claim.json'

/** The configured root when no flag names one: $PODCTL_CLAIMS_ROOT (what --claims-root reads too), else the default. */
export function claimsRootFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.PODCTL_CLAIMS_ROOT || DEFAULT_CLAIMS_ROOT
}

export function claimDirectory(root: string, namespace: string, claimName: string): string {
  return `${root.replace(/\/+$/, '')}/${namespace}/${claimName}`
}

export function claimRecordPath(directory: string): string {
  return `${directory}${CLAIM_RECORD_SUFFIX}`
}

/** A volume served from its claim directory: a claim volume that no --volume binds. */
export function isClaimVolume(volume: VolumeModel): boolean {
  return Boolean(volume.persistentVolumeClaim && !volume.hostPath)
}

/** The claim directory of a claim volume: the path the run resolved, else under the configured root. */
export function claimHostPath(pod: PodModel, volume: VolumeModel): string {
  const source = volume.persistentVolumeClaim!
  return source.path ?? claimDirectory(claimsRootFromEnv(), pod.namespace, source.claimName)
}

/**
 * Fixes each claim volume's directory under `root` (so the recorded pod keeps it), and says which
 * claims will be provisioned without a claim document: one line per claim, for the user.
 */
export function resolveClaims(pods: readonly PodModel[], root: string): string[] {
  const notes = new Map<string, string>()
  for (const pod of pods) {
    pod.volumes = pod.volumes.map((volume) => {
      if (!isClaimVolume(volume)) return volume
      const source = volume.persistentVolumeClaim!
      const path = claimDirectory(root, pod.namespace, source.claimName)
      const key = `${pod.namespace}/${source.claimName}`
      if (!source.claim && !existsSync(path) && !notes.has(key)) {
        notes.set(
          key,
          `claim ${key} (pod ${podFullName(pod.name, pod.namespace)}) is neither in the input nor on disk: ` +
            `provisioned empty at ${path} when the pod starts, as by a default StorageClass`,
        )
      }

      return {...volume, persistentVolumeClaim: {...source, path}}
    })
  }

  return [...notes.values()]
}

/** What <claim>.claim.json holds. */
export interface ClaimRecord {
  name: string
  namespace: string
  /** From the claim document of the input, or made up (ReadWriteOnce, no size) for a claim with none. */
  spec: {accessModes: string[]; storage?: string; storageClassName?: string; volumeMode: 'Filesystem'}
  provisioned: 'claim document' | 'dynamic'
  createdAt: string
  /** The pod it was first provisioned for. */
  createdFor: string
}

function claimRecord(pod: PodModel, claimName: string, claim: ClaimObject | undefined): ClaimRecord {
  const spec = claim
    ? {
        accessModes: claim.accessModes,
        storage: claim.storage,
        ...(claim.storageClassName ? {storageClassName: claim.storageClassName} : {}),
        volumeMode: claim.volumeMode,
      }
    : {accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem' as const}
  return {
    name: claimName,
    namespace: pod.namespace,
    spec,
    provisioned: claim ? 'claim document' : 'dynamic',
    createdAt: new Date().toISOString(),
    createdFor: podFullName(pod.name, pod.namespace),
  }
}

/** The claim's directory, made (0777) and recorded on first use; an existing one is reused as it is. */
export async function provisionClaim(pod: PodModel, volume: VolumeModel): Promise<string> {
  const path = claimHostPath(pod, volume)
  const info = await lstat(path).catch(() => undefined)
  if (info && !info.isDirectory()) throw new Error(`claim directory ${path} is not a directory; move it away`)
  if (!info) {
    await mkdir(dirname(path), {recursive: true, mode: 0o755})
    await mkdir(path, {mode: 0o777}).catch((error: NodeJS.ErrnoException) => {
      // Another pod of the same run made it first.
      if (error.code !== 'EEXIST') throw error
    })
    await chmod(path, 0o777)
  }

  const record = claimRecordPath(path)
  if (!existsSync(record)) {
    const {claimName, claim} = volume.persistentVolumeClaim!
    await writeFile(record, `${JSON.stringify(claimRecord(pod, claimName, claim), null, 2)}\n`, {mode: 0o644, flag: 'wx'}).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error
      },
    )
  }

  return path
}

/** A claim directory found under the root, with its record (if readable) and size in bytes. */
export interface ClaimOnDisk {
  namespace: string
  name: string
  path: string
  record?: ClaimRecord
  bytes: number
}

async function diskUsage(path: string): Promise<number> {
  const info = await lstat(path).catch(() => undefined)
  if (!info) return 0
  if (!info.isDirectory()) return info.size
  let total = 0
  for (const entry of await readdir(path).catch(() => [])) total += await diskUsage(join(path, entry))
  return total
}

/** Every claim directory under the root (<root>/<namespace>/<claim>), sorted by namespace and name. */
export async function listClaims(root: string): Promise<ClaimOnDisk[]> {
  const out: ClaimOnDisk[] = []
  for (const namespace of (await readdir(root).catch(() => [])).sort()) {
    const names = await readdir(join(root, namespace)).catch(() => [])
    for (const name of names.sort()) {
      const path = claimDirectory(root, namespace, name)
      if (name.endsWith(CLAIM_RECORD_SUFFIX) || !(await lstat(path)).isDirectory()) continue
      const record = await readFile(claimRecordPath(path), 'utf8')
        .then((text) => JSON.parse(text) as ClaimRecord)
        .catch(() => undefined)
      out.push({namespace, name, path, ...(record ? {record} : {}), bytes: await diskUsage(path)})
    }
  }

  return out
}

/**
 * Removes a claim's directory and record, only when it is exactly <root>/<namespace>/<name> (no
 * symlink out of the root), and, given the path a pod recorded, when that is the same directory:
 * 'outside' leaves it alone, 'absent' says there was nothing to remove.
 */
export async function removeClaim(
  root: string,
  namespace: string,
  name: string,
  recordedPath?: string,
): Promise<'removed' | 'absent' | 'outside'> {
  if ([namespace, name].some((part) => part === '' || part === '.' || part === '..' || part.includes('/'))) return 'outside'
  if (recordedPath !== undefined) {
    const real = (path: string) => realpath(path).catch(() => resolve(path))
    const expected = claimDirectory(resolve(root), namespace, name)
    if ((await real(recordedPath)) !== (await real(expected))) return 'outside'
  }

  const realRoot = await realpath(root).catch(() => undefined)
  if (!realRoot) return 'absent'
  if (realRoot === '/') return 'outside'
  const path = claimDirectory(realRoot, namespace, name)
  const parent = await realpath(dirname(path)).catch(() => undefined)
  if (parent === undefined) return 'absent'
  if (parent !== join(realRoot, namespace)) return 'outside'
  const info = await lstat(path).catch(() => undefined)
  await rm(claimRecordPath(path), {force: true})
  if (!info) return 'absent'
  if (!info.isDirectory()) return 'outside'
  await rm(path, {recursive: true, force: true})
  return 'removed'
}
