/**
 * The pod's directory on the host, laid out like the kubelet's /var/lib/kubelet/pods/<uid>:
 * volumes/kubernetes.io~empty-dir/<name> for emptyDir volumes, etc-hosts (the managed /etc/hosts)
 * and containers/<name>/<id> (termination-message files). hostPath volumes are checked against
 * their declared type, as the kubelet's hostPath plugin does before any container starts.
 */
import {randomBytes} from 'node:crypto'
import {existsSync} from 'node:fs'
import {chmod, lstat, mkdir, realpath, rm, stat, writeFile} from 'node:fs/promises'
import {basename, dirname, isAbsolute, join} from 'node:path'

import type {HostPathType, PodModel, VolumeModel} from '../../manifest/model.js'
import {podHostnameAndDomain} from '../../manifest/pod-spec.js'
import {podDirectory, podDirRootFromEnv} from '../core/pod-directory.js'
import {podDirectoryOf} from '../../kube/labels.js'
import {setVolumeOwnership, writeAtomically} from './atomic-writer.js'
import {claimHostPath, isClaimVolume, provisionClaim} from './claims.js'
import {DESIRED_POD_FILE, recordOfAnotherRuntime} from '../core/record-owner.js'
import type {DownwardContext} from '../core/env.js'
import {PodFailedError, PodFailureReason} from '../core/reasons.js'
import {
  isMemoryBacked,
  isReadOnlyVolume,
  keepsRecordedPayload,
  mountsUnder,
  mountTmpfs,
  tmpfsOptions,
  unmountUnder,
  volumePayload,
  volumePluginDir,
} from './volumes.js'

/** Host path of every volume, by name (pure: what the mounts will point at); an image volume has none (the runtime mounts it). */
export function volumeHostPaths(pod: PodModel, root: string): Map<string, string> {
  const paths = new Map<string, string>()
  for (const volume of pod.volumes) if (!volume.image) paths.set(volume.name, volumeHostPath(pod, volume, root))
  return paths
}

function volumeHostPath(pod: PodModel, volume: VolumeModel, root: string): string {
  if (volume.hostPath) return volume.hostPath.path
  if (isClaimVolume(volume)) return claimHostPath(pod, volume)
  return `${podDirectory(root, pod.uid)}/volumes/${volumePluginDir(volume) ?? 'kubernetes.io~empty-dir'}/${volume.name}`
}

/**
 * Creates emptyDir directories (a tmpfs for medium Memory), writes configMap, secret, downwardAPI
 * and projected volumes, and checks (or creates) hostPath volumes; before the sandbox exists, like the kubelet.
 */
export async function setUpVolumes(pod: PodModel, root: string, context?: DownwardContext): Promise<void> {
  for (const volume of pod.volumes) {
    // The runtime mounts an image volume from its image store.
    if (volume.image) continue
    const path = volumeHostPath(pod, volume, root)
    try {
      if (volume.hostPath) {
        await checkHostPath(path, volume.hostPath.type)
        continue
      }

      // A claim's directory outlives the pod, and is not chowned for fsGroup (as a hostPath PersistentVolume is not).
      if (isClaimVolume(volume)) {
        await provisionClaim(pod, volume)
        continue
      }

      await mkdir(path, {recursive: true})
      if (isMemoryBacked(volume) && (await mountsUnder(path)).length === 0) await mountTmpfs(path, tmpfsOptions(volume))
      // The kubelet's emptyDir (and the one wrapped by the other plugins) is world-writable so any container user can use it.
      if (!isMemoryBacked(volume)) await chmod(path, 0o777)
      // A recreation from the recorded pod keeps a configMap or secret volume as written; the rest is written again.
      const kept = keepsRecordedPayload(pod, volume) && existsSync(`${path}/..data`)
      const payload = context && !kept ? volumePayload(pod, volume, context) : undefined
      if (payload) await writeAtomically(path, payload)
      const fsGroup = pod.securityContext?.fsGroup
      if (fsGroup !== undefined) {
        await setVolumeOwnership(path, {
          fsGroup,
          readOnly: isReadOnlyVolume(volume),
          changePolicy: pod.securityContext?.fsGroupChangePolicy,
        })
      }
    } catch (error) {
      throw new PodFailedError(`MountVolume.SetUp failed for volume "${volume.name}" : ${(error as Error).message}`, {
        reason: PodFailureReason.FailedMount,
      })
    }
  }
}

const TYPE_CHECKS: Record<
  Exclude<HostPathType, '' | 'DirectoryOrCreate' | 'FileOrCreate'>,
  [string, (s: Awaited<ReturnType<typeof stat>>) => boolean]
> = {
  Directory: ['a directory', (s) => s.isDirectory()],
  File: ['a file', (s) => s.isFile()],
  Socket: ['a socket', (s) => s.isSocket()],
  CharDevice: ['a character device', (s) => s.isCharacterDevice()],
  BlockDevice: ['a block device', (s) => s.isBlockDevice()],
}

export async function checkHostPath(path: string, type: HostPathType): Promise<void> {
  if (type === '') return
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return
    throw error
  })
  if (type === 'DirectoryOrCreate') {
    if (!info) await mkdir(path, {recursive: true, mode: 0o755})
    else if (!info.isDirectory()) throw new Error(`hostPath type check failed: ${path} is not a directory`)
    return
  }

  if (type === 'FileOrCreate') {
    if (!info) await writeFile(path, '', {mode: 0o644, flag: 'a'})
    else if (!info.isFile()) throw new Error(`hostPath type check failed: ${path} is not a file`)
    return
  }

  const [what, matches] = TYPE_CHECKS[type]
  // The kubelet says the same whether the path is missing or of another type.
  if (!info) throw new Error(`hostPath type check failed: ${path} is not ${what}`)
  if (!matches(info)) throw new Error(`hostPath type check failed: ${path} is not ${what}`)
}

/** What /etc/hosts adds beside the pod's IPs: the subdomain FQDN and spec.hostAliases. */
export interface HostsExtras {
  domain?: string
  hostAliases?: ReadonlyArray<{ip: string; hostnames: readonly string[]}>
}

/** The kubelet's managed /etc/hosts (kubelet_pods.go managedHostsFileContent, hostsEntriesFromHostAliases). */
export function managedHostsFile(ips: readonly string[], hostname: string, extras: HostsExtras = {}): string {
  const lines = [
    '# Kubernetes-managed hosts file.',
    '127.0.0.1\tlocalhost',
    '::1\tlocalhost ip6-localhost ip6-loopback',
    'fe00::0\tip6-localnet',
    'fe00::0\tip6-mcastprefix',
    'fe00::1\tip6-allnodes',
    'fe00::2\tip6-allrouters',
    ...ips.map((ip) => (extras.domain ? `${ip}\t${hostname}.${extras.domain}\t${hostname}` : `${ip}\t${hostname}`)),
  ]
  const aliases = extras.hostAliases ?? []
  if (aliases.length > 0) {
    lines.push('', '# Entries added by HostAliases.', ...aliases.map((alias) => `${alias.ip}\t${alias.hostnames.join('\t')}`))
  }

  return `${lines.join('\n')}\n`
}

export function etcHostsPath(root: string, uid: string): string {
  return `${podDirectory(root, uid)}/etc-hosts`
}

export async function writeEtcHosts(
  root: string,
  uid: string,
  ips: readonly string[],
  hostname: string,
  extras: HostsExtras = {},
): Promise<string> {
  const path = etcHostsPath(root, uid)
  await mkdir(dirname(path), {recursive: true})
  await writeFile(path, managedHostsFile(ips, hostname, extras), {mode: 0o644})
  return path
}

/** The pod's managed /etc/hosts: its IPs under its hostname (and subdomain FQDN), then spec.hostAliases. */
export function writePodEtcHosts(root: string, pod: PodModel, ips: readonly string[]): Promise<string> {
  const {hostname, domain} = podHostnameAndDomain(pod)
  return writeEtcHosts(root, pod.uid, ips, hostname, {domain, hostAliases: pod.hostAliases})
}

/** containers/<name>/<8 hex>: an empty, world-writable file mounted at terminationMessagePath. */
export async function createTerminationMessageFile(root: string, uid: string, containerName: string): Promise<string> {
  const directory = `${podDirectory(root, uid)}/containers/${containerName}`
  await mkdir(directory, {recursive: true})
  const path = `${directory}/${randomBytes(4).toString('hex')}`
  await writeFile(path, '', {flag: 'a'})
  await chmod(path, 0o666)
  return path
}

/**
 * Removes the pod's directory (emptyDir data, etc-hosts, termination files); absent is fine. With
 * `runtime`, a directory whose pod.json is another runtime's record stays (record-owner.ts): that
 * uid is a pod living there.
 */
export async function removePodDirectory(root: string, uid: string, runtime?: string): Promise<void> {
  if (runtime !== undefined && (await recordOfAnotherRuntime(podDirectory(root, uid), runtime))) return
  await unmountUnder(podDirectory(root, uid))
  await rm(podDirectory(root, uid), {recursive: true, force: true})
}

export {DESIRED_POD_FILE} from '../core/record-owner.js'

/**
 * The pod directory `run` recorded on a sandbox. The annotation is only a claim (any tool can write
 * it): the directory is `<root>/<uid>` under podctl's own configured root, and only when the
 * annotation names exactly that directory (symlinks resolved) and it is a real directory, not a
 * symlink out of the root; else undefined. Undefined too when its pod.json is the record of a
 * runtime other than `runtime` (record-owner.ts): that directory is the other runtime's pod's.
 */
async function recordedPodDirectory(
  sandbox: {annotations: Record<string, string>; metadata?: {uid: string}},
  root: string,
  runtime?: string,
): Promise<string | undefined> {
  const path = podDirectoryOf(sandbox.annotations)
  const uid = sandbox.metadata?.uid
  if (!path || !uid || !isAbsolute(path) || !isAbsolute(root) || basename(path) !== uid) return undefined
  if (uid === '.' || uid === '..' || uid.includes('/') || path.split('/').includes('..')) return undefined
  const realRoot = await realpath(root).catch(() => undefined)
  const recordedParent = await realpath(dirname(path)).catch(() => undefined)
  if (!realRoot || realRoot === '/' || recordedParent !== realRoot) return undefined
  const target = join(realRoot, uid)
  const info = await lstat(target).catch(() => undefined)
  if (!info?.isDirectory()) return undefined
  return (await recordOfAnotherRuntime(target, runtime)) ? undefined : target
}

/** Removes the pod directory `run` recorded on a sandbox, as the kubelet removes a deleted pod's directory. */
export async function removeRecordedPodDirectory(
  sandbox: {annotations: Record<string, string>; metadata?: {uid: string}},
  root: string = podDirRootFromEnv(),
  runtime?: string,
): Promise<void> {
  const target = await recordedPodDirectory(sandbox, root, runtime)
  if (!target) return
  await unmountUnder(target)
  await rm(target, {recursive: true, force: true})
}

/**
 * Drops what the pod should run (its pod.json) and nothing else: a pod being killed on purpose is
 * no longer wanted, so a supervisor that looks while its containers stop leaves it alone, as the
 * kubelet drops a deleted pod from its desired state before it kills it.
 */
export async function forgetRecordedPod(
  sandbox: {annotations: Record<string, string>; metadata?: {uid: string}},
  root: string = podDirRootFromEnv(),
  runtime?: string,
): Promise<void> {
  const target = await recordedPodDirectory(sandbox, root, runtime)
  if (target) await rm(join(target, DESIRED_POD_FILE), {force: true})
}
