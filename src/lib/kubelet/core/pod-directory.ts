/**
 * Where a pod's directory is: <root>/<uid>, like the kubelet's /var/lib/kubelet/pods/<uid>. Only
 * the path, apart from pod-dirs.ts (which lays the directory out, mounts volumes and so loads
 * node:child_process): readers of a pod's records, such as `pods` and `status`, need no more.
 */
import {DEFAULT_POD_DIR_ROOT} from '../../kube/helpers.js'

/** The configured root when no flag names one: $PODCTL_POD_DIR_ROOT (what run's --pod-dir-root reads too), else the default. */
export function podDirRootFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.PODCTL_POD_DIR_ROOT || DEFAULT_POD_DIR_ROOT
}

export function podDirectory(root: string, uid: string): string {
  return `${root.replace(/\/+$/, '')}/${uid}`
}
