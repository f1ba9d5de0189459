/**
 * `--user UID[:GID]|NAME[:GROUP]` as a container's runtime reads it (runc's GetExecUser): a name is
 * looked up in the container's own /etc/passwd and /etc/group, read through its root (never the
 * host's files, never following a symlink out of the root); a numeric user needs no entry, and
 * takes the entry's group and home when there is one, else group 0 and home "/".
 */
import {readSync} from 'node:fs'

import {UsageError} from '../errors.js'
import type {ContainerRoot} from './container-root.js'

/** The most of /etc/passwd or /etc/group read: a database larger than this is not a container's. */
const DATABASE_LIMIT = 1 << 20

export interface ContainerUser {
  uid: number
  gid: number
  /** The user's name, when the container's /etc/passwd has one. */
  name?: string
  /** HOME for the process: the passwd entry's, else "/". */
  home: string
}

interface PasswdEntry {
  name: string
  uid: number
  gid: number
  home: string
}

const NUMERIC = /^\d+$/
const MAX_ID = 2 ** 32 - 2

function parseId(text: string, flag: string): number {
  const id = Number(text)
  if (!Number.isSafeInteger(id) || id > MAX_ID) throw new UsageError(`${flag} ${text}: an ID must be between 0 and ${MAX_ID}`)
  return id
}

/** The lines of /etc/passwd: name:password:uid:gid:gecos:home:shell (malformed lines skipped, as getpwent does). */
export function parsePasswd(text: string): PasswdEntry[] {
  const entries: PasswdEntry[] = []
  for (const line of text.split('\n')) {
    const fields = line.split(':')
    if (fields.length < 7 || !NUMERIC.test(fields[2]) || !NUMERIC.test(fields[3])) continue
    entries.push({name: fields[0], uid: Number(fields[2]), gid: Number(fields[3]), home: fields[5] || '/'})
  }

  return entries
}

/** The lines of /etc/group: name:password:gid:members, as name → gid. */
export function parseGroup(text: string): Map<string, number> {
  const groups = new Map<string, number>()
  for (const line of text.split('\n')) {
    const fields = line.split(':')
    if (fields.length >= 3 && NUMERIC.test(fields[2]) && !groups.has(fields[0])) groups.set(fields[0], Number(fields[2]))
  }

  return groups
}

/** A small text file of the container's (its passwd or group); '' when it has none. */
export function readContainerText(root: ContainerRoot, path: string, limit = DATABASE_LIMIT): string {
  let entry
  try {
    entry = root.lookup(path)
  } catch (error) {
    if ((error as {code?: string}).code === 'NotFound') return ''
    throw error
  }

  try {
    if (entry.kind !== 'file') return ''
    const fd = root.openForReading(entry)
    try {
      const buffer = Buffer.alloc(Math.min(limit, Math.max(0, entry.stats.size)) + 1)
      let length = 0
      for (let read = -1; read !== 0 && length < buffer.length; length += read)
        read = readSync(fd, buffer, length, buffer.length - length, null)
      return buffer.toString('utf8', 0, Math.min(length, limit))
    } finally {
      root.release(fd)
    }
  } finally {
    root.release(entry)
  }
}

/** Resolves `--user` against the container's own user and group databases. */
export function resolveContainerUser(spec: string, root: ContainerRoot, flag = '--user'): ContainerUser {
  const [userPart, groupPart, ...rest] = spec.split(':')
  if (userPart === '' || rest.length > 0 || groupPart === '') {
    throw new UsageError(`${flag} ${JSON.stringify(spec)}: expected UID[:GID] or NAME[:GROUP] (e.g. 1000:1000 or nobody)`)
  }

  const passwd = parsePasswd(readContainerText(root, '/etc/passwd'))
  const entry = NUMERIC.test(userPart)
    ? passwd.find((candidate) => candidate.uid === parseId(userPart, flag))
    : passwd.find((candidate) => candidate.name === userPart)
  if (!NUMERIC.test(userPart) && entry === undefined) {
    throw new UsageError(`${flag} ${userPart}: no such user in /etc/passwd of container ${root.label}; give a numeric UID instead`)
  }

  const uid = NUMERIC.test(userPart) ? parseId(userPart, flag) : entry!.uid
  return {uid, gid: groupId(groupPart, entry, root, flag), home: entry?.home ?? '/', ...(entry ? {name: entry.name} : {})}
}

function groupId(groupPart: string | undefined, entry: PasswdEntry | undefined, root: ContainerRoot, flag: string): number {
  if (groupPart === undefined) return entry?.gid ?? 0
  if (NUMERIC.test(groupPart)) return parseId(groupPart, flag)
  const gid = parseGroup(readContainerText(root, '/etc/group')).get(groupPart)
  if (gid === undefined) {
    throw new UsageError(`${flag} …:${groupPart}: no such group in /etc/group of container ${root.label}; give a numeric GID instead`)
  }

  return gid
}

/** The name of a uid in the container's /etc/passwd (for top), else the number. */
export function userNames(root: ContainerRoot): (uid: number) => string {
  const names = new Map<number, string>()
  for (const entry of parsePasswd(readContainerText(root, '/etc/passwd'))) if (!names.has(entry.uid)) names.set(entry.uid, entry.name)
  return (uid) => names.get(uid) ?? String(uid)
}
