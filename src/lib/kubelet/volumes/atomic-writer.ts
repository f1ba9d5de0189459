/**
 * The kubelet's AtomicWriter (pkg/volume/util/atomic_writer.go), for configMap, secret,
 * downwardAPI and projected volumes. The files go into a new hidden directory named for the time
 * (`..2026_11_30_17_45_01.123456789`), the `..data` symlink is switched to it in one rename, and
 * each top-level entry of the payload is a symlink `name -> ..data/name`; so a reader sees either
 * the old or the new set of files, never a mix. Then ownership (SetVolumeOwnership) for fsGroup.
 */
import {randomInt} from 'node:crypto'
import {chmod, lchown, lstat, mkdir, readdir, readlink, rename, rm, symlink, writeFile} from 'node:fs/promises'
import {dirname, join} from 'node:path'

export const DATA_DIR_NAME = '..data'
const DATA_DIR_TMP_NAME = '..data_tmp'

export interface FileProjection {
  data: Buffer
  mode: number
}

/** Relative path → content and mode. */
export type Payload = Map<string, FileProjection>

/** validatePayload: relative, no '..' element, not starting with '..', at most 4096 bytes... (the API checked the rest). */
export function checkPayloadPath(path: string): void {
  if (path === '' || path.startsWith('/') || path.startsWith('..') || path.split('/').includes('..')) {
    throw new Error(`invalid path in the volume payload: ${JSON.stringify(path)}`)
  }
}

/** "..2006_01_02_15_04_05." + random digits, as os.MkdirTemp names the kubelet's directory. */
function timestampDirName(now: Date): string {
  const pad = (value: number, width = 2) => String(value).padStart(width, '0')
  const stamp =
    `${now.getUTCFullYear()}_${pad(now.getUTCMonth() + 1)}_${pad(now.getUTCDate())}_` +
    `${pad(now.getUTCHours())}_${pad(now.getUTCMinutes())}_${pad(now.getUTCSeconds())}`
  return `..${stamp}.${randomInt(1, 2 ** 32 - 1)}`
}

/** Writes the payload into targetDir (which exists) the kubelet's way; a second write replaces the first atomically. */
export async function writeAtomically(targetDir: string, payload: Payload, now = new Date()): Promise<void> {
  for (const path of payload.keys()) checkPayloadPath(path)
  const previous = await readlink(join(targetDir, DATA_DIR_NAME)).catch(() => undefined)
  const tsName = timestampDirName(now)
  const tsDir = join(targetDir, tsName)
  await mkdir(tsDir)
  await chmod(tsDir, 0o755)
  for (const [path, file] of [...payload.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const full = join(tsDir, path)
    await mkdir(dirname(full), {recursive: true, mode: 0o755})
    await writeFile(full, file.data, {mode: file.mode})
    await chmod(full, file.mode)
  }

  const tmpLink = join(targetDir, DATA_DIR_TMP_NAME)
  await rm(tmpLink, {force: true})
  await symlink(tsName, tmpLink)
  await rename(tmpLink, join(targetDir, DATA_DIR_NAME))

  const topLevel = new Set([...payload.keys()].map((path) => path.split('/')[0]))
  for (const name of topLevel) {
    const link = join(targetDir, name)
    const existing = await lstat(link).catch(() => undefined)
    if (existing?.isSymbolicLink()) continue
    if (existing) await rm(link, {recursive: true, force: true})
    await symlink(join(DATA_DIR_NAME, name), link)
  }

  // Entries of the old payload that the new one lacks, and the old timestamped directory.
  for (const entry of await readdir(targetDir)) {
    if (entry.startsWith('..') || topLevel.has(entry)) continue
    const info = await lstat(join(targetDir, entry))
    if (info.isSymbolicLink()) await rm(join(targetDir, entry), {force: true})
  }

  if (previous && previous !== tsName && !previous.includes('/')) await rm(join(targetDir, previous), {recursive: true, force: true})
}

export interface OwnershipOptions {
  fsGroup: number
  /** configMap, secret, downwardAPI and projected volumes are read-only (group r); emptyDir is read-write (group rw). */
  readOnly: boolean
  /** OnRootMismatch: nothing to do when the volume's root already has the group and the permissions. */
  changePolicy?: 'OnRootMismatch' | 'Always'
}

const RW_MASK = 0o660
const RO_MASK = 0o440
const EXEC_MASK = 0o110
const SETGID = 0o2000

/** The kubelet's SetVolumeOwnership: group fsGroup on everything, group bits added, setgid on directories. */
export async function setVolumeOwnership(dir: string, options: OwnershipOptions): Promise<void> {
  const mask = options.readOnly ? RO_MASK : RW_MASK
  if (options.changePolicy === 'OnRootMismatch') {
    const root = await lstat(dir)
    const wanted = mask | EXEC_MASK | SETGID
    if (root.gid === options.fsGroup && (root.mode & wanted) === wanted) return
  }

  const walk = async (path: string): Promise<void> => {
    const info = await lstat(path)
    await lchown(path, -1, options.fsGroup)
    if (info.isSymbolicLink()) return
    const mode = info.mode & 0o7777
    if (info.isDirectory()) {
      await chmod(path, mode | mask | EXEC_MASK | SETGID)
      for (const entry of await readdir(path)) await walk(join(path, entry))
    } else {
      await chmod(path, mode | mask)
    }
  }

  await walk(dir)
}
