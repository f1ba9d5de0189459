import {spawnSync} from 'node:child_process'
import {mkdtempSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {DeadlineExceededError, InterruptedError} from '../../../src/lib/errors.js'
import {lockDirectory, lockPods} from '../../../src/lib/kubelet/pod-lock.js'

const root = () => mkdtempSync(join(tmpdir(), 'podctl-lock-'))

/** The pid of a process that has certainly exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid as number
}

describe('lockPods', () => {
  it('makes a second holder of the same pod wait until the first releases', async () => {
    const dir = root()
    const first = await lockPods(dir, ['web_default'])
    const waits: Array<[string, number]> = []
    let acquired = false
    const second = lockPods(dir, ['web_default'], {onWait: (name, pid) => waits.push([name, pid])}).then((locks) => {
      acquired = true
      return locks
    })
    await new Promise((resolve) => {
      setTimeout(resolve, 250)
    })
    expect(acquired).toBe(false)
    expect(waits).toEqual([['web_default', process.pid]])
    await first.release()
    await (await second).release()
    expect(acquired).toBe(true)
    expect(readdirSync(lockDirectory(dir))).toEqual([])
  })

  it('gives up at the deadline naming the holder, and holds nothing afterwards', async () => {
    const dir = root()
    const first = await lockPods(dir, ['a_ns'])
    const error = await lockPods(dir, ['b_ns', 'a_ns'], {deadline: Date.now() + 200}).catch((error_: unknown) => error_)
    expect(error).toBeInstanceOf(DeadlineExceededError)
    expect((error as Error).message).toContain(`pod a_ns is locked by another podctl (pid ${process.pid})`)
    // b_ns was taken first (sorted order) and must have been let go.
    expect(readdirSync(lockDirectory(dir))).toEqual(['a_ns.lock'])
    await first.release()
  })

  it('takes over a lock whose owner died', async () => {
    const dir = root()
    const first = await lockPods(dir, ['x_ns'])
    await first.release()
    writeFileSync(join(lockDirectory(dir), 'x_ns.lock'), `${deadPid()}\n`)
    const locks = await lockPods(dir, ['x_ns'], {deadline: Date.now() + 1000})
    await locks.release()
  })

  it('stops waiting when interrupted', async () => {
    const dir = root()
    const first = await lockPods(dir, ['y_ns'])
    const controller = new AbortController()
    const waiting = lockPods(dir, ['y_ns'], {signal: controller.signal})
    setTimeout(() => controller.abort(), 50)
    await expect(waiting).rejects.toBeInstanceOf(InterruptedError)
    await first.release()
  })
})
