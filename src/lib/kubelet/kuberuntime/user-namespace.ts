/**
 * The kubelet's user namespace manager (pkg/kubelet/userns) for `hostUsers: false`: each such pod
 * gets 65536 host IDs of its own, mapped to 0-65535 inside, for users and groups alike, recorded in
 * the pod's directory (`userns`, the kubelet's file and shape) so every later sandbox and container
 * of the pod gets the same range. The IDs come from the kubelet's range: the subordinate IDs of the
 * user "kubelet" (/etc/subuid and /etc/subgid, which must agree), else every ID from 65536 up (the
 * kubelet's default). A range is taken by no other pod recorded under the pod root, nor by a
 * kubelet's pod (/var/lib/kubelet/pods/<uid>/userns); it goes with the pod's directory.
 *
 * The runtime makes the namespace: the sandbox and every container carry the same mappings in
 * their namespace options (userns_options, mode POD), as the kubelet's namespacesForPod sends them.
 */
import {readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {mkdir} from 'node:fs/promises'

import type {PodModel} from '../../manifest/model.js'
import type {NamespaceMode, UserNamespace} from '../../../generated/runtime/v1/api.js'
import {podDirectory} from '../core/pod-directory.js'

/** userNsLength: the IDs each pod gets. */
export const USER_NAMESPACE_LENGTH = 65_536
const USERNS_FILE = 'userns'
const KUBELET_PODS = '/var/lib/kubelet/pods'
const DEFAULT_RANGE = {first: USER_NAMESPACE_LENGTH, length: 2 ** 32 - USER_NAMESPACE_LENGTH}

export interface IdMapping {
  hostId: number
  containerId: number
  length: number
}

/** The kubelet's userns file: the pod's mappings. */
export interface UserNamespaceMappings {
  uidMappings: IdMapping[]
  gidMappings: IdMapping[]
}

/** The CRI's UserNamespace of these mappings (mode POD). */
export function usernsOptions(mappings: UserNamespaceMappings): UserNamespace {
  return {mode: 'POD' as NamespaceMode, uids: mappings.uidMappings, gids: mappings.gidMappings}
}

function usernsPath(podDirRoot: string, uid: string): string {
  return `${podDirectory(podDirRoot, uid)}/${USERNS_FILE}`
}

/** The mappings recorded for the pod; undefined when there are none (or the file is not one of ours). */
export function recordedUserNamespace(podDirRoot: string, uid: string): UserNamespaceMappings | undefined {
  return readMappings(usernsPath(podDirRoot, uid))
}

function readMappings(path: string): UserNamespaceMappings | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<UserNamespaceMappings>
    const valid = (list: unknown): list is IdMapping[] =>
      Array.isArray(list) && list.length === 1 && [list[0]?.hostId, list[0]?.containerId, list[0]?.length].every(Number.isInteger)
    return valid(parsed.uidMappings) && valid(parsed.gidMappings)
      ? {uidMappings: parsed.uidMappings, gidMappings: parsed.gidMappings}
      : undefined
  } catch {
    return undefined
  }
}

/** "kubelet:first:count" of /etc/subuid or /etc/subgid. */
function subordinateRange(file: string): {first: number; length: number} | undefined {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return undefined
  }

  const line = text.split('\n').find((entry) => entry.startsWith('kubelet:'))
  const [first, length] = (line?.split(':').slice(1) ?? []).map(Number)
  return Number.isInteger(first) && Number.isInteger(length) ? {first, length} : undefined
}

const SUBORDINATE_ID_FILES = {subuid: '/etc/subuid', subgid: '/etc/subgid'}

/** The kubelet's range (getKubeletMappings): the "kubelet" user's subordinate IDs, else the default. */
export function kubeletIdRange(files = SUBORDINATE_ID_FILES): {first: number; length: number} {
  const uids = subordinateRange(files.subuid)
  const gids = subordinateRange(files.subgid)
  if (!uids && !gids) return DEFAULT_RANGE
  if (!uids || !gids || uids.first !== gids.first || uids.length !== gids.length) {
    throw new Error(`the kubelet user's ranges in ${files.subuid} and ${files.subgid} differ; hostUsers: false needs one range for both`)
  }

  return uids
}

/** The host IDs other pods hold: every userns file under the pod root and under the kubelet's pods. */
function takenHostIds(podDirRoot: string, uid: string): Set<number> {
  const taken = new Set<number>()
  for (const root of new Set([podDirRoot, KUBELET_PODS])) {
    let entries: string[]
    try {
      entries = readdirSync(root)
    } catch {
      continue
    }

    for (const entry of entries) {
      if (root === podDirRoot && entry === uid) continue
      const mappings = readMappings(`${root}/${entry}/${USERNS_FILE}`)
      if (mappings) taken.add(mappings.uidMappings[0].hostId)
    }
  }

  return taken
}

/**
 * The pod's mappings: those recorded, else the first free range, recorded now. Two runs choosing at
 * the same moment can pick the same range: the one that finds another pod's file with its range
 * after writing its own moves on to the next.
 */
export async function ensureUserNamespace(podDirRoot: string, pod: Pick<PodModel, 'uid'>): Promise<UserNamespaceMappings> {
  const recorded = recordedUserNamespace(podDirRoot, pod.uid)
  if (recorded) return recorded
  const range = kubeletIdRange()
  const blocks = Math.floor(range.length / USER_NAMESPACE_LENGTH)
  await mkdir(podDirectory(podDirRoot, pod.uid), {recursive: true, mode: 0o750})
  const path = usernsPath(podDirRoot, pod.uid)
  const taken = takenHostIds(podDirRoot, pod.uid)
  for (let block = 0; block < blocks; block++) {
    const hostId = range.first + block * USER_NAMESPACE_LENGTH
    if (taken.has(hostId)) continue
    const mapping = [{hostId, containerId: 0, length: USER_NAMESPACE_LENGTH}]
    const mappings = {uidMappings: mapping, gidMappings: mapping}
    writeFileSync(path, `${JSON.stringify(mappings)}\n`, {mode: 0o600})
    // Another run took it meanwhile: look again, from the next range on.
    for (const id of takenHostIds(podDirRoot, pod.uid)) taken.add(id)
    if (!taken.has(hostId)) return mappings
  }

  throw new Error(`no free range of ${USER_NAMESPACE_LENGTH} IDs is left for a user namespace (every one is held by a pod)`)
}
