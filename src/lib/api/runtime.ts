/**
 * connect(): the runtime the CLI would use (--runtime-endpoint, CONTAINER_RUNTIME_ENDPOINT, the crictl
 * config, else the well-known sockets probed), and run(): `podctl run`'s SyncPod with its waits and
 * rollback, returning handles. A Runtime remembers the pods it ran; disposing of it kills those still
 * there and closes the connection.
 */
import {CRI_CLIENT_VERSION, type CriClient, DEFAULT_CALL_TIMEOUT_MS} from '../cri/client.js'
import {loadConfig, locateConfig} from '../cri/config.js'
import {connectRuntime} from '../cri/connect.js'
import {InterruptedError, UsageError} from '../errors.js'
import {DEFAULT_CLAIMS_ROOT, DEFAULT_POD_DIR_ROOT, DEFAULT_POD_LOGS_ROOT} from '../kube/helpers.js'
import {discardEvents, type PodEvent} from '../kube/events.js'
import {nodeSettings} from '../kubelet/core/node-settings.js'
import {runPods} from '../kubelet/run/run-pods.js'
import {describeFailure, type PodRunResult} from '../kubelet/run/run-result.js'
import {DEFAULT_RUN_PARALLEL, DEFAULT_RUN_TIMEOUT_MS} from '../kubelet/run/run-defaults.js'
import type {WaitMode} from '../kubelet/run/run-pod.js'
import {refuseBesideKubelet} from '../local-kubelet/runtime-owner.js'
import type {ApiContext} from './context.js'
import {reapGoneSessions, withLibrarySession} from '../kubelet/workers/gone-sessions.js'
import {LIBRARY_GRACE_PERIOD_SECONDS, LIBRARY_SETTLE_MS, withDefaultGrace} from './library-defaults.js'
import {loadManifestInput, type LoadOptions, type ManifestInput} from './manifest-input.js'
import {inLibraryWords, rethrowInLibraryWords} from './library-words.js'
import {Pod} from './pod.js'

export interface ConnectOptions {
  /** As --runtime-endpoint (unix:///run/containerd/containerd.sock or a path); default as the CLI resolves it. */
  runtimeEndpoint?: string
  /** As --image-endpoint; default the runtime endpoint. */
  imageEndpoint?: string
  /** The crictl config file (endpoints, timeout); default $CRI_CONFIG_FILE, else /etc/crictl.yaml. */
  configFile?: string
  /** Connect timeout (ms, default 2000). */
  connectTimeoutMs?: number
  /** Deadline of each runtime call (ms); default the crictl config's timeout, else 10 s. */
  callTimeoutMs?: number
  /** As --pod-logs-root; default $PODCTL_POD_LOGS_ROOT, else /var/log/pods. */
  podLogsRoot?: string
  /** As --pod-dir-root; default $PODCTL_POD_DIR_ROOT, else /var/lib/podctl/pods. */
  podDirRoot?: string
  /** As --claims-root; default $PODCTL_CLAIMS_ROOT, else /var/lib/podctl/claims. */
  claimsRoot?: string
  /** Where the defaults come from (default process.env). */
  env?: NodeJS.ProcessEnv
  /**
   * Kill first the pods of library sessions that are gone (their test process ended without killing
   * them: SIGKILL, a crash, a timed-out worker); default true. false keeps them for a post-mortem.
   */
  reap?: boolean
}

export interface RunOptions extends LoadOptions {
  /** What run returns after, as run --wait (default running). */
  wait?: WaitMode
  /** Deadline of the whole run (ms, default 5 min, 0 for none); a DeadlineExceededError names what was not ready. */
  timeoutMs?: number
  /** As run --replace: kill a pod of the same name first and start a new sandbox. */
  replace?: boolean
  /**
   * With wait: 'running', watch the containers this long after the last start for a crash (ms; default
   * 0 in the library, where `podctl run` watches 1000).
   */
  settleMs?: number
  /**
   * The grace period of pods whose manifest sets no spec.terminationGracePeriodSeconds (seconds,
   * default 2 in the library, where the kubelet's is 30): a test's pods are killed in seconds.
   */
  defaultGracePeriodSeconds?: number
  /** As run --runtime-handler: overrides spec.runtimeClassName. */
  runtimeHandler?: string
  /**
   * A pull the registry refuses (image not found, unauthorized): 'fail-fast' (the default) rejects at
   * its first answer with an ErrImagePullError or UnauthorizedError; 'kubelet' keeps the kubelet's
   * back-off (ImagePullBackOff) until timeoutMs. A registry that cannot be reached is retried either way.
   */
  pullRetries?: 'fail-fast' | 'kubelet'
  /** As run --force: run beside a kubelet that uses this runtime. */
  force?: boolean
  /** Pods started at once, and image pulls at once (default 3). */
  parallel?: number
  /** Aborting it rolls the pods back and the run rejects with an InterruptedError. */
  signal?: AbortSignal
  /** The kubelet's events as they happen (Pulling, Created, Started, Unhealthy, ...). */
  onEvent?: (event: PodEvent) => void
  /** Warnings the CLI prints on stderr (fields with no effect on one node, ...); default: dropped. */
  onWarning?: (line: string) => void
}

export class Runtime implements AsyncDisposable {
  private readonly running = new Set<Pod>()

  /** @internal */
  constructor(private readonly context: ApiContext) {}

  /**
   * The runtime endpoint in use, e.g. unix:///run/containerd/containerd.sock.
   * @throws nothing
   */
  get endpoint(): string {
    return this.context.client.runtimeEndpoint
  }

  /**
   * Runs every pod of the manifest as `podctl run` does and returns their handles once each has reached
   * `wait`. When one pod fails, the others are killed too and the run rejects with the pod's error.
   * @throws ManifestError when the manifest is not valid; UsageError for options that do not fit it;
   * ErrImagePullError, UnauthorizedError, ErrImageNeverPullError or InvalidImageNameError (ImageError) when an
   * image cannot be had (ImagePullBackOffError with pullRetries: 'kubelet'); PodFailedError when a container
   * fails to start, crash-loops or a hook fails (with its exit code and last log lines); AlreadyExistsError when
   * a pod of the same name runs (pass replace: true); DeadlineExceededError when timeoutMs runs out;
   * InterruptedError when signal aborts; KubeletOwnsRuntimeError beside a kubelet (pass force: true);
   * RuntimeUnreachableError, RuntimeError for the runtime's own failures.
   */
  async run(manifest: ManifestInput, options: RunOptions = {}): Promise<Pod[]> {
    return this.runInCliWords(manifest, options).catch(rethrowInLibraryWords)
  }

  /** run() as `podctl run` says it; run() maps its words. */
  private async runInCliWords(manifest: ManifestInput, options: RunOptions): Promise<Pod[]> {
    const {client, podLogsRoot: logsRoot, podDirRoot, claimsRoot} = this.context
    const warn = options.onWarning ? (line: string) => options.onWarning!(inLibraryWords(line)) : () => {}
    const loaded = await loadManifestInput(manifest, {...options, claimsRoot})
    for (const line of loaded.warnings) warn(line)
    const graced = withDefaultGrace(loaded.pods, options.defaultGracePeriodSeconds ?? LIBRARY_GRACE_PERIOD_SECONDS)
    // This process's session on every pod: if it dies without killing them, the next connect() does.
    const pods = withLibrarySession(graced)
    await refuseBesideKubelet(client, {force: options.force ?? false, warn})
    const node = await nodeSettings({
      logsRoot,
      podDirRoot,
      runtimeHandler: options.runtimeHandler,
      settleMs: options.settleMs ?? LIBRARY_SETTLE_MS,
    })
    const timeoutMs = options.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS
    const settings = {
      ...node,
      wait: options.wait ?? 'running',
      replace: options.replace ?? false,
      keepOnFailure: false,
      // The error carries the container's last log lines; nothing of a failed pod stays on the node.
      removeLogsOnRollback: true,
      remove: false,
      deadline: timeoutMs > 0 ? Date.now() + timeoutMs : undefined,
    }
    const deps = {
      events: options.onEvent ?? discardEvents,
      signal: options.signal ?? new AbortController().signal,
      parallel: options.parallel ?? DEFAULT_RUN_PARALLEL,
      refusedPullRetries: options.pullRetries === 'kubelet' ? undefined : 0,
    }
    const outcomes = await runPods(client, pods, settings, deps)
    const started = outcomes.filter((outcome) => !outcome.failure && outcome.result.sandboxId).map((outcome) => this.track(outcome.result))
    const failed = outcomes.find((outcome) => outcome.failure)
    if (!failed && !options.signal?.aborted) return started
    // All or nothing: what did start is killed before the failure is reported.
    await Promise.allSettled(started.map((pod) => pod.kill({force: true})))
    if (!failed) throw new InterruptedError('run interrupted; the pods it was starting were rolled back')
    throw describeFailure(failed)
  }

  /**
   * run() for a manifest that holds exactly one pod.
   * @throws what run() throws; UsageError when the manifest makes several pods (they are killed).
   */
  async runPod(manifest: ManifestInput, options: RunOptions = {}): Promise<Pod> {
    const pods = await this.run(manifest, options)
    if (pods.length === 1) return pods[0]
    await Promise.allSettled(pods.map((pod) => pod.kill({force: true})))
    throw new UsageError(`manifest: it makes ${pods.length} pods; runPod() runs one, use run() for several`)
  }

  /**
   * Closes the connection; pods keep running.
   * @throws nothing
   */
  close(): void {
    this.context.client.close()
  }

  /**
   * Kills the pods this Runtime ran that are still there, then closes the connection.
   * @throws nothing: a kill that fails leaves its pod to the next connect()'s reaper once this process ends
   */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      await Promise.allSettled([...this.running].map((pod) => pod.kill()))
    } finally {
      this.close()
    }
  }

  private track(result: PodRunResult): Pod {
    const pod: Pod = new Pod(this.context, result, (killed) => this.running.delete(killed))
    this.running.add(pod)
    return pod
  }
}

/**
 * The runtime the CLI would talk to with the same flags, environment and crictl config; it answers Version first.
 * @throws RuntimeUnreachableError when no runtime answers at the endpoint; DeadlineExceededError when it does
 * not answer within connectTimeoutMs; UsageError for an endpoint or crictl config file that is not valid.
 */
export async function connect(options: ConnectOptions = {}): Promise<Runtime> {
  const env = options.env ?? process.env
  const config = await loadConfig(locateConfig(options.configFile, env))
  const endpoints = {runtimeFlag: options.runtimeEndpoint, imageFlag: options.imageEndpoint, env, config}
  const {client} = await connectRuntime(endpoints, {
    connectTimeoutMs: options.connectTimeoutMs,
    callTimeoutMs: options.callTimeoutMs ?? config?.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
  })
  await ensureReachable(client)
  const context = {
    client,
    podLogsRoot: options.podLogsRoot ?? nonEmpty(env.PODCTL_POD_LOGS_ROOT) ?? DEFAULT_POD_LOGS_ROOT,
    podDirRoot: options.podDirRoot ?? nonEmpty(env.PODCTL_POD_DIR_ROOT) ?? DEFAULT_POD_DIR_ROOT,
    claimsRoot: options.claimsRoot ?? nonEmpty(env.PODCTL_CLAIMS_ROOT) ?? DEFAULT_CLAIMS_ROOT,
  }
  // A reap that fails is no reason to refuse the connection: the next connect() tries again.
  if (options.reap ?? true) await reapGoneSessions(client, {...context, requestedBy: 'the library (connect)'}).catch(() => [])
  return new Runtime(context)
}

/** A configured endpoint is not probed by connectPlan: ask it once, so connect() fails where the runtime is missing. */
async function ensureReachable(client: CriClient): Promise<void> {
  try {
    await client.runtime('version', {version: CRI_CLIENT_VERSION}, {timeoutMs: client.connectTimeoutMs + client.callTimeoutMs})
  } catch (error) {
    client.close()
    throw error
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value
}
