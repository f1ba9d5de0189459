/** A handle on one container of a pod the API ran: exec, logs, copies and status, each asking the runtime afresh. */
import type {Writable} from 'node:stream'

import type {Container as CriContainer} from '../../generated/runtime/v1/api.js'
import type {ContainerType} from '../kube/labels.js'
import {DeadlineExceededError, NotFoundError, RuntimeError, UsageError} from '../errors.js'
import type {ContainerRoot} from '../host/container-root.js'
import {copyFromRoot, copyIntoRoot, type CopyResult, openForCopy, type Owners} from '../host/copy.js'
import {extractIntoRoot, tarFromRoot} from '../host/copy-tar.js'
import {readingNow} from '../host/tar-reader.js'
import {streamSink} from '../host/tar-writer.js'
import {type ContainerReport, getPodStatus} from '../kubelet/status/pod-status.js'
import {sandboxesByFullName} from '../kubelet/kuberuntime/sandbox.js'
import {execInContainer} from '../node/exec.js'
import {execEnteredFromHost} from './host-exec.js'
import {containerLogTarget} from '../node/container-logs.js'
import {resolveContainer} from '../node/resolve.js'
import type {ApiContext} from './context.js'
import {rethrowInLibraryWords} from './library-words.js'
import {followLog, type FollowOptions, type LogLine, type LogOptions, readLog} from './logs.js'

export interface ExecOptions {
  /** The command's own time limit (whole seconds, rounded up); the runtime stops it then (DeadlineExceededError). */
  timeoutMs?: number
  signal?: AbortSignal
  /**
   * Run as this user: UID[:GID], or NAME[:GROUP] from the container's /etc/passwd. With user, env or
   * workdir the command is entered from the host as `podctl exec --user/-e/-w` does (the CRI's exec has
   * no such options): it needs root on the node, and works on images without a shell.
   */
  user?: string
  /** Variables set over the container's environment (as exec -e). */
  env?: Readonly<Record<string, string>>
  /** The working directory in the container (as exec -w). */
  workdir?: string
}

export interface WaitForLogOptions {
  /** How long to wait for the line (ms, default 60 s): a DeadlineExceededError then. */
  timeoutMs?: number
  /** Only this stream's lines. */
  stream?: LogLine['stream']
  signal?: AbortSignal
}

const DEFAULT_WAIT_FOR_LOG_MS = 60_000

export interface ExecResult {
  exitCode: number
  stdout: string
  stderr: string
}

export class Container {
  /** @internal */
  constructor(
    private readonly context: ApiContext,
    readonly pod: {readonly name: string; readonly namespace: string},
    readonly name: string,
    readonly type: ContainerType,
  ) {}

  /**
   * Runs a command in the container (ExecSync, as `podctl exec` without -i/-t) and returns its exit code
   * and output. A non-zero exit is a result, and so is a command the runtime cannot start, as a shell
   * reports it: 127 when it is not found, 126 when it cannot be run, the runtime's reason on stderr.
   * @throws NotFoundError when the container is gone; ContainerNotRunningError when it does not run;
   * DeadlineExceededError when the command outlives timeoutMs; with user, env or workdir: UsageError for a
   * user, group or directory the container lacks, HostAccessError when this process cannot enter it (not
   * root); RuntimeUnreachableError, RuntimeError.
   */
  async exec(cmd: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    return this.execInCliWords(cmd, options).catch(rethrowInLibraryWords)
  }

  private async execInCliWords(cmd: readonly string[], options: ExecOptions): Promise<ExecResult> {
    const container = await this.current()
    if (options.user !== undefined || options.env !== undefined || options.workdir !== undefined) {
      return execEnteredFromHost(this.context.client, container, cmd, options)
    }

    try {
      const outcome = await execInContainer(this.context.client, container, cmd, options)
      return {exitCode: outcome.exitCode, stdout: outcome.stdout.toString('utf8'), stderr: outcome.stderr.toString('utf8')}
    } catch (error) {
      const unstarted = error instanceof RuntimeError ? commandNotStarted(error.grpc?.details ?? '') : undefined
      if (unstarted) return {exitCode: unstarted.exitCode, stdout: '', stderr: `${unstarted.reason}\n`}
      throw error
    }
  }

  /**
   * The log lines written so far (of the previous attempt with previous: true).
   * @throws NotFoundError when the container is gone (or has no previous attempt); LogUnreadableError when
   * this process may not read the log file.
   */
  async logs(options: LogOptions & {previous?: boolean} = {}): Promise<LogLine[]> {
    const target = await containerLogTarget(this.context.client, await this.current(), {previous: options.previous})
    return readLog(target.path, options).catch(rethrowInLibraryWords)
  }

  /**
   * The log lines as they are written, until the container exits: `for await (const line of container.followLogs())`.
   * @yields each line once it is complete (the last one also when the container exits mid-line)
   * @throws NotFoundError when the container is gone; LogUnreadableError when this process may not read the log file.
   */
  async *followLogs(options: FollowOptions = {}): AsyncGenerator<LogLine, void, undefined> {
    const container = await this.current()
    const target = await containerLogTarget(this.context.client, container)
    yield* followLog(this.context.client, {...target, containerId: container.id}, options)
  }

  /**
   * The first log line, already written or still to come, whose text matches `pattern` (a RegExp, or a
   * string the line contains): a server's "listening on :8080".
   * @throws DeadlineExceededError when no line matched within timeoutMs (default 60 s); RuntimeError
   * when the container exited without writing one; NotFoundError when the container is gone.
   */
  async waitForLog(pattern: RegExp | string, options: WaitForLogOptions = {}): Promise<LogLine> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_FOR_LOG_MS
    const matches = (text: string) => (typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text))
    const stop = new AbortController()
    const timer = setTimeout(() => stop.abort(), timeoutMs)
    const abort = () => stop.abort()
    options.signal?.addEventListener('abort', abort, {once: true})
    try {
      for await (const line of this.followLogs({stream: options.stream, signal: stop.signal})) if (matches(line.text)) return line
    } finally {
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', abort)
    }

    const wanted = `a log line matching ${String(pattern)}`
    if (options.signal?.aborted) throw new DeadlineExceededError(`waiting for ${wanted} in container ${this.label} was aborted`)
    if (stop.signal.aborted)
      throw new DeadlineExceededError(`container ${this.label} wrote no ${wanted.slice(2)} within ${timeoutMs} ms (timeoutMs)`)
    throw new RuntimeError(`container ${this.label} exited without writing ${wanted}`)
  }

  /**
   * Copies a local file or directory into the container, through its root as the node sees it (so the
   * image needs no shell or tar; the process must run as root on the node), as `podctl cp` does: into
   * `path` when it is a directory there, else to that name. Directories whole, symlinks as symlinks,
   * the local modes and owners kept (mapped into the container's user namespace).
   * @throws UsageError when `path` is not absolute; NotFoundError when the local file, the container or
   * the directory `path` is in is missing; HostAccessError when the container is not running, this
   * process cannot reach its root (not root), or `path` leads out of the container's root through a symlink.
   */
  async copyIn(localPath: string, path: string): Promise<CopyResult> {
    return this.withRoot(path, (root, owners, id) => copyIntoRoot(root, localPath, path, owners, id))
  }

  /**
   * Copies the container's file or directory `path` to `localPath` (into it when it is a directory), as
   * `podctl cp` does: files owned by this process's user with the container's modes.
   * @throws UsageError when `path` is not absolute or a directory would be merged into an existing one;
   * NotFoundError when `path` or the container is missing; HostAccessError as copyIn.
   */
  async copyOut(path: string, localPath: string): Promise<CopyResult> {
    return this.withRoot(path, (root, _owners, id) => copyFromRoot(root, path, localPath, id))
  }

  /**
   * Extracts a tar archive (pax, ustar or GNU; a Readable or any async iterable of bytes, read as it
   * comes) into the container's directory `directory`, as `podctl cp - POD:DIR`: the archive's modes,
   * mtimes and owners. Only under `directory`: an entry with an absolute name, a `..` or a path through
   * a symlink is refused. What was extracted before a failure stays; the error says what.
   * @throws UsageError when the archive is damaged or truncated, or `directory` is not absolute;
   * NotFoundError when `directory` is missing or not a directory; HostAccessError for a refused entry
   * (its message names it), and as copyIn.
   */
  async copyArchiveIn(archive: AsyncIterable<Uint8Array>, directory: string): Promise<CopyResult> {
    const reading = readingNow(archive)
    return this.withRoot(directory, async (root, owners, id) => extractIntoRoot(root, reading, directory, owners, id))
  }

  /**
   * Writes the container's file or directory `path` as a tar archive to `destination` (a file, a
   * socket, a PassThrough), chunk by chunk as it takes them, as `podctl cp POD:PATH -`: entries named
   * from `path`'s last component, with the container's modes, mtimes and owners. `destination` is not ended.
   * @throws NotFoundError when `path` or the container is missing; HostAccessError as copyIn; the
   * destination's own error when writing to it fails.
   */
  async copyArchiveOut(path: string, destination: Writable): Promise<CopyResult> {
    return this.withRoot(path, async (root, owners, id) => tarFromRoot(root, path, streamSink(destination), owners, id))
  }

  /**
   * The container as the kubelet's GetPodStatus reports it (state, exit code, reason, restarts as attempt).
   * @throws NotFoundError when the pod or the container is gone; RuntimeUnreachableError, RuntimeError.
   */
  async status(): Promise<ContainerReport> {
    const {client} = this.context
    const sandboxes = (await sandboxesByFullName(client, [this.pod])).values().next().value ?? []
    if (sandboxes.length === 0) throw this.gone()
    const report = await getPodStatus(client, sandboxes)
    const found = report.containers.find((container) => container.name === this.name)
    if (!found) throw this.gone()
    return found
  }

  /** Runs a copy through the running container's root (closed afterwards), its errors in the library's words. */
  private async withRoot<T>(path: string, copy: (root: ContainerRoot, owners: Owners, containerId: string) => Promise<T> | T): Promise<T> {
    try {
      if (!path.startsWith('/')) throw new UsageError(`${path}: the path in container ${this.label} must be absolute`)
      const container = await this.current()
      const opened = await openForCopy(this.context.client, container)
      using root = opened.root
      return await copy(root, opened.owners, container.id)
    } catch (error) {
      return rethrowInLibraryWords(error)
    }
  }

  /** The newest attempt of the container: a restart makes a new container ID. */
  private async current(): Promise<CriContainer> {
    return resolveContainer(this.context.client, `${this.pod.name}/${this.name}`, {namespace: this.pod.namespace})
  }

  private get label(): string {
    return `${this.name} of pod ${this.pod.namespace}/${this.pod.name}`
  }

  private gone(): NotFoundError {
    return new NotFoundError(`container ${this.name} of pod ${this.pod.namespace}/${this.pod.name} not found: the pod was killed`)
  }
}

/**
 * runc's answer when the command cannot be started (`exec: "x": executable file not found in $PATH`,
 * `stat /x: no such file or directory`, `permission denied`), as the exit code a shell gives it.
 */
function commandNotStarted(details: string): {exitCode: number; reason: string} | undefined {
  const match = /exec: ("(?:[^"\\]|\\.)*": .*)$/.exec(details)
  if (!match) return undefined
  const reason = match[1].replace(/: unknown$/, '')
  if (/executable file not found|no such file or directory/.test(reason)) return {exitCode: 127, reason}
  return /permission denied/.test(reason) ? {exitCode: 126, reason} : undefined
}
