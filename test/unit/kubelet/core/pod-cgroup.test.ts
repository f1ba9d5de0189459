import {existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {cgroupMountPoints, podCgroupParent, removePodCgroups} from '../../../../src/lib/kubelet/core/pod-cgroup.js'
import type {Json} from '../../../../src/lib/manifest/fields.js'
import {parsePod} from '../../../../src/lib/manifest/pod.js'

const UID = '0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0'

function podWith(resources: Json | null) {
  return parsePod(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'web', uid: UID},
      spec: {containers: [{name: 'app', image: 'nginx:1.27', resources}]},
    } as Json,
    'pod.yaml',
  )
}

describe('podCgroupParent (the kubelet GetPodContainerName)', () => {
  it('puts each QoS class under its kubepods cgroup, as a path for cgroupfs', () => {
    expect(podCgroupParent(podWith(null), 'cgroupfs')).toBe(`/kubepods/besteffort/pod${UID}`)
    expect(podCgroupParent(podWith({requests: {cpu: '100m'}}), 'cgroupfs')).toBe(`/kubepods/burstable/pod${UID}`)
    const guaranteed = {requests: {cpu: '1', memory: '64Mi'}, limits: {cpu: '1', memory: '64Mi'}}
    expect(podCgroupParent(podWith(guaranteed), 'cgroupfs')).toBe(`/kubepods/pod${UID}`)
  })

  it('expands the slices for systemd, with the dashes of the uid as underscores (CgroupName.ToSystemd)', () => {
    const escaped = UID.replaceAll('-', '_')
    expect(podCgroupParent(podWith({requests: {cpu: '100m'}}), 'systemd')).toBe(
      `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${escaped}.slice`,
    )
    const guaranteed = {limits: {cpu: '1', memory: '64Mi'}}
    expect(podCgroupParent(podWith(guaranteed), 'systemd')).toBe(`/kubepods.slice/kubepods-pod${escaped}.slice`)
  })
})

describe('cgroupMountPoints', () => {
  it('lists the cgroup v1 and v2 mounts of the whole tree from mountinfo, unescaping their paths', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'podctl-mountinfo-')), 'mountinfo')
    writeFileSync(
      file,
      [
        '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
        '32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
        '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
        String.raw`40 31 0:37 / /sys/fs/cgroup/name\040with\040space rw,relatime - cgroup cgroup rw,name=x`,
        '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
        // A namespaced view of a sub-tree: its paths are not the host's.
        '50 31 0:39 /kubepods /mnt/inner rw,relatime - cgroup cgroup rw,pids',
        '',
      ].join('\n'),
    )
    expect(await cgroupMountPoints(file)).toEqual([
      '/sys/fs/cgroup/cpu',
      '/sys/fs/cgroup/memory',
      '/sys/fs/cgroup/name with space',
      '/sys/fs/cgroup/unified',
    ])
    expect(await cgroupMountPoints(join(file, 'missing'))).toEqual([])
  })
})

describe('removePodCgroups', () => {
  it("removes the runtimes' cgroups of the removed IDs and the pod's, and nothing else", async () => {
    const root = mkdtempSync(join(tmpdir(), 'podctl-cgroups-'))
    const [cpu, memory] = [join(root, 'cpu'), join(root, 'memory')]
    const pod = (point: string) => join(point, 'kubepods', 'burstable', `pod${UID}`)
    // containerd's container cgroup, CRI-O's container and conmon cgroups.
    for (const name of ['c1', 'crio-c2', 'crio-conmon-c2']) mkdirSync(join(pod(cpu), name), {recursive: true})
    mkdirSync(join(pod(memory), 'c1'), {recursive: true})
    // Another pod in the same QoS class, and a cgroup of this pod that is not one of the removed IDs.
    mkdirSync(join(cpu, 'kubepods', 'burstable', 'podother', 'c1'), {recursive: true})
    mkdirSync(join(pod(memory), 'c9'), {recursive: true})

    const removed = await removePodCgroups(UID, ['c1', 'c2'], [cpu, memory])
    expect(removed.sort()).toEqual(
      [join(pod(cpu), 'c1'), join(pod(cpu), 'crio-c2'), join(pod(cpu), 'crio-conmon-c2'), pod(cpu), join(pod(memory), 'c1')].sort(),
    )
    expect(existsSync(pod(cpu))).toBe(false)
    // Still holds c9: the pod's memory cgroup stays, and so do the QoS cgroups and the other pod.
    expect(existsSync(join(pod(memory), 'c9'))).toBe(true)
    expect(existsSync(join(cpu, 'kubepods', 'burstable', 'podother', 'c1'))).toBe(true)
    expect(existsSync(join(cpu, 'kubepods', 'burstable'))).toBe(true)
  })

  it("with 'every container' (no sandbox of the pod left): whatever runtime cgroup is empty, not other names", async () => {
    const root = mkdtempSync(join(tmpdir(), 'podctl-cgroups-'))
    const pod = join(root, 'kubepods', 'besteffort', `pod${UID}`)
    const hex = (c: string) => c.repeat(64)
    // A container pruned before the kill left CRI-O's conmon cgroup; a name no runtime makes stays, and so does the pod's.
    for (const name of [hex('a'), `crio-${hex('b')}`, `crio-conmon-${hex('c')}`, 'keep-me']) mkdirSync(join(pod, name), {recursive: true})
    await removePodCgroups(UID, 'every container', [root])
    expect(readdirSync(pod)).toEqual(['keep-me'])
  })

  it('refuses a uid that could name another path', async () => {
    const root = mkdtempSync(join(tmpdir(), 'podctl-cgroups-'))
    mkdirSync(join(root, 'kubepods', 'x'), {recursive: true})
    expect(await removePodCgroups('/../x', [], [root])).toEqual([])
    expect(await removePodCgroups('', [], [root])).toEqual([])
  })
})
