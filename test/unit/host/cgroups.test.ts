import {describe, expect, it} from 'vitest'

import {cgroupProcsFiles, containerCgroup, inCgroup, parseCgroupMounts} from '../../../src/lib/host/cgroups.js'
import type {CgroupLine} from '../../../src/lib/host/proc.js'

// /proc/self/mountinfo of a cgroup v2 host (Debian 12) and of a hybrid v1 host (Ubuntu 20.04), cgroup lines only and one other.
const V2_MOUNTINFO = [
  '22 28 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw',
  '26 24 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot',
].join('\n')
const V1_MOUNTINFO = [
  '30 25 0:26 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate',
  '31 25 0:27 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,xattr,name=systemd',
  '35 25 0:31 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:16 - cgroup cgroup rw,cpu,cpuacct',
  '36 25 0:32 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:17 - cgroup cgroup rw,memory',
].join('\n')

const v2Lines: CgroupLine[] = [{hierarchy: 0, controllers: '', path: '/kubepods/besteffort/pod1/abc'}]
const v1Lines: CgroupLine[] = [
  {hierarchy: 12, controllers: 'memory', path: '/kubepods/pod1/abc'},
  {hierarchy: 4, controllers: 'cpu,cpuacct', path: '/kubepods/pod1/abc'},
  {hierarchy: 1, controllers: 'name=systemd', path: '/kubepods/pod1/abc'},
  {hierarchy: 0, controllers: '', path: '/'},
  {hierarchy: 7, controllers: 'blkio', path: '/kubepods/pod1/abc'},
]

describe('cgroups', () => {
  it('reads the cgroup mounts of mountinfo', () => {
    expect(parseCgroupMounts(V2_MOUNTINFO)).toEqual([{type: 'cgroup2', mountPoint: '/sys/fs/cgroup', root: '/', controllers: []}])
    expect(parseCgroupMounts(V1_MOUNTINFO).map((mount) => mount.controllers)).toEqual([
      [],
      ['xattr', 'name=systemd'],
      ['cpu', 'cpuacct'],
      ['memory'],
    ])
  })

  it("finds the cgroup.procs file of each of the container's cgroups (v2, and v1 where mounted)", () => {
    expect(cgroupProcsFiles(v2Lines, V2_MOUNTINFO)).toEqual(['/sys/fs/cgroup/kubepods/besteffort/pod1/abc/cgroup.procs'])
    expect(cgroupProcsFiles(v1Lines, V1_MOUNTINFO)).toEqual([
      '/sys/fs/cgroup/memory/kubepods/pod1/abc/cgroup.procs',
      '/sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/abc/cgroup.procs',
      '/sys/fs/cgroup/unified/cgroup.procs',
    ])
  })

  it('skips a cgroup outside the root of a namespaced mount', () => {
    const namespaced = '26 24 0:23 /kubepods /sys/fs/cgroup rw - cgroup2 cgroup2 rw'
    expect(cgroupProcsFiles([{hierarchy: 0, controllers: '', path: '/system.slice/x'}], namespaced)).toEqual([])
    expect(cgroupProcsFiles([{hierarchy: 0, controllers: '', path: '/kubepods/pod1'}], namespaced)).toEqual([
      '/sys/fs/cgroup/pod1/cgroup.procs',
    ])
  })

  it("tells a container's processes by its own cgroup", () => {
    const own = containerCgroup(v1Lines)!
    // v1 only (the unified line is the root's): the first hierarchy by name, the same on every call.
    expect(own).toEqual({hierarchy: 7, controllers: 'blkio', path: '/kubepods/pod1/abc'})
    expect(containerCgroup(v2Lines)).toEqual(v2Lines[0])
    // Named after the container: preferred over a cgroup the process merely inherited.
    const inherited = [
      {hierarchy: 4, controllers: 'memory', path: '/session/x'},
      {hierarchy: 8, controllers: 'pids', path: '/kubepods/cri-containerd-abc.scope'},
    ]
    expect(containerCgroup(inherited, 'abc')).toEqual(inherited[1])
    expect(containerCgroup(inherited)).toEqual(inherited[0])
    expect(inCgroup(v1Lines, own)).toBe(true)
    expect(inCgroup([{hierarchy: 7, controllers: 'blkio', path: '/kubepods/pod1/abcd'}], own)).toBe(false)
    expect(inCgroup([{hierarchy: 0, controllers: '', path: '/kubepods/besteffort/pod1/abc/sub'}], v2Lines[0])).toBe(true)
  })
})
