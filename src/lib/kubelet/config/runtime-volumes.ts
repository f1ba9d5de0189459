/**
 * A pod's volumes rebuilt from its containers' CRI mounts, for `podctl export` of a pod with no
 * record. The kubelet (and podctl) put a pod volume at `<pod dir>/volumes/<plugin>/<name>`, so the
 * plugin directory says the kind and the last part the name; emptyDirs come back whole, any other
 * host path is a hostPath volume. What a ConfigMap, Secret, downward API or projected volume held
 * is not on the runtime: those come back as emptyDirs with a note naming the volume. The managed
 * /etc/hosts and the termination-message file are the kubelet's, not volumes.
 */
import type {ManifestObject} from '../../manifest/container-manifest.js'
import type {Mount} from '../../../generated/runtime/v1/api.js'
import {MountPropagation} from '../../../generated/runtime/v1/api.js'

const POD_VOLUME = /\/volumes\/kubernetes\.io~([a-z-]+)\/([^/]+)(?:\/(.+))?$/
/** The kubelet's bind mount of a subPath: <pod dir>/volume-subpaths/<volume>/<container>/<index>. */
const SUBPATH_MOUNT = /\/volume-subpaths\/([^/]+)\/[^/]+\/\d+$/
/** The service account token the kubelet projects (kube-api-access-xxxxx): an API server's, never the user's. */
const SERVICE_ACCOUNT_VOLUME = /^kube-api-access-[a-z0-9]+$/

const PLUGIN_KINDS: Record<string, string> = {
  configmap: 'a configMap',
  secret: 'a secret',
  'downward-api': 'a downwardAPI',
  projected: 'a projected',
}

const PROPAGATION: Partial<Record<MountPropagation, string>> = {
  [MountPropagation.PROPAGATION_HOST_TO_CONTAINER]: 'HostToContainer',
  [MountPropagation.PROPAGATION_BIDIRECTIONAL]: 'Bidirectional',
}

/** The pod's volumes found so far (by name, in the order first seen) and the notes about them. */
export class RuntimeVolumes {
  private readonly volumes = new Map<string, ManifestObject>()
  private readonly hostPaths = new Map<string, string>()
  readonly notes: string[] = []

  /** The v1 volumeMounts of one container; its managed files (/etc/hosts, the termination log) left out. */
  mountsOf(container: string, mounts: readonly Mount[], terminationMessagePath: string | undefined): ManifestObject[] {
    const out: ManifestObject[] = []
    for (const mount of mounts) {
      if (mount.containerPath === '/etc/hosts' && mount.hostPath.endsWith('/etc-hosts')) continue
      if (mount.containerPath === terminationMessagePath && /\/containers\/[^/]+\/[^/]+$/.test(mount.hostPath)) continue
      const found = this.volumeOf(container, mount)
      if (!found) continue
      out.push({
        name: found.name,
        mountPath: mount.containerPath,
        ...(mount.readonly ? {readOnly: true} : {}),
        ...(found.subPath ? {subPath: found.subPath} : {}),
        ...(PROPAGATION[mount.propagation] ? {mountPropagation: PROPAGATION[mount.propagation]} : {}),
      })
    }

    return out
  }

  /** The volumes, without the left-out service account token. */
  list(): ManifestObject[] {
    return [...this.volumes.values()].filter((volume) => volume.name !== undefined)
  }

  private volumeOf(container: string, mount: Mount): {name: string; subPath?: string} | undefined {
    const subPathMount = SUBPATH_MOUNT.exec(mount.hostPath)
    if (subPathMount) {
      const name = subPathMount[1]
      const where = `container ${container}: the subPath of volume ${name} at ${mount.containerPath}`
      this.notes.push(`${where} is not on the runtime; the whole volume is mounted`)
      this.add(name, {name, emptyDir: {}})
      return {name}
    }

    const podVolume = POD_VOLUME.exec(mount.hostPath)
    if (!podVolume) return {name: this.hostPathVolume(mount.hostPath)}
    const [, plugin, name, subPath] = podVolume
    if (SERVICE_ACCOUNT_VOLUME.test(name)) {
      if (!this.volumes.has(name)) this.notes.push(`volume ${name} (the service account token an API server projects) is left out`)
      this.volumes.set(name, {})
      return undefined
    }

    if (!this.volumes.has(name)) {
      const kind = PLUGIN_KINDS[plugin]
      if (kind)
        this.notes.push(
          `volume ${name} was ${kind} volume; what it held is not on the runtime: exported as an emptyDir, give it its source`,
        )
      else if (plugin !== 'empty-dir') this.notes.push(`volume ${name} (kubernetes.io~${plugin}) is exported as an emptyDir`)
    }

    this.add(name, {name, emptyDir: {}})
    return {name, subPath}
  }

  private hostPathVolume(path: string): string {
    const known = this.hostPaths.get(path)
    if (known) return known
    const name = `host-${this.hostPaths.size + 1}`
    this.hostPaths.set(path, name)
    this.add(name, {name, hostPath: {path}})
    return name
  }

  private add(name: string, volume: ManifestObject): void {
    if (!this.volumes.has(name)) this.volumes.set(name, volume)
  }
}
