/**
 * A private containerd of the test's own: its socket, root, state, runc state, CNI config and log in
 * one temp dir, and nothing of the shared lab's state. For specs that must see an empty runtime
 * (`rm -a`, `rmi -a`, `rmp -a` and their "No … to remove") — commands that must never run against
 * the shared lab, where other tests and helpers keep their pods and images.
 *
 * Its config is the lab's (/run/podctl-lab/containerd.toml, written by scripts/lab.sh up) with every
 * private path moved into the temp dir, so it pulls through the same registry mirrors, uses the same
 * sandbox image, snapshotter and runc options. Its CNI network has a bridge, subnet and IPAM store of
 * its own, so even a pod started on it could not collide with the lab's podctl0 / 10.234.0.0/16.
 */
import {type ChildProcess, spawn, spawnSync} from 'node:child_process'
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {CriClient} from '../../src/lib/cri/client.js'
import {until} from './until.js'

const LAB_CONFIG = '/run/podctl-lab/containerd.toml'
const CNI_BIN_DIR = '/usr/lib/cni'
/** Not the lab's podctl0 / 10.234.0.0/16; at most 15 characters (a Linux interface name). */
const BRIDGE = 'podctl-fresh0'
const SUBNET = '10.236.0.0/16'
const GATEWAY = '10.236.0.1'

export interface DaemonEnd {
  exitCode: number | null
  signal: NodeJS.Signals | null
}

export interface FreshRuntime {
  /** unix:// endpoint of the private containerd's CRI socket */
  endpoint: string
  /** Temp dir that holds everything of it; gone after stop(). */
  dir: string
  /**
   * Interrupts the daemon (SIGINT, as gexec's Interrupt; SIGKILL after 20 s), kills any shim it
   * started, unmounts what is mounted under dir and removes dir. Resolves to how the daemon ended
   * (a clean stop is exit code 0). Safe to call twice.
   */
  stop: () => Promise<DaemonEnd>
  /** Freezes the daemon (SIGSTOP: its socket accepts, nothing answers, as a hung containerd) or thaws it (SIGCONT). */
  freeze: (frozen: boolean) => void
}

/** The lab's containerd config with every path of the lab's own moved under `dir`. */
export function freshRuntimeConfig(labConfig: string, dir: string): string {
  // [section] key → new value; each must be found once, or the lab's layout changed and this would
  // silently share something with the lab.
  const overrides = new Map<string, string>([
    ['grpc address', join(dir, 'containerd.sock')],
    ['plugins."io.containerd.grpc.v1.cri".cni conf_dir', join(dir, 'net.d')],
    ['plugins."io.containerd.internal.v1.opt" path', join(dir, 'opt')],
    [' root', join(dir, 'root')],
    [' state', join(dir, 'state')],
    ['ttrpc address', join(dir, 'containerd.sock.ttrpc')],
  ])
  const seen = new Set<string>()
  let section = ''
  const lines = labConfig.split('\n').flatMap((line) => {
    const trimmed = line.trim()
    if (trimmed.startsWith('#')) return []
    const header = /^\[(.+)]$/.exec(trimmed)
    if (header) section = header[1]
    const assignment = /^(\s*)(\w+)\s*=/.exec(line)
    if (!assignment) return [line]
    const [, indent, key] = assignment
    // runc's state dir, in every runtime handler's options
    if (key === 'Root' && section.endsWith('.options')) return [`${indent}Root = ${JSON.stringify(join(dir, 'runc'))}`]
    const name = `${section} ${key}`
    const value = overrides.get(name)
    if (value === undefined) return [line]
    seen.add(name)
    return [`${indent}${key} = ${JSON.stringify(value)}`]
  })
  const missing = [...overrides.keys()].filter((name) => !seen.has(name))
  if (missing.length > 0)
    throw new Error(`${LAB_CONFIG} has no ${missing.join(', ')}: scripts/lab.sh changed; update test/support/fresh-runtime.ts`)
  const config = lines.join('\n')
  const shared = lines.filter((line) => line.includes('podctl-lab/')).map((line) => line.trim())
  if (shared.length > 0) {
    throw new Error(
      `the fresh runtime's config still names a lab path (${shared.join('; ')}): teach test/support/fresh-runtime.ts to move it`,
    )
  }

  return config
}

function cniConflist(dir: string): string {
  const bridge = {type: 'bridge', bridge: BRIDGE, isGateway: true, isDefaultGateway: false, ipMasq: false, hairpinMode: true}
  const ipam = {type: 'host-local', ranges: [[{subnet: SUBNET, gateway: GATEWAY}]], dataDir: join(dir, 'ipam')}
  return JSON.stringify({cniVersion: '1.0.0', name: 'podctl-fresh', plugins: [{...bridge, ipam}]}, undefined, 2)
}

/** Live processes whose command line names `path` (our temp dir is unique, so they are ours): shims left behind. */
function processesNaming(path: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const exe = readlinkSync(`/proc/${entry}/exe`)
      if (/containerd-shim/.test(exe) && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(path)) pids.push(Number(entry))
    } catch {
      // gone meanwhile, or not ours to read
    }
  }

  return pids
}

/** Mount points under dir, deepest first (mountinfo escapes spaces as \040). */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4]?.replaceAll(/\\(\d{3})/g, (_, octal: string) => String.fromCodePoint(Number.parseInt(octal, 8))))
    .filter((point): point is string => point !== undefined && point.startsWith(`${dir}/`))
    .sort()
    .reverse()
}

function exited(child: ChildProcess): Promise<DaemonEnd> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({exitCode: child.exitCode, signal: child.signalCode})
  return new Promise((resolve) => {
    child.once('exit', (exitCode, signal) => resolve({exitCode, signal}))
  })
}

async function waitReady(endpoint: string, daemon: ChildProcess, logFile: string): Promise<void> {
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n') : '')
  await until(
    `the fresh containerd's CRI to answer Version and report RuntimeReady and NetworkReady on ${endpoint}`,
    async () => {
      if (daemon.exitCode !== null || daemon.signalCode !== null)
        throw new Error(`the fresh containerd exited (${daemon.exitCode ?? daemon.signalCode}) at start:\n${log()}`)
      // A client per attempt: a channel that failed to connect backs off for a second or more.
      const client = new CriClient({runtimeEndpoint: endpoint, connectTimeoutMs: 500, callTimeoutMs: 2000})
      try {
        await client.runtime('version', {})
        const {status} = await client.runtime('status', {})
        const ready = new Set(status?.conditions.filter((condition) => condition.status).map((condition) => condition.type))
        return ready.has('RuntimeReady') && ready.has('NetworkReady')
      } catch {
        return false
      } finally {
        client.close()
      }
    },
    {timeoutMs: 30_000, pollMs: 50},
  )
}

/** Starts a private containerd (a few hundred ms here) and waits until its CRI answers. */
export async function startFreshRuntime(): Promise<FreshRuntime> {
  if (!existsSync(LAB_CONFIG)) throw new Error(`no ${LAB_CONFIG}: start the runtime lab first: sudo bash scripts/lab.sh up`)
  const dir = mkdtempSync(join(tmpdir(), 'podctl-fresh-runtime-'))
  const configFile = join(dir, 'containerd.toml')
  const logFile = join(dir, 'containerd.log')
  const endpoint = `unix://${join(dir, 'containerd.sock')}`
  mkdirSync(join(dir, 'net.d'))
  writeFileSync(join(dir, 'net.d', '10-podctl-fresh.conflist'), cniConflist(dir))
  writeFileSync(configFile, freshRuntimeConfig(readFileSync(LAB_CONFIG, 'utf8'), dir))
  if (!existsSync(join(CNI_BIN_DIR, 'bridge'))) throw new Error(`no CNI bridge plugin in ${CNI_BIN_DIR}: run sudo bash scripts/lab.sh up`)

  const logFd = openSync(logFile, 'a')
  const daemon = spawn('containerd', ['--config', configFile], {stdio: ['ignore', logFd, logFd]})
  closeSync(logFd)
  // If the test process dies without afterAll, the daemon must not outlive it.
  const killOnExit = () => daemon.kill('SIGKILL')
  process.once('exit', killOnExit)

  let stopped: Promise<DaemonEnd> | undefined
  const stop = () => {
    stopped ??= (async () => {
      daemon.kill('SIGINT')
      // unref'd: a daemon that exits at once leaves no 20 s timer holding the test process
      let end = await Promise.race([exited(daemon), sleep(20_000, undefined, {ref: false})])
      if (!end) {
        daemon.kill('SIGKILL')
        end = await exited(daemon)
      }

      process.removeListener('exit', killOnExit)
      for (const pid of processesNaming(dir)) process.kill(pid, 'SIGKILL')
      for (const point of mountsUnder(dir)) {
        if (spawnSync('umount', [point]).status !== 0) spawnSync('umount', ['-l', point])
      }

      const left = mountsUnder(dir)
      if (left.length > 0) throw new Error(`could not unmount under ${dir}: ${left.join(', ')}`)
      rmSync(dir, {recursive: true, force: true})
      return end
    })()
    return stopped
  }

  try {
    await waitReady(endpoint, daemon, logFile)
  } catch (error) {
    await stop()
    throw error
  }

  const freeze = (frozen: boolean) => {
    daemon.kill(frozen ? 'SIGSTOP' : 'SIGCONT')
  }

  const thawThenStop = async () => {
    freeze(false)
    return stop()
  }

  return {endpoint, dir, stop: thawThenStop, freeze}
}
