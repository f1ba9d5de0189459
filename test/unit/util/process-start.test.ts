import {spawn, spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, realpathSync, symlinkSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it, vi} from 'vitest'

import {bootId, isAlive, pidNamespaceOf, startTicksOf, thisProcess} from '../../../src/lib/util/process-start.js'

const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], {stdio: 'ignore'})
afterAll(() => {
  child.kill('SIGKILL')
})

/** The pid of a process that has certainly exited (and been reaped). */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid as number
}

describe('process identity', () => {
  it("reads a process's start time from /proc/<pid>/stat, even with spaces and parentheses in its name", async () => {
    const ticks = startTicksOf(child.pid!)
    expect(ticks).toBeGreaterThan(0)
    // This process started before the child did.
    expect(startTicksOf(process.pid)).toBeLessThanOrEqual(ticks!)
    // The kernel names a process after the file it executed: a link with spaces and parentheses.
    const link = join(mkdtempSync(join(tmpdir(), 'podctl-process-start-')), 'a (b) c')
    symlinkSync(realpathSync('/bin/sleep'), link)
    const odd = spawn(link, ['60'], {stdio: 'ignore'})
    try {
      await vi.waitFor(() => expect(readFileSync(`/proc/${odd.pid}/stat`, 'utf8')).toContain('(a (b) c)'))
      expect(startTicksOf(odd.pid!)).toBeGreaterThanOrEqual(ticks!)
    } finally {
      odd.kill('SIGKILL')
    }
  })

  it('has no start time for a process that is gone', () => {
    expect(startTicksOf(deadPid())).toBeUndefined()
  })

  it('judges a process alive only while that very process runs', () => {
    const ticks = startTicksOf(child.pid!)!
    expect(isAlive({pid: child.pid!, startTicks: ticks})).toBe(true)
    // The same pid with another start time: the pid was given to another process since.
    expect(isAlive({pid: child.pid!, startTicks: ticks - 1})).toBe(false)
    expect(isAlive({pid: deadPid()})).toBe(false)
    expect(isAlive({pid: 0})).toBe(false)
    expect(isAlive({pid: -1})).toBe(false)
    expect(isAlive({pid: Number.NaN})).toBe(false)
    // pid 1 is not ours to signal (EPERM when not root) but runs: alive either way.
    expect(isAlive({pid: 1})).toBe(true)
    expect(isAlive(thisProcess())).toBe(true)
  })

  it('names the pid namespace and the boot as the kernel does', () => {
    expect(pidNamespaceOf('self')).toMatch(/^pid:\[\d+\]$/)
    expect(pidNamespaceOf(child.pid!)).toBe(pidNamespaceOf('self'))
    expect(pidNamespaceOf(deadPid())).toBeUndefined()
    expect(bootId()).toMatch(/^[0-9a-f-]{36}$/)
    expect(bootId()).toBe(bootId())
  })
})
