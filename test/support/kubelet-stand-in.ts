import {type ChildProcess, spawn} from 'node:child_process'
import {mkdtempSync, rmSync, symlinkSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

const SCRIPT = fileURLToPath(new URL('kubelet-stand-in.mjs', import.meta.url))

export interface StandIn {
  pid: number
  /** A scratch directory for its files (config, root dir, static pods); removed by stop(). */
  dir: string
  stop(): Promise<void>
}

/**
 * Starts a process whose command name is `kubelet` (node run through a symlink of that name) with
 * these flags; resolves once it holds its connection and serves its pod-resources socket.
 */
export async function startKubeletStandIn(flags: (dir: string) => string[]): Promise<StandIn> {
  const dir = mkdtempSync(join(tmpdir(), 'podctl-kubelet-'))
  const binary = join(dir, 'kubelet')
  symlinkSync(process.execPath, binary)
  const child: ChildProcess = spawn(binary, [SCRIPT, ...flags(dir)], {stdio: ['ignore', 'pipe', 'inherit']})
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`kubelet stand-in exited (${code})`)))
    child.stdout!.once('data', () => resolve())
  })
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve())
  })
  return {
    pid: child.pid!,
    dir,
    async stop() {
      child.kill('SIGTERM')
      await exited
      rmSync(dir, {recursive: true, force: true})
    },
  }
}
