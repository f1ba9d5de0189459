/**
 * `kill --static`: the static pod file podctl wrote for a pod is removed from the kubelet's static pod
 * directory, and the kubelet then stops the pod itself. The pod is found by what the files say (every
 * non-dot file of the directory, as the kubelet reads them), by NAME or by the kubelet's NAME-<node>;
 * a file podctl did not write (no io.podctl.staticPod annotation) is never removed. No runtime object
 * is touched here.
 */
import {constants, readdirSync} from 'node:fs'
import {lstat, readFile, rm} from 'node:fs/promises'
import {join} from 'node:path'

import {asPodctlError, NotFoundError, type PodctlError, UsageError} from '../errors.js'
import {givenFlags} from '../util/given-flags.js'
import {podFullName} from '../kube/helpers.js'
import {PodctlAnnotation} from '../kube/labels.js'
import {MAX_MANIFEST_BYTES} from '../manifest/load.js'
import {FILE_CHECK_FREQUENCY, type StaticDirectory, type StaticDirOptions, staticPodDirectory} from './static-pod-dir.js'

/** What a static pod file says about its pod. */
export interface StaticPodFileInfo {
  name: string
  namespace: string
  /** Whether podctl wrote it (its pod carries the io.podctl.staticPod annotation). */
  ours: boolean
}

/**
 * The pod a static pod file holds, or undefined when it holds none podctl can read (the kubelet skips
 * those too). Only a regular file (not a link, FIFO or device) of at most MAX_MANIFEST_BYTES is read.
 */
export async function readStaticPodFile(file: string): Promise<StaticPodFileInfo | undefined> {
  try {
    const info = await lstat(file)
    if (!info.isFile() || info.size > MAX_MANIFEST_BYTES) return undefined
    const {parse} = await import('yaml')
    const text = await readFile(file, {encoding: 'utf8', flag: constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK})
    const document = parse(text) as {kind?: unknown; metadata?: Record<string, unknown>} | null
    const metadata = document?.metadata
    if (document?.kind !== 'Pod' || typeof metadata?.name !== 'string') return undefined
    const namespace = typeof metadata.namespace === 'string' && metadata.namespace !== '' ? metadata.namespace : 'default'
    const annotations = (metadata.annotations ?? {}) as Record<string, unknown>
    return {name: metadata.name, namespace, ours: annotations[PodctlAnnotation.staticPod] === 'true'}
  } catch {
    return undefined
  }
}

export interface StaticKillResult {
  static: true
  directory: string
  node: string
  items: Array<{pod: string; namespace: string; file: string; kubeletName: string}>
  failures: Array<{pod: string; code: string; exitCode: number; message: string}>
}

/** kill's flags that --static reads (-n: the namespace of the named pods, default "default"). */
export interface StaticKillFlags {
  namespace?: string
  'static-dir'?: string
  'ignore-not-found'?: boolean
  [flag: string]: unknown
}

/** kill's flags about runtime objects, which mean nothing for a file. */
const CONFLICTS = ['all', 'label', 'filename', 'grace-period', 'force', 'keep', 'delete-claims'] as const

/** kill --static: each named pod's file removed; every failure collected (the first sets the exit code). */
export async function removeStaticPods(
  refs: readonly string[],
  flags: StaticKillFlags,
  deps: Omit<StaticDirOptions, 'staticDir'>,
): Promise<{result: StaticKillResult; errors: PodctlError[]}> {
  const given = givenFlags(flags, CONFLICTS)
  if (given.length > 0) {
    const names = given.join(', ')
    throw new UsageError(`kill --static removes a static pod file (the kubelet stops the pod its own way), so it takes no ${names}`)
  }

  if (refs.length === 0) throw new UsageError("kill --static needs the name of a pod (NAME, or the kubelet's NAME-<node>)")
  const directory = await staticPodDirectory({...deps, staticDir: flags['static-dir']})
  const files = await podFiles(directory.path)
  const result: StaticKillResult = {static: true, directory: directory.path, node: directory.nodeName, items: [], failures: []}
  const errors: PodctlError[] = []
  for (const given of refs) {
    // NAME (in -n), or NAME_NAMESPACE as podctl prints pods ("_" is in neither).
    const [ref, namespace = flags.namespace ?? 'default'] = given.split('_', 2)
    try {
      const found = findPod(ref, namespace, files, directory)
      if (!found) continue
      await rm(found.file).catch((error: NodeJS.ErrnoException) => {
        throw new UsageError(`cannot remove ${found.file} (${error.code ?? error.message}); the static pod directory needs write access`)
      })
      result.items.push({
        pod: podFullName(found.name, namespace),
        namespace,
        file: found.file,
        kubeletName: `${found.name}-${directory.nodeName}`,
      })
    } catch (error) {
      const failure = asPodctlError(error)
      errors.push(failure)
      result.failures.push({pod: podFullName(ref, namespace), code: failure.code, exitCode: failure.exitCode, message: failure.message})
    }
  }

  return {result, errors}

  function findPod(ref: string, ns: string, all: Array<{file: string; info: StaticPodFileInfo}>, dir: StaticDirectory) {
    const suffix = `-${dir.nodeName}`
    const names = ref.endsWith(suffix) && ref.length > suffix.length ? [ref, ref.slice(0, -suffix.length)] : [ref]
    const match = names.map((name) => all.find(({info}) => info.name === name && info.namespace === ns)).find(Boolean)
    if (!match) {
      if (flags['ignore-not-found']) return
      throw new NotFoundError(
        `no static pod ${podFullName(ref, ns)} in ${dir.path} (from ${dir.source}); ` +
          'podctl kill --static removes the files run --static wrote',
      )
    }

    if (!match.info.ours) {
      throw new UsageError(
        `${match.file} holds pod ${podFullName(match.info.name, ns)} but podctl did not write it, so it is left alone; ` +
          'remove it by hand to stop the pod',
      )
    }

    return {file: match.file, name: match.info.name, namespace: ns}
  }
}

/** Every file the kubelet would read (it skips dot-files), with the pod it holds. */
async function podFiles(directory: string): Promise<Array<{file: string; info: StaticPodFileInfo}>> {
  const names = readdirSync(directory, {withFileTypes: true})
    .filter((entry) => !entry.name.startsWith('.') && entry.isFile())
    .map((entry) => entry.name)
    .sort()
  const read = await Promise.all(
    names.map(async (name) => ({file: join(directory, name), info: await readStaticPodFile(join(directory, name))})),
  )
  return read.flatMap(({file, info}) => (info ? [{file, info}] : []))
}

/** One line per pod removed. */
export function describeStaticKill(result: StaticKillResult): string {
  return result.items
    .map(({pod, file, kubeletName}) => `pod ${pod}: removed ${file}; the kubelet stops ${kubeletName} within about ${FILE_CHECK_FREQUENCY}`)
    .join('\n')
}
