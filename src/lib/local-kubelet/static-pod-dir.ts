/**
 * Where `run --static` and `kill --static` find the kubelet's static pod directory: --static-dir, else
 * the static pod path of the kubelet that uses this runtime (its --pod-manifest-path, else staticPodPath
 * in its --config file), seen from here through the kubelet's own root. The directory must exist: the
 * kubelet watches a directory that is there, and podctl does not make one it would never look at.
 */
import {statSync} from 'node:fs'
import {hostname} from 'node:os'

import {UsageError} from '../errors.js'
import {type DetectOptions, kubeletOfRuntime, type KubeletSighting} from './detect.js'
import {nameOf} from './runtime-owner.js'

/** How long the kubelet takes at most to notice a file come or go (KubeletConfiguration fileCheckFrequency, default 20s). */
export const FILE_CHECK_FREQUENCY = '20 s'

export interface StaticDirectory {
  /** The directory as podctl reads and writes it (through /proc/PID/root when the kubelet has its own root). */
  path: string
  /** Where it came from, for messages: "--static-dir", "--pod-manifest-path of kubelet pid 42", ... */
  source: string
  /** The node name the kubelet appends to a static pod's name (`<name>-<node>`). */
  nodeName: string
  kubelet?: KubeletSighting
}

export interface StaticDirOptions {
  /** --static-dir: a directory on this machine, used as given. */
  staticDir?: string
  /** The runtime endpoint (resolving it may connect); with --static-dir a failure only costs the kubelet's node name. */
  endpoint: () => Promise<string>
  detect?: DetectOptions
}

/** The static pod directory to use, checked to exist; a UsageError naming the fix when there is none. */
export async function staticPodDirectory(options: StaticDirOptions): Promise<StaticDirectory> {
  const {staticDir} = options
  let endpoint: string | undefined
  let kubelet: KubeletSighting | undefined
  try {
    endpoint = await options.endpoint()
    kubelet = await kubeletOfRuntime(endpoint, options.detect)
  } catch (error) {
    if (staticDir === undefined) throw error
  }

  const nodeName = kubelet?.settings?.nodeName ?? hostname().trim().toLowerCase()
  if (staticDir !== undefined) return existing({path: staticDir, source: '--static-dir', nodeName, kubelet})
  if (!kubelet) {
    throw new UsageError(
      `no kubelet uses the runtime at ${endpoint}, so there is no static pod directory to hand the pod to; ` +
        'give one with --static-dir DIR (or run without --static)',
    )
  }

  const settings = kubelet.settings
  if (!settings?.staticPodPath) {
    const why = settings === undefined ? 'podctl cannot read its settings' : 'it has no static pod directory configured'
    const problems = settings?.problems.length ? ` (${settings.problems.join('; ')})` : ''
    throw new UsageError(
      `${nameOf(kubelet)} uses this runtime but ${why}${problems}; configure staticPodPath in its --config ` +
        '(or --pod-manifest-path) and restart it, or pass --static-dir DIR',
    )
  }

  const source =
    settings.staticPodSource === 'flag'
      ? `--pod-manifest-path of ${nameOf(kubelet)}`
      : `staticPodPath in the --config ${settings.configFile} of ${nameOf(kubelet)}`
  return existing({path: kubelet.see(settings.staticPodPath), source, nodeName, kubelet})
}

function existing(directory: StaticDirectory): StaticDirectory {
  let isDirectory: boolean
  try {
    isDirectory = statSync(directory.path).isDirectory()
  } catch {
    const other = directory.source === '--static-dir' ? '' : ' or pass --static-dir DIR'
    throw new UsageError(
      `the static pod directory ${directory.path} (from ${directory.source}) does not exist; ` +
        `create it (the kubelet watches an existing directory)${other}`,
    )
  }

  if (!isDirectory) throw new UsageError(`the static pod directory ${directory.path} (from ${directory.source}) is not a directory`)
  return directory
}
