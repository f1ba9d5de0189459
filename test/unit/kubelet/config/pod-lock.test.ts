import {spawn, spawnSync} from 'node:child_process'
import {mkdtempSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {DeadlineExceededError, InterruptedError} from '../../../../src/lib/errors.js'
import {startTicksOf} from '../../../../src/lib/util/process-start.js'
import {lockDirectory, lockPods, podLockPath, tryLockPod} from '../../../../src/lib/kubelet/config/pod-lock.js'

const root = () => mkdtempSync(join(tmpdir(), 'podctl-lock-'))

/** The pid of a process that has certainly exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid as number
}

// Another live process (not this one) whose pid the tests write into locks.
const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], {stdio: 'ignore'})
afterAll(() => {
  other.kill('SIGKILL')
})

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

  it('writes the lock format the supervisor lock shares: pid, start time, token', async () => {
    const dir = root()
    const locks = await lockPods(dir, ['f_ns'], {holder: 'podctl sync'})
    const recorded = JSON.parse(readFileSync(join(lockDirectory(dir), 'f_ns.lock'), 'utf8'))
    expect(recorded).toMatchObject({pid: process.pid, holder: 'podctl sync', startTicks: startTicksOf(process.pid)})
    expect(recorded.token).toMatch(/^[0-9a-f]{16}$/)
    await locks.release()
  })

  it('takes over a lock whose owner died (either format) or whose pid another process reuses', async () => {
    const dir = root()
    const first = await lockPods(dir, ['x_ns'])
    await first.release()
    const since = '2026-12-01T10:00:00.000Z'
    const ticks = startTicksOf(other.pid!)
    const stale = [`${deadPid()}\n`, JSON.stringify({pid: deadPid(), since, token: 'dead'})]
    if (ticks !== undefined) stale.push(JSON.stringify({pid: other.pid, since, startTicks: ticks - 1, token: 'reused'}))
    for (const content of stale) {
      writeFileSync(join(lockDirectory(dir), 'x_ns.lock'), content)
      const locks = await lockPods(dir, ['x_ns'], {deadline: Date.now() + 1000})
      await locks.release()
      expect(readdirSync(lockDirectory(dir))).toEqual([])
    }
  })

  it('respects a live holder in another process: waits, then gives up naming it, its lock untouched', async () => {
    const dir = root()
    await lockPods(dir, ['z_ns']).then((locks) => locks.release())
    const path = join(lockDirectory(dir), 'z_ns.lock')
    const content = JSON.stringify({pid: other.pid, since: '2026-12-01T10:00:00.000Z', startTicks: startTicksOf(other.pid!), token: 't'})
    writeFileSync(path, content)
    const error = await lockPods(dir, ['z_ns'], {deadline: Date.now() + 200}).catch((error_: unknown) => error_)
    expect((error as Error).message).toContain(`pod z_ns is locked by another podctl (pid ${other.pid})`)
    expect(await tryLockPod(dir, 'z_ns')).toBeUndefined()
    expect(readFileSync(path, 'utf8')).toBe(content)
  })

  it('tryLockPod takes a free or stale lock without waiting', async () => {
    const dir = root()
    const free = await tryLockPod(dir, 'w_ns')
    expect(free).toBeDefined()
    expect(await tryLockPod(dir, 'w_ns')).toBeUndefined()
    await free!.release()
    writeFileSync(join(lockDirectory(dir), 'w_ns.lock'), `${deadPid()}\n`)
    const stale = await tryLockPod(dir, 'w_ns')
    expect(stale).toBeDefined()
    await stale!.release()
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

describe('the lock of a pod with a 253-character name', () => {
  it('is taken and released (the name is cut with a digest to fit one file name, its temporary file beside it too)', async () => {
    const dir = root()
    const longest = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`
    const locks = await lockPods(dir, [`${longest}_${'n'.repeat(63)}`, `${longest}_${'m'.repeat(63)}`])
    const names = readdirSync(lockDirectory(dir))
    expect(names).toHaveLength(2)
    for (const name of names) expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255 - 21)
    await locks.release()
    expect(readdirSync(lockDirectory(dir))).toEqual([])
    expect(podLockPath(dir, 'web_default')).toBe(join(lockDirectory(dir), 'web_default.lock'))
  })
})
