/**
 * A pod's cgroup as the kubelet names it (pkg/kubelet/cm: GetPodContainerName under the QoS
 * cgroups of qos_container_manager, `--cgroups-per-qos` on, cgroup root "/"): `pod<uid>` under
 * `kubepods` (Guaranteed), `kubepods/burstable` or `kubepods/besteffort`, written in the driver's form —
 * a path for cgroupfs, `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice`
 * (dashes in a part become `_`) for systemd. The kubelet sends it as the sandbox's
 * `linux.cgroup_parent`; every container of the pod is placed under it by the runtime.
 *
 * Without it, runtimes put containers in a place of their own: containerd under `/k8s.io/<id>`, CRI-O
 * at the top (its conmon cgroups `crio-conmon-<id>` stay behind there, and it reports no CPU or memory).
 * The kubelet creates the pod cgroup first and destroys it when the pod is gone; podctl lets the
 * runtime create it (runc makes missing parents) and removes what is left once the pod's sandboxes are
 * removed (removePodCgroups), for the cgroupfs driver. The QoS cgroups themselves stay, as the
 * kubelet's do: a kubelet started later expects them.
 */
import {readdir, readFile, rmdir} from 'node:fs/promises'

import type {CgroupDriver} from '../../cri/cgroup-driver.js'
import type {PodModel} from '../../manifest/model.js'
import {podQosClass, type QosClass} from './resources.js'

/** The kubelet's defaultNodeAllocatableCgroupName under cgroup root "/". */
const KUBEPODS = 'kubepods'
/** GetPodCgroupNameSuffix: "pod" + the pod's uid. */
const POD_CGROUP_PREFIX = 'pod'

/** The cgroup name's parts (the kubelet's CgroupName): the QoS parent, then pod<uid>. */
function podCgroupName(qos: QosClass, uid: string): string[] {
  const parent = qos === 'Guaranteed' ? [KUBEPODS] : [KUBEPODS, qos.toLowerCase()]
  return [...parent, `${POD_CGROUP_PREFIX}${uid}`]
}

/** The pod's cgroup parent in the driver's form (the kubelet's GetPodCgroupParent). */
export function podCgroupParent(pod: PodModel, driver: CgroupDriver): string {
  const parts = podCgroupName(podQosClass(pod), pod.uid)
  if (driver === 'cgroupfs') return `/${parts.join('/')}`
  // CgroupName.ToSystemd: escape each part, join with "-", then expand the slice into its parents.
  const escaped = parts.map((part) => part.replaceAll('-', '_'))
  return `/${escaped.map((_, index) => `${escaped.slice(0, index + 1).join('-')}.slice`).join('/')}`
}

/** The cgroupfs directories (relative to a hierarchy's mount) a pod of this uid can have: one per QoS class. */
function podCgroupPaths(uid: string): string[] {
  return (['Guaranteed', 'Burstable', 'BestEffort'] as const).map((qos) => podCgroupName(qos, uid).join('/'))
}

/** Where each cgroup hierarchy is mounted (v1 controllers, the v2 unified tree), from /proc/self/mountinfo; only whole-tree mounts. */
export async function cgroupMountPoints(mountinfo = '/proc/self/mountinfo'): Promise<string[]> {
  let text: string
  try {
    text = await readFile(mountinfo, 'utf8')
  } catch {
    return []
  }

  const points: string[] = []
  for (const line of text.split('\n')) {
    const [before, after] = line.split(' - ')
    const fields = before?.split(' ') ?? []
    const type = after?.split(' ')[0]
    if ((type === 'cgroup' || type === 'cgroup2') && fields[3] === '/' && fields[4]) points.push(unescapeMountPath(fields[4]))
  }

  return points
}

/** mountinfo writes spaces, tabs, newlines and backslashes in paths as octal escapes. */
function unescapeMountPath(path: string): string {
  return path.replaceAll(/\\([0-7]{3})/g, (_, octal: string) => String.fromCodePoint(Number.parseInt(octal, 8)))
}

/** A cgroup a runtime makes for a container or sandbox under its cgroup parent (cgroupfs). */
const RUNTIME_CGROUP = /^(?:crio-(?:conmon-)?)?[0-9a-f]{64}$/

/**
 * Removes the pod's cgroups once its sandboxes and containers are removed (cgroupfs driver): in every
 * hierarchy, the cgroups runtimes made under it for those IDs and left behind (containerd: `<id>`;
 * CRI-O: `crio-<id>`, `crio-conmon-<id>`; with 'every container', any such cgroup, for a pod none of
 * whose sandboxes is left), then `pod<uid>` itself. Only rmdir, never a kill: a cgroup
 * that still has processes or other children stays (the kernel refuses), so nothing else is touched.
 * Best effort: returns the directories removed.
 */
export async function removePodCgroups(
  uid: string,
  ids: readonly string[] | 'every container',
  mountPoints?: readonly string[],
): Promise<string[]> {
  if (!uid || uid.includes('/') || uid.includes('..')) return []
  const points = mountPoints ?? (await cgroupMountPoints())
  const named = ids === 'every container' ? undefined : new Set(ids.flatMap((id) => [id, `crio-${id}`, `crio-conmon-${id}`]))
  // Once every sandbox of the pod is gone so are all its containers: any cgroup a runtime made for one goes.
  const ours = {has: (name: string) => (named ? named.has(name) : RUNTIME_CGROUP.test(name))}
  const removed: string[] = []
  const remove = async (path: string) => {
    try {
      await rmdir(path)
      removed.push(path)
    } catch {
      // Busy, or gone meanwhile: left as it is.
    }
  }

  const directories = points.flatMap((point) => podCgroupPaths(uid).map((pod) => `${point}/${pod}`))
  await Promise.all(
    directories.map(async (directory) => {
      // Most hierarchies hold the pod under one QoS class only: one readdir says which.
      const entries = await readdir(directory, {withFileTypes: true}).catch(() => undefined)
      if (!entries) return
      await Promise.all(
        entries.filter((entry) => entry.isDirectory() && ours.has(entry.name)).map((entry) => remove(`${directory}/${entry.name}`)),
      )
      await remove(directory)
    }),
  )
  return removed
}
