/**
 * A command in a running container entered from the host, for what the CRI's Exec cannot ask for:
 * another user (`--user UID[:GID]|NAME[:GROUP]`), extra environment (`-e K=V`) and a working
 * directory (`-w DIR`). podctl runs, from the host's own binaries:
 *
 *   sh (joins the container's cgroups: its pid into each cgroup.procs, then exec) →
 *   [script, for a terminal] → nsenter --target <pid> --all --setuid U --setgid G --wdns DIR -- CMD
 *
 * so the command runs in every namespace of the container's main process (mount, pid, network,
 * IPC, UTS, cgroup, user), in its cgroups, with the container's environment (its main process's
 * initial one, /proc/<pid>/environ) and the overrides, as that user, looked up in the container's
 * own /etc/passwd. Streams, terminal and exit code behave as `exec`'s: without stdin the command
 * reads nothing, -i gives it this process's stdin, -t a terminal (util-linux's script, which
 * follows the window size), and the exit code is the command's (128+N when signal N ended it).
 *
 * What differs from the runtime's exec: the process is not confined by the container's seccomp or
 * AppArmor profile and, as root, keeps the host root's capabilities; supplementary groups are
 * dropped (nsenter sets none). The library (issue 36) calls execFromHost too.
 */
import {spawn} from 'node:child_process'

import type {CriClient} from '../cri/client.js'
import {HostAccessError, UsageError} from '../errors.js'
import type {Container} from '../../generated/runtime/v1/api.js'
import {cgroupProcsFiles} from './cgroups.js'
import {containerProcess, type ContainerProcess, processLabel} from './container-process.js'
import {ContainerRoot} from './container-root.js'
import {type ContainerUser, resolveContainerUser} from './container-user.js'
import {hostProgram, shellQuote} from './host-programs.js'
import {childrenOf, idInside, readCgroups, readEnviron, readIdMap, readStatus} from './proc.js'

export interface HostExecIo {
  stdin?: NodeJS.ReadableStream
  stdout?: NodeJS.WritableStream
  stderr?: NodeJS.WritableStream
}

export interface HostExecOptions {
  cmd: readonly string[]
  /** UID[:GID] or NAME[:GROUP], resolved in the container; default the container process's own user. */
  user?: string
  /** Variables set over the container's environment, in order (-e K=V). */
  env?: ReadonlyArray<readonly [string, string]>
  /** The working directory in the container; default the container process's own. */
  workdir?: string
  /** Give the command this process's stdin (or io.stdin). */
  stdin?: boolean
  /** Give it a terminal. */
  tty?: boolean
  /** Where its streams go; default this process's own (inherited, no copying). */
  io?: HostExecIo
  /** Aborting stops the command (SIGTERM to it and its children). */
  signal?: AbortSignal
}

export interface HostExecResult {
  containerId: string
  exitCode: number
  uid: number
  gid: number
}

/** What will be run: the program, its arguments and environment (pure once the container was looked at). */
export interface HostExecPlan {
  program: string
  args: string[]
  env: Record<string, string>
  user: ContainerUser
}

/** `-e K=V` words → pairs; a word without "=" is refused naming it. */
export function parseEnvFlags(words: readonly string[], flag = '-e'): Array<[string, string]> {
  return words.map((word) => {
    const eq = word.indexOf('=')
    if (eq <= 0) throw new UsageError(`${flag} ${JSON.stringify(word)}: expected NAME=VALUE`)
    return [word.slice(0, eq), word.slice(eq + 1)]
  })
}

/** The container's environment with the overrides, HOME added for a user when the environment has none (as runc does). */
export function composeEnvironment(
  base: readonly string[],
  overrides: ReadonlyArray<readonly [string, string]>,
  home: string | undefined,
): Record<string, string> {
  const env: Record<string, string> = {}
  for (const entry of base) {
    const eq = entry.indexOf('=')
    env[entry.slice(0, eq)] = entry.slice(eq + 1)
  }

  for (const [name, value] of overrides) env[name] = value
  if (home !== undefined && env.HOME === undefined) env.HOME = home
  return env
}

/** The container process's own user, as its user namespace sees it. */
function processUser(pid: number): ContainerUser {
  const status = readStatus(pid)
  if (!status) throw new HostAccessError(`process ${pid} is gone: the container stopped or restarted; try again`)
  const uid = idInside(readIdMap(pid, 'uid'), status.uid) ?? 0
  const gid = idInside(readIdMap(pid, 'gid'), status.gid) ?? 0
  return {uid, gid, home: '/'}
}

/** Looks at the container (its user database, working directory, environment, cgroups) and plans the command. */
export function planHostExec(target: ContainerProcess, options: HostExecOptions): HostExecPlan {
  if (options.cmd.length === 0) throw new UsageError('no command given; usage: podctl exec CONTAINER --user UID -- CMD [ARG...]')
  const root = ContainerRoot.open(target.root, processLabel(target))
  let user: ContainerUser
  try {
    user = options.user === undefined ? processUser(target.pid) : resolveContainerUser(options.user, root)
    if (options.workdir !== undefined) checkWorkdir(root, options.workdir)
  } finally {
    root.close()
  }

  const base = readEnviron(target.pid)
  const cgroups = readCgroups(target.pid)
  if (base === undefined || cgroups === undefined) {
    throw new HostAccessError(`process ${target.pid} of container ${target.name} is gone: it stopped or restarted; try again`)
  }

  const env = composeEnvironment(base, options.env ?? [], options.user === undefined ? undefined : user.home)
  const nsenter = [
    hostProgram('nsenter', 'it enters the container for --user, -e and -w'),
    `--target=${target.pid}`,
    '--all',
    `--setuid=${user.uid}`,
    `--setgid=${user.gid}`,
    options.workdir === undefined ? '--wd' : `--wdns=${options.workdir}`,
    '--',
    ...options.cmd,
  ]
  const files = cgroupProcsFiles(cgroups)
  return wrap(files, nsenter, env, user, options.tty === true)
}

function checkWorkdir(root: ContainerRoot, workdir: string): void {
  if (!workdir.startsWith('/')) throw new UsageError(`-w ${workdir}: the working directory must be an absolute path in the container`)
  let kind
  try {
    const entry = root.lookup(workdir)
    kind = entry.kind
    root.release(entry)
  } catch (error) {
    if ((error as {code?: string}).code !== 'NotFound') throw error
  }

  if (kind !== 'directory') throw new UsageError(`-w ${workdir}: no such directory in container ${root.label}`)
}

/**
 * The host shell that joins the cgroups, then runs nsenter: `sh -c SCRIPT podctl-enter N FILE… SHELL-MODE [VALUE] CMD…`.
 * With a terminal the whole line goes through `script`, which runs it with $SHELL: SHELL is set to
 * /bin/sh for it, and put back as the container had it before nsenter runs.
 */
const JOIN_SCRIPT = [
  'n=$1; shift',
  'while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done',
  'case $1 in unset) unset SHELL; shift ;; set) SHELL=$2; export SHELL; shift 2 ;; *) shift ;; esac',
  'exec "$@"',
].join('\n')

function wrap(files: readonly string[], nsenter: string[], env: Record<string, string>, user: ContainerUser, tty: boolean): HostExecPlan {
  const sh = hostProgram('sh', 'it joins the container cgroups')
  const shellMode = tty ? (env.SHELL === undefined ? ['unset'] : ['set', env.SHELL]) : ['keep']
  const args = ['-c', JOIN_SCRIPT, 'podctl-enter', String(files.length), ...files, ...shellMode, ...nsenter]
  if (!tty) return {program: sh, args, env, user}
  const line = [sh, ...args].map((word) => shellQuote(word)).join(' ')
  const script = hostProgram('script', 'it gives the command a terminal (-t)')
  return {program: script, args: ['--quiet', '--return', '--command', line, '/dev/null'], env: {...env, SHELL: sh}, user}
}

/** SIGTERM to a process and everything below it (nsenter does not pass signals on to the command it forked). */
function terminateTree(pid: number): void {
  for (const child of childrenOf(pid)) terminateTree(child)
  try {
    process.kill(pid, 'SIGTERM')
  } catch {
    // Gone already.
  }
}

const SIGNAL_NUMBERS: Record<string, number> = {SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGPIPE: 13, SIGTERM: 15}

/** Runs a plan with the streams asked for; resolves with the command's exit code. */
export function runHostExec(plan: HostExecPlan, options: Pick<HostExecOptions, 'io' | 'signal' | 'stdin'>): Promise<number> {
  const {io = {}, signal} = options
  const stdin = options.stdin ? (io.stdin ? 'pipe' : 'inherit') : 'ignore'
  const child = spawn(plan.program, plan.args, {
    env: plan.env,
    stdio: [stdin, io.stdout ? 'pipe' : 'inherit', io.stderr ? 'pipe' : 'inherit'],
  })
  if (options.stdin && io.stdin && child.stdin) io.stdin.pipe(child.stdin)
  if (io.stdout && child.stdout) child.stdout.pipe(io.stdout, {end: false})
  if (io.stderr && child.stderr) child.stderr.pipe(io.stderr, {end: false})
  const onAbort = () => child.pid !== undefined && terminateTree(child.pid)
  signal?.addEventListener('abort', onAbort, {once: true})
  return new Promise((resolve, reject) => {
    child.on('error', (error) => reject(new HostAccessError(`cannot run ${plan.program}: ${error.message}`)))
    child.on('close', (code, signalName) => {
      signal?.removeEventListener('abort', onAbort)
      if (options.stdin && io.stdin && child.stdin) io.stdin.unpipe(child.stdin)
      resolve(code ?? 128 + (SIGNAL_NUMBERS[signalName ?? ''] ?? 1))
    })
  })
}

/**
 * `exec --user/-e/-w`: the command in the running container, entered from the host. Refused for a
 * container that is not running (exit 18) and for a user, group or directory the container lacks (exit 2).
 */
export async function execFromHost(client: CriClient, container: Container, options: HostExecOptions): Promise<HostExecResult> {
  const target = await containerProcess(client, container, options.signal)
  const plan = planHostExec(target, options)
  const exitCode = await runHostExec(plan, options)
  return {containerId: container.id, exitCode, uid: plan.user.uid, gid: plan.user.gid}
}
