/**
 * What one look at a watched path finds (manifest-source.ts), by the kubelet's file source's rules
 * (pkg/kubelet/config/file.go) made stricter: a directory's manifest files (manifest/inputs.ts
 * isManifestName: not hidden, no backups), not its sub-directories, symbolic links followed. What
 * cannot be read or trusted is named with its reason, never skipped in silence: a link to nothing
 * or a loop, a FIFO, socket or device named like a manifest, a sub-directory, a file others may
 * write, one larger than `run -f` reads. Nothing here opens a file that could block (a FIFO) or
 * reads more than MAX_MANIFEST_BYTES of one.
 */
import {constants, type Stats} from 'node:fs'
import {lstat, open, readdir, stat} from 'node:fs/promises'
import {join} from 'node:path'

import {isManifestName} from '../../manifest/inputs.js'
import {MAX_MANIFEST_BYTES, tooLarge} from '../../manifest/load.js'
import {fileSignature} from '../../util/file-signature.js'

export interface Listing {
  /** Regular files to read, each with its signature (size, mtime, inode). */
  found: Map<string, string>
  /** Paths that cannot be read or trusted now, each with why (naming it): their pods are kept. */
  unreadable: Map<string, string>
}

/** Why root must not read `path` (writable by others, or another user's), or undefined. */
export function unsafeToRead(path: string, info: {mode: number; uid: number}): string | undefined {
  const mode = (info.mode & 0o777).toString(8).padStart(4, '0')
  if (info.mode & 0o022) return `${path} is writable by users other than its owner (mode ${mode}); fix: chmod go-w ${path}`
  const me = process.getuid?.() ?? 0
  if (info.uid !== 0 && info.uid !== me) return `${path} belongs to uid ${info.uid}, not to root or to this user; fix: chown root ${path}`
  return undefined
}

/** A watched path (a directory, or a file given itself): its manifest files, or why it cannot be read. */
export async function listWatched(path: string, into: Listing): Promise<void> {
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => error)
  if (info instanceof Error) {
    into.unreadable.set(path, info.code === 'ENOENT' ? movedAway(path) : cannotRead(path, info))
    return
  }

  const refused = unsafeToRead(path, info)
  if (refused) into.unreadable.set(path, refused)
  else if (info.isDirectory()) await listDirectory(path, info, into)
  else note(path, entryOf(path, info), into)
}

async function listDirectory(path: string, directory: Stats, into: Listing): Promise<void> {
  const names = await readdir(path).catch((error: NodeJS.ErrnoException) => error)
  if (names instanceof Error) {
    into.unreadable.set(path, `${path}: the directory cannot be listed (${names.code ?? names.message})`)
    return
  }

  const listed: Listing = {found: new Map(), unreadable: new Map()}
  let vanished = false
  for (const name of names.filter((candidate) => isManifestName(candidate)).sort()) {
    const file = join(path, name)
    const entry = await lstat(file).catch(() => undefined)
    const info = entry && (await stat(file).catch((error: NodeJS.ErrnoException) => error))
    // Gone between the listing and this look: as if it had not been listed.
    if (!entry || (info instanceof Error && info.code === 'ENOENT' && !entry.isSymbolicLink())) {
      vanished = true
      continue
    }

    note(file, info instanceof Error ? {why: brokenLink(file, info)} : entryOf(file, info!), listed)
  }

  // Files gone mid-look may be the whole directory moved away meanwhile: its pods are then kept as
  // for a directory found gone, not killed as for files removed from it.
  if (vanished && !(await isSameDirectory(path, directory))) {
    into.unreadable.set(path, movedAway(path))
    return
  }

  for (const [file, signature] of listed.found) into.found.set(file, signature)
  for (const [file, why] of listed.unreadable) into.unreadable.set(file, why)
}

async function isSameDirectory(path: string, before: Stats): Promise<boolean> {
  const now = await stat(path).catch(() => undefined)
  return now !== undefined && now.isDirectory() && now.ino === before.ino && now.dev === before.dev
}

function movedAway(path: string): string {
  return `${path}: no such file or directory (moved away or removed?)`
}

function note(file: string, entry: {signature: string} | {why: string}, into: Listing): void {
  if ('why' in entry) into.unreadable.set(file, entry.why)
  else into.found.set(file, entry.signature)
}

/** A file to read (its signature), or why it is not read: checked from stat, before anything is opened. */
function entryOf(file: string, info: Stats): {signature: string} | {why: string} {
  if (info.isDirectory()) return {why: `${file} is a directory: sub-directories are not read`}
  if (!info.isFile()) return {why: `${file} is ${nodeKind(info)}, not a regular file: not read`}
  const refused = unsafeToRead(file, info)
  if (refused) return {why: refused}
  if (info.size > MAX_MANIFEST_BYTES) return {why: `${tooLarge(file).message}: not read`}
  return {signature: fileSignature(info)}
}

function nodeKind(info: Stats): string {
  if (info.isFIFO()) return 'a FIFO'
  if (info.isSocket()) return 'a socket'
  if (info.isCharacterDevice()) return 'a character device'
  if (info.isBlockDevice()) return 'a block device'
  return 'not a file'
}

/** A name lstat sees that stat cannot follow: a link to nothing, a loop of links, or a target podctl may not see. */
function brokenLink(file: string, error: NodeJS.ErrnoException): string {
  if (error.code === 'ENOENT') return `${file} is a symbolic link to nothing (its target does not exist)`
  if (error.code === 'ELOOP') return `${file} is a symbolic link that loops (too many levels of links)`
  return cannotRead(file, error)
}

function cannotRead(path: string, error: NodeJS.ErrnoException): string {
  return `${path} cannot be read (${error.code ?? error.message})`
}

/**
 * The text of a settled file, read only while it is still the file seen (`signature`) before and
 * after the read; 'changed' when it is not (look again later). Opened without blocking and read at
 * most MAX_MANIFEST_BYTES far: a FIFO put in its place or a file grown since stat cannot stall or
 * swell the supervisor.
 */
export async function readSettled(path: string, signature: string): Promise<{text: string} | {why: string} | 'changed'> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY).catch(
    (error: NodeJS.ErrnoException) => error,
  )
  if (handle instanceof Error) return handle.code === 'ENOENT' ? 'changed' : {why: cannotRead(path, handle)}
  try {
    const before = await handle.stat()
    if (!before.isFile() || fileSignature(before) !== signature || before.size > MAX_MANIFEST_BYTES) return 'changed'
    const buffer = Buffer.alloc(before.size + 1)
    let length = 0
    while (length < buffer.length) {
      const {bytesRead} = await handle.read(buffer, length, buffer.length - length, length)
      if (bytesRead === 0) break
      length += bytesRead
    }

    if (length !== before.size || fileSignature(await handle.stat()) !== signature) return 'changed'
    return {text: buffer.subarray(0, length).toString('utf8')}
  } catch (error) {
    return {why: cannotRead(path, error as NodeJS.ErrnoException)}
  } finally {
    await handle.close()
  }
}
