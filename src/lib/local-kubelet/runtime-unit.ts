/**
 * The systemd unit that runs the runtime behind a CRI socket, for `podctl unit`'s Wants=/After=.
 * Never guessed from the socket's name: a node may have the distribution's containerd.service on
 * /run/containerd while the runtime podctl talks to listens elsewhere, and wanting that unit would
 * start a second runtime. Two facts can name the unit:
 * - the process listening on the socket (its socket inode in /proc/net/unix, that inode among the
 *   process's file descriptors) and the .service its control group belongs to (/proc/PID/cgroup);
 * - a .socket unit whose ListenStream= is the socket's path (socket activation: then pid 1 holds it).
 * When neither does (a runtime started from a shell, or by a tool outside systemd), there is none.
 */
import {readdirSync, readFileSync, readlinkSync, realpathSync} from 'node:fs'
import {basename, dirname, join} from 'node:path'

export interface RuntimeUnitOptions {
  /** The proc filesystem (a tree shaped like /proc in tests). */
  procRoot?: string
  /** Where systemd's unit files are, most important first (systemd.unit(5)'s system unit search path). */
  unitDirs?: readonly string[]
}

export type RuntimeUnit = {unit: string; how: string} | {unit: undefined; why: string}

const SYSTEM_UNIT_DIRS = [
  '/etc/systemd/system',
  '/run/systemd/system',
  '/usr/local/lib/systemd/system',
  '/usr/lib/systemd/system',
  '/lib/systemd/system',
]
/** __SO_ACCEPTCON in /proc/net/unix's Flags: the socket listens. */
const LISTENING = 0x1_00_00

/** The unit that runs the runtime listening at `endpoint` (unix://PATH), or why none is named. */
export function findRuntimeUnit(endpoint: string, options: RuntimeUnitOptions = {}): RuntimeUnit {
  const path = endpoint.replace(/^unix:\/\//, '')
  const {procRoot = '/proc', unitDirs = SYSTEM_UNIT_DIRS} = options
  const holders = pidsHolding(listeningInodes(path, procRoot), procRoot)
  for (const pid of holders) {
    const unit = serviceOf(readOr(`${procRoot}/${pid}/cgroup`))
    if (unit) return {unit, how: `the service of pid ${pid}, which listens on ${path}`}
  }

  const socket = socketUnitListeningOn(path, unitDirs)
  if (socket) return {unit: socket, how: `the socket unit whose ListenStream= is ${path}`}
  const who =
    holders.length > 0
      ? `pid ${holders.join(', ')} listens on ${path} outside any system service`
      : `no process podctl can see listens on ${path}`
  return {unit: undefined, why: `${who}, and no systemd .socket unit has ListenStream=${path}`}
}

/** The inodes of the sockets listening at `path` (/proc/net/unix: Num RefCount Protocol Flags Type St Inode Path). */
export function listeningInodes(path: string, procRoot = '/proc'): Set<string> {
  const wanted = samePath(path)
  const inodes = new Set<string>()
  for (const line of readOr(`${procRoot}/net/unix`).split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/)
    if (fields.length < 8) continue
    if ((Number.parseInt(fields[3], 16) & LISTENING) === 0) continue
    if (wanted(fields.slice(7).join(' '))) inodes.add(fields[6])
  }

  return inodes
}

/** The pids with one of the socket inodes among their file descriptors, lowest first. */
export function pidsHolding(inodes: ReadonlySet<string>, procRoot = '/proc'): number[] {
  if (inodes.size === 0) return []
  const pids = listOr(procRoot)
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .sort((a, b) => a - b)
  return pids.filter((pid) =>
    listOr(`${procRoot}/${pid}/fd`).some((fd) => {
      const match = /^socket:\[(\d+)]$/.exec(linkOr(`${procRoot}/${pid}/fd/${fd}`))
      return match !== null && inodes.has(match[1])
    }),
  )
}

/**
 * The system service a process runs in, from /proc/PID/cgroup: the deepest `NAME.service` of its
 * systemd cgroup path (the unified line `0::`, else cgroup v1's `name=systemd`). None for a
 * process outside services: pid 1 (/init.scope), a login session's scope, a user's own manager.
 */
export function serviceOf(cgroupFile: string): string | undefined {
  const lines = cgroupFile.split('\n').map((line) => /^(\d+):([^:]*):(.*)$/.exec(line))
  const systemd = lines.find((match) => match?.[2] === 'name=systemd') ?? lines.find((match) => match?.[1] === '0')
  const parts = (systemd?.[3] ?? '').split('/')
  if (parts.includes('user.slice')) return undefined
  return parts.findLast((part) => part.endsWith('.service') && !part.startsWith('user@'))
}

/** The first .socket unit (by the unit search path's order) with ListenStream= at `path`. */
export function socketUnitListeningOn(path: string, unitDirs: readonly string[]): string | undefined {
  const wanted = samePath(path)
  const seen = new Set<string>()
  for (const dir of unitDirs) {
    for (const name of listOr(dir)
      .filter((entry) => entry.endsWith('.socket') && !entry.includes('@'))
      .sort()) {
      // A unit in an earlier directory hides one of the same name further down the path.
      if (seen.has(name)) continue
      seen.add(name)
      if (listenStreams(readOr(join(dir, name))).some((listen) => wanted(listen))) return name
    }
  }

  return undefined
}

/** A unit file's ListenStream= paths; %t is /run for the system manager. An empty one resets the list. */
function listenStreams(text: string): string[] {
  let streams: string[] = []
  for (const line of text.split('\n')) {
    const match = /^\s*ListenStream\s*=\s*(.*?)\s*$/.exec(line)
    if (!match) continue
    streams = match[1] === '' ? [] : [...streams, match[1].replaceAll('%t', '/run')]
  }

  return streams
}

/** Whether another path names the same socket: as written, or with the directories' links resolved (/var/run is /run). */
function samePath(path: string): (other: string) => boolean {
  const real = realSocketPath(path)
  return (other) => other === path || realSocketPath(other) === real
}

function realSocketPath(path: string): string {
  try {
    return join(realpathSync(dirname(path)), basename(path))
  } catch {
    return path
  }
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}

function listOr(path: string): string[] {
  try {
    return readdirSync(path)
  } catch {
    return []
  }
}

function linkOr(path: string): string {
  try {
    return readlinkSync(path)
  } catch {
    return ''
  }
}
