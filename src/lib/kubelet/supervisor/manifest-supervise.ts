/**
 * `sync --watch -f PATH…`: the watched manifest source (config/manifest-source.ts) feeds the pod
 * changes (manifest-sync.ts) while the supervisor (supervisor.ts) keeps the pods its files name —
 * and any other selection given (--all, -l, names) — restarted, probed and recreated. The source
 * and the supervisor run side by side until the signal aborts; file changes and retries are
 * handled one at a time, never two at once.
 */
import type {CriClient} from '../../cri/client.js'
import {asPodctlError} from '../../errors.js'
import {warningEvent} from '../../kube/events.js'
import type {SyncTarget} from '../workers/sync-pods.js'
import {checkWatchedPaths, ManifestSource} from '../config/manifest-source.js'
import {terminatingPods} from '../config/termination.js'
import {podFullName} from '../../kube/helpers.js'
import {nodeSettings} from '../core/node-settings.js'
import type {SyncSettings} from '../kuberuntime/sync-pod.js'
import {claimsRootFromEnv} from '../volumes/claims.js'
import type {ReadingOptions} from '../config/manifest-files.js'
import {ManifestSync, type ManifestSyncDeps, type ManifestSyncSettings} from './manifest-sync.js'
import {type SuperviseDeps, superviseSelection} from './supervisor.js'
import {withLostPods} from '../workers/lost-pods.js'

const RETRY_CHECK_MS = 1000

export interface ManifestSuperviseOptions {
  /** The watched paths as given (-f): checked (checkWatchedPaths) before anything runs. */
  paths: readonly string[]
  /** -n for pods that name no namespace; --claims-root (default $PODCTL_CLAIMS_ROOT, else the default root). */
  reading: {namespace?: string; claimsRoot?: string}
  /** Every pod the runtime has, grouped (node/select.ts). */
  listPods: () => Promise<SyncTarget[]>
  /** The user's own selection beside the files' pods, when given. */
  alsoSelect?: () => Promise<SyncTarget[]>
}

export async function watchManifests(
  options: ManifestSuperviseOptions,
  syncSettings: Omit<SyncSettings, 'deadline'>,
  deps: ManifestSyncDeps & Omit<SuperviseDeps, keyof ManifestSyncDeps> & {client: CriClient},
): Promise<void> {
  const {client, signal} = deps
  const paths = await checkWatchedPaths(options.paths)
  // What `run` needs to start a pod new to the node: the node's size, for admission.
  const settings: ManifestSyncSettings = await nodeSettings(syncSettings)
  const reading: ReadingOptions = {namespace: options.reading.namespace, claimsRoot: options.reading.claimsRoot ?? claimsRootFromEnv()}
  const sync = new ManifestSync(paths, settings, deps)
  // File changes and retries, one at a time.
  let queue = Promise.resolve()
  const serially = (work: () => Promise<void>) => {
    queue = queue.then(work).catch(() => {})
    return queue
  }

  const source = new ManifestSource(paths, {...reading, onUpdate: (update) => serially(() => sync.update(update))})
  const retries = setInterval(() => serially(() => sync.retryDue()), RETRY_CHECK_MS)
  const lost = {podDirRoot: settings.podDirRoot, runtime: client.runtimeEndpoint}
  const select = async (): Promise<SyncTarget[]> => {
    // The files' pods, and those whose termination is recorded (a file removed while the runtime did not
    // answer): their workers finish them once it does.
    const terminating = await terminatingPods(settings.podDirRoot, client.runtimeEndpoint)
    const names = new Set([...sync.names(), ...terminating.map((pod) => podFullName(pod.name, pod.namespace))])
    const pods = (await options.listPods()).filter((target) => names.has(target.fullName))
    const missing = [...names].filter((name) => !pods.some((target) => target.fullName === name))
    const found = await withLostPods(
      {pods, failures: missing.map((ref) => ({ref, error: undefined}))},
      {...lost, selection: {refs: [...names]}},
    )
    const others = (await options.alsoSelect?.()) ?? []
    return [...found.pods, ...others.filter((target) => !names.has(target.fullName))]
  }

  try {
    const watching = source.run(signal).catch((error: unknown) => {
      deps.events(warningEvent('SourceFailed', `watching the manifests failed: ${asPodctlError(error).message}`, 'supervisor'))
    })
    await Promise.all([watching, superviseSelection(select, settings, deps)])
  } finally {
    clearInterval(retries)
    await queue
  }
}
