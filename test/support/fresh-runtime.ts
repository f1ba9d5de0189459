/**
 * A private instance of the lab's runtime (containerd or CRI-O, as PODCTL_LAB_RUNTIME picks) of the
 * test's own: its socket, storage, state, runc state, CNI network and log in one temp dir, and
 * nothing of the shared lab's state. For specs that must see an empty runtime (`rm -a`, `rmi -a`,
 * `rmp -a` and their "No … to remove") — commands that must never run against the shared lab, where
 * other tests and helpers keep their pods and images.
 *
 * `scripts/lab.sh fresh DIR` writes it (the lab's config with every private path under DIR, so it
 * pulls through the same registries with the same sandbox image and runc options, on a bridge and
 * subnet of its own) and DIR/start runs it: the script is the one place that knows each runtime's
 * config (test/e2e/lab-fresh.test.ts checks that it shares nothing writable with the lab).
 */
import {type ChildProcess, spawn, spawnSync} from 'node:child_process'
import {closeSync, copyFileSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {CriClient} from '../../src/lib/cri/client.js'
import {labRuntime} from './lab.js'
import {ROOT} from './podctl.js'
import {until} from './until.js'

export interface DaemonEnd {
  exitCode: number | null
  signal: NodeJS.Signals | null
}

export interface FreshRuntime {
  /** unix:// endpoint of the private runtime's CRI socket */
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

/**
 * `scripts/lab.sh fresh DIR` for the lab's runtime: writes the private instance's config under dir
 * and DIR/start; returns its endpoint.
 */
export function writeFreshRuntime(dir: string): string {
  const script = spawnSync('bash', [join(ROOT, 'scripts/lab.sh'), 'fresh', dir], {
    encoding: 'utf8',
    env: {...process.env, PODCTL_LAB_RUNTIME: labRuntime()},
  })
  if (script.status !== 0) throw new Error(`scripts/lab.sh fresh ${dir} failed (exit ${script.status}): ${script.stderr.trim()}`)
  return script.stdout.trim()
}

/**
 * Live processes whose command line names `path` (our temp dir is unique, so they are ours):
 * containerd's shims or CRI-O's conmons left behind.
 */
function processesNaming(path: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const exe = readlinkSync(`/proc/${entry}/exe`)
      if (/containerd-shim|conmon/.test(exe) && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(path)) pids.push(Number(entry))
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
    `the fresh runtime's CRI to answer Version and report RuntimeReady and NetworkReady on ${endpoint}`,
    async () => {
      if (daemon.exitCode !== null || daemon.signalCode !== null)
        throw new Error(`the fresh runtime exited (${daemon.exitCode ?? daemon.signalCode}) at start:\n${log()}`)
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

/** Starts a private instance of the lab's runtime (well under a second for containerd) and waits until its CRI answers. */
export async function startFreshRuntime(): Promise<FreshRuntime> {
  const dir = mkdtempSync(join(tmpdir(), 'podctl-fresh-runtime-'))
  const logFile = join(dir, 'daemon.log')
  let endpoint: string
  try {
    endpoint = writeFreshRuntime(dir)
  } catch (error) {
    rmSync(dir, {recursive: true, force: true})
    throw error
  }

  const logFd = openSync(logFile, 'a')
  const daemon = spawn(join(dir, 'start'), [], {stdio: ['ignore', logFd, logFd]})
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
      // An unclean end is the daemon's story to tell: its log outlives the dir.
      if (end.exitCode !== 0 && existsSync(logFile)) {
        copyFileSync(logFile, `${dir}.log`)
        console.warn(`the fresh runtime ended with ${end.exitCode ?? end.signal}; its log: ${dir}.log`)
      }

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
