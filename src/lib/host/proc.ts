/**
 * What /proc tells about a process, read from the host: its ids as the host and as its own user
 * namespace see them, its pid inside its pid namespace, CPU time, memory, command line,
 * environment and cgroups. Each reader returns undefined for a process that is gone (they come
 * and go while a listing is read).
 */
import {readdirSync, readFileSync} from 'node:fs'

/** USER_HZ: the unit of /proc's CPU times and start times, 100 on every architecture Linux runs containers on. */
export const CLOCK_TICKS_PER_SECOND = 100

export interface ProcStat {
  pid: number
  /** The command name (comm), as the kernel keeps it (15 bytes). */
  comm: string
  state: string
  ppid: number
  /** User and system CPU time, in clock ticks. */
  cpuTicks: number
  /** Start time, in clock ticks since boot. */
  startTicks: number
}

export interface ProcStatus {
  /** Real uid and gid, as the host sees them. */
  uid: number
  gid: number
  /** The pid in each pid namespace, outermost (the host's) first: the last is the pid inside the container. */
  nsPids: number[]
  /** Resident memory in bytes (VmRSS; 0 for kernel threads). */
  rssBytes: number
}

export interface CgroupLine {
  /** 0 for the unified (v2) hierarchy. */
  hierarchy: number
  /** The v1 controllers ("cpu,cpuacct", "name=systemd"); '' for v2. */
  controllers: string
  path: string
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

export function readStat(pid: number): ProcStat | undefined {
  const text = readText(`/proc/${pid}/stat`)
  if (text === undefined) return undefined
  const open = text.indexOf('(')
  const close = text.lastIndexOf(')')
  // Fields after the command name, numbered from 3 (state) as proc(5) numbers them.
  const fields = text.slice(close + 2).split(' ')
  const field = (n: number) => Number(fields[n - 3])
  return {
    pid,
    comm: text.slice(open + 1, close),
    state: fields[0],
    ppid: field(4),
    cpuTicks: field(14) + field(15),
    startTicks: field(22),
  }
}

export function readStatus(pid: number): ProcStatus | undefined {
  const text = readText(`/proc/${pid}/status`)
  if (text === undefined) return undefined
  const values = new Map<string, string>()
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':')
    if (colon > 0) values.set(line.slice(0, colon), line.slice(colon + 1).trim())
  }

  const numbers = (key: string) => (values.get(key) ?? '').split(/\s+/).filter(Boolean).map(Number)
  const rss = /^(\d+)\s*kB$/.exec(values.get('VmRSS') ?? '')
  return {
    uid: numbers('Uid')[0] ?? 0,
    gid: numbers('Gid')[0] ?? 0,
    nsPids: numbers('NSpid').length > 0 ? numbers('NSpid') : [pid],
    rssBytes: rss ? Number(rss[1]) * 1024 : 0,
  }
}

/** The command line as its words; [] for a kernel thread or a zombie. */
export function readCmdline(pid: number): string[] | undefined {
  const text = readText(`/proc/${pid}/cmdline`)
  if (text === undefined) return undefined
  const words = text.split('\0')
  if (words.at(-1) === '') words.pop()
  return words
}

/** The environment the process was started with (NAME=value each). */
export function readEnviron(pid: number): string[] | undefined {
  const text = readText(`/proc/${pid}/environ`)
  return text?.split('\0').filter((entry) => entry.includes('='))
}

export function readCgroups(pid: number): CgroupLine[] | undefined {
  const text = readText(`/proc/${pid}/cgroup`)
  if (text === undefined) return undefined
  const lines: CgroupLine[] = []
  for (const line of text.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line)
    if (match) lines.push({hierarchy: Number(match[1]), controllers: match[2], path: match[3]})
  }

  return lines
}

/** Every pid /proc lists now. */
export function listPids(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
}

/** Seconds since boot (/proc/uptime). */
export function uptimeSeconds(): number {
  return Number((readText('/proc/uptime') ?? '0').split(' ')[0])
}

export interface IdRange {
  inside: number
  outside: number
  count: number
}

/** /proc/<pid>/uid_map or gid_map: how ids inside its user namespace map to the host's. */
export function readIdMap(pid: number, kind: 'uid' | 'gid'): IdRange[] {
  const ranges: IdRange[] = []
  for (const line of (readText(`/proc/${pid}/${kind}_map`) ?? '').split('\n')) {
    const [inside, outside, count] = line.trim().split(/\s+/).map(Number)
    if ([inside, outside, count].every((value) => Number.isSafeInteger(value))) ranges.push({inside, outside, count})
  }

  return ranges
}

/** A host id as the namespace of `ranges` sees it; undefined when it is not mapped there. */
export function idInside(ranges: readonly IdRange[], hostId: number): number | undefined {
  if (ranges.length === 0) return hostId
  const range = ranges.find((candidate) => hostId >= candidate.outside && hostId < candidate.outside + candidate.count)
  return range === undefined ? undefined : range.inside + (hostId - range.outside)
}

/** An id of the namespace of `ranges` as the host sees it; undefined when it is not mapped. */
export function idOutside(ranges: readonly IdRange[], insideId: number): number | undefined {
  if (ranges.length === 0) return insideId
  const range = ranges.find((candidate) => insideId >= candidate.inside && insideId < candidate.inside + candidate.count)
  return range === undefined ? undefined : range.outside + (insideId - range.inside)
}

/** The children of a process (where the kernel lists them). */
export function childrenOf(pid: number): number[] {
  const text = readText(`/proc/${pid}/task/${pid}/children`) ?? ''
  return text.split(' ').filter(Boolean).map(Number)
}
