/**
 * The processes of this machine with a given command name, read from /proc. This runs before every
 * command that creates pods, so the common case (no such process) costs one readdir and one small read
 * per process; argv and the process's root are read only for the matches.
 */
import {readdirSync, readFileSync, readlinkSync} from 'node:fs'

export interface LocalProcess {
  pid: number
  /** The command line as the process was started (NUL-separated in /proc/PID/cmdline). */
  argv: string[]
  /** Where the process's own files are seen from here: '' when it shares our root, else /proc/PID/root. */
  root: string
  /** Its working directory, for relative paths in its flags. */
  cwd: string
}

export interface ProcOptions {
  /** The proc filesystem (a directory tree shaped like /proc in tests). */
  procRoot?: string
}

/** Live (not zombie) processes whose command name (/proc/PID/comm) is `name`, lowest pid first. */
export function processesNamed(name: string, {procRoot = '/proc'}: ProcOptions = {}): LocalProcess[] {
  let entries: string[]
  try {
    entries = readdirSync(procRoot)
  } catch {
    return []
  }

  const found: LocalProcess[] = []
  for (const entry of entries) {
    const first = entry.codePointAt(0) ?? 0
    if (first < 48 || first > 57) continue
    const dir = `${procRoot}/${entry}`
    // The process may exit between readdir and read: whatever cannot be read is not there.
    const comm = readOrEmpty(`${dir}/comm`).trimEnd()
    if (comm !== name || isZombie(dir)) continue
    const argv = readOrEmpty(`${dir}/cmdline`).split('\0')
    if (argv.at(-1) === '') argv.pop()
    found.push({pid: Number(entry), argv, root: rootOf(dir), cwd: linkOrEmpty(`${dir}/cwd`) || '/'})
  }

  return found.sort((a, b) => a.pid - b.pid)
}

/** A path as the process sees it, readable from here (through /proc/PID/root when it has a root of its own). */
export function seenBy(process: LocalProcess, path: string): string {
  const absolute = path.startsWith('/') ? path : `${process.cwd.replace(/\/$/, '')}/${path}`
  return `${process.root}${absolute}`
}

function isZombie(dir: string): boolean {
  const stat = readOrEmpty(`${dir}/stat`)
  // "PID (comm) S ...": the state follows the last ')' (comm may itself contain parentheses).
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z'
}

function rootOf(dir: string): string {
  const root = linkOrEmpty(`${dir}/root`)
  return root === '/' || root === '' ? '' : `${dir}/root`
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}

function linkOrEmpty(path: string): string {
  try {
    return readlinkSync(path)
  } catch {
    return ''
  }
}
