import {type ChildProcess, spawn} from 'node:child_process'
import {mkdtempSync, rmSync, symlinkSync} from 'node:fs'
import {createServer, type Server} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {afterAll, beforeAll} from 'vitest'

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

/**
 * A unix socket server in a scratch directory, standing in for the runtime socket in unit tests: the
 * kubelet check only stats it and lists its connections. Registers the hooks of the test file that calls it.
 */
export function useStandInRuntimeSocket(prefix: string): {readonly socket: string; readonly dir: string} {
  const state = {socket: '', dir: ''}
  let server: Server | undefined
  beforeAll(async () => {
    state.dir = mkdtempSync(join(tmpdir(), prefix))
    state.socket = join(state.dir, 'runtime.sock')
    const listening = createServer(() => {})
    server = listening
    await new Promise<void>((resolve) => {
      listening.listen(state.socket, resolve)
    })
  })
  afterAll(async () => {
    await new Promise((resolve) => {
      server?.close(resolve)
    })
    rmSync(state.dir, {recursive: true, force: true})
  })
  return state
}
