/**
 * A container's cgroups, as files on the host: for each line of /proc/<pid>/cgroup, the
 * cgroup.procs file of that cgroup under the hierarchy's mount (cgroup v1 controllers, the v2
 * unified hierarchy, or both on a hybrid host), found through /proc/self/mountinfo. Writing a pid
 * there moves that process into the container's cgroups (its memory and CPU limits and accounting),
 * as a runtime's exec places the processes it starts.
 */
import {readFileSync} from 'node:fs'

import type {CgroupLine} from './proc.js'

export interface CgroupMount {
  /** 'cgroup' (v1) or 'cgroup2'. */
  type: string
  /** Where it is mounted on the host. */
  mountPoint: string
  /** The cgroup at its root (not "/" when mounted from inside a cgroup namespace). */
  root: string
  /** v1: the controllers it holds ("cpu", "cpu,cpuacct", "name=systemd"). */
  controllers: string[]
}

/** mountinfo's escapes (\040 for a space, …). */
function unescape(field: string): string {
  return field.replaceAll(/\\(\d{3})/g, (_, octal: string) => String.fromCodePoint(Number.parseInt(octal, 8)))
}

/** The cgroup filesystems in a mountinfo text. */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = []
  for (const line of mountinfo.split('\n')) {
    const fields = line.split(' ')
    const separator = fields.indexOf('-')
    if (separator === -1) continue
    const [type, , superOptions = ''] = fields.slice(separator + 1)
    if (type !== 'cgroup' && type !== 'cgroup2') continue
    const controllers = type === 'cgroup' ? superOptions.split(',').filter((option) => option !== 'rw' && option !== 'ro') : []
    mounts.push({type, mountPoint: unescape(fields[4]), root: unescape(fields[3]), controllers})
  }

  return mounts
}

/** The mount holding a line's hierarchy: cgroup2 for the unified line, the v1 mount with exactly its controllers otherwise. */
function mountFor(line: CgroupLine, mounts: readonly CgroupMount[]): CgroupMount | undefined {
  if (line.hierarchy === 0 && line.controllers === '') return mounts.find((mount) => mount.type === 'cgroup2')
  const wanted = line.controllers.split(',').filter(Boolean).sort().join(',')
  return mounts.find((mount) => mount.type === 'cgroup' && [...mount.controllers].sort().join(',') === wanted)
}

/** The cgroup.procs files of a process's cgroups (lines with no mount here, or outside the mount's root, are skipped). */
export function cgroupProcsFiles(lines: readonly CgroupLine[], mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')): string[] {
  const mounts = parseCgroupMounts(mountinfo)
  const files: string[] = []
  for (const line of lines) {
    const mount = mountFor(line, mounts)
    if (!mount) continue
    const root = mount.root === '/' ? '' : mount.root
    if (root !== '' && line.path !== root && !line.path.startsWith(`${root}/`)) continue
    const relative = line.path.slice(root.length).replace(/^\/+/, '')
    const directory = relative === '' ? mount.mountPoint : `${mount.mountPoint}/${relative}`
    const file = `${directory}/cgroup.procs`
    if (!files.includes(file)) files.push(file)
  }

  return files
}

/**
 * The cgroup that tells a container's processes from others: the one named after the container
 * (containerd and CRI-O put its ID in the path: `.../<id>`, `cri-containerd-<id>.scope`,
 * `crio-<id>.scope`), else its own cgroup in the unified hierarchy, else its first own v1 cgroup by
 * controller name. A process can sit in a v1 hierarchy at a cgroup it merely inherited (a shared
 * parent), so the container's ID is the surer sign.
 */
export function containerCgroup(lines: readonly CgroupLine[], containerId = ''): CgroupLine | undefined {
  const own = lines.filter((line) => line.path !== '/' && line.path !== '')
  const named = containerId === '' ? undefined : own.find((line) => line.path.includes(containerId))
  return named ?? own.find((line) => line.hierarchy === 0) ?? [...own].sort((a, b) => a.controllers.localeCompare(b.controllers))[0]
}

/** Whether a process (its cgroup lines) is in that cgroup or below it. */
export function inCgroup(lines: readonly CgroupLine[], cgroup: CgroupLine): boolean {
  const line = lines.find((candidate) => candidate.hierarchy === cgroup.hierarchy && candidate.controllers === cgroup.controllers)
  return line !== undefined && (line.path === cgroup.path || line.path.startsWith(`${cgroup.path}/`))
}
