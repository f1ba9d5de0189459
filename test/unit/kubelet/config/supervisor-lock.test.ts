import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {parseLock} from '../../../../src/lib/kubelet/config/lock-file.js'
import {isAlive, startTicksOf} from '../../../../src/lib/util/process-start.js'
import {supervisorLockPath, SupervisorLocks, supervisorOf} from '../../../../src/lib/kubelet/config/supervisor-lock.js'

const UID = '1f0c6a2e-uid'

/** A pod dir root with the pod's directory, as `run` leaves it. */
function root(): string {
  const dir = mkdtempSync(join(tmpdir(), 'podctl-supervisor-lock-'))
  mkdirSync(join(dir, UID))
  return dir
}

/** The pid of a process that has certainly exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid as number
}

// Another live process (not this one) that holds locks in some tests.
const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], {stdio: 'ignore'})
afterAll(() => {
  other.kill('SIGKILL')
})

function writeLock(dir: string, content: Record<string, unknown> | string): void {
  writeFileSync(supervisorLockPath(dir, UID), typeof content === 'string' ? content : JSON.stringify(content), {mode: 0o600})
}

describe('SupervisorLocks', () => {
  it('takes the lock: a file made whole in the pod directory, mode 0600, holding pid, since, holder', async () => {
    const dir = root()
    const locks = new SupervisorLocks(dir, 'podctl sync --watch')
    const claim = await locks.take(UID)
    expect(claim.held).toBe(true)
    const path = join(dir, UID, 'supervisor.lock')
    expect(statSync(path).mode & 0o777).toBe(0o600)
    const recorded = JSON.parse(readFileSync(path, 'utf8'))
    expect(recorded).toMatchObject({pid: process.pid, holder: 'podctl sync --watch'})
    expect(new Date(recorded.since).toISOString()).toBe(recorded.since)
    expect(claim.holder).toEqual(recorded)
    // Taking it again on a later turn keeps it.
    expect((await locks.take(UID)).held).toBe(true)
    expect(locks.holding()).toEqual([UID])
    await locks.release()
    expect(existsSync(path)).toBe(false)
  })

  it('says who holds it when another live process does, and takes it once that one is gone', async () => {
    const dir = root()
    const since = '2026-11-30T10:00:00.000Z'
    writeLock(dir, {pid: other.pid, since, holder: 'podctl run --supervise', token: 'theirs'})
    const locks = new SupervisorLocks(dir, 'podctl sync --watch')
    const claim = await locks.take(UID)
    expect(claim).toEqual({held: false, holder: {pid: other.pid, since, holder: 'podctl run --supervise', token: 'theirs'}})
    expect(locks.holding()).toEqual([])
    expect(await supervisorOf(dir, UID)).toMatchObject({pid: other.pid, holder: 'podctl run --supervise'})
    // Their lock is not ours to release.
    await locks.release(UID)
    expect(JSON.parse(readFileSync(supervisorLockPath(dir, UID), 'utf8')).token).toBe('theirs')
    // Its holder died (SIGKILL): the next turn takes the lock over.
    writeLock(dir, {pid: deadPid(), since, holder: 'podctl sync --watch', token: 'gone'})
    expect(await supervisorOf(dir, UID)).toBeUndefined()
    expect((await locks.take(UID)).held).toBe(true)
    await locks.release()
  })

  it('two holders in one process: the second is told the first holds it', async () => {
    const dir = root()
    const first = new SupervisorLocks(dir, 'first')
    const second = new SupervisorLocks(dir, 'second')
    expect((await first.take(UID)).held).toBe(true)
    const claim = await second.take(UID)
    expect(claim.held).toBe(false)
    expect(claim.holder).toMatchObject({pid: process.pid, holder: 'first'})
    await first.release()
    expect((await second.take(UID)).held).toBe(true)
    await second.release()
  })

  it('takes over a stale lock: a dead pid, or garbage that stays garbage', async () => {
    const dir = root()
    const locks = new SupervisorLocks(dir, 'podctl sync --watch')
    writeLock(dir, {pid: deadPid(), since: '2026-11-30T10:00:00.000Z', holder: 'podctl sync --watch', token: 'dead'})
    expect((await locks.take(UID)).held).toBe(true)
    await locks.release()
    writeLock(dir, 'not json')
    expect((await locks.take(UID)).held).toBe(true)
    expect(JSON.parse(readFileSync(supervisorLockPath(dir, UID), 'utf8')).pid).toBe(process.pid)
    await locks.release()
    // An empty file (a holder between O_EXCL and its write) that stays empty is garbage too.
    writeLock(dir, '')
    expect((await locks.take(UID)).held).toBe(true)
    await locks.release()
  })

  it('takes over a lock whose pid was reused by a process that started later', async () => {
    const ticks = startTicksOf(other.pid!)
    if (ticks === undefined) return // no /proc here: the pid alone decides
    expect(isAlive({pid: other.pid!, startTicks: ticks})).toBe(true)
    expect(isAlive({pid: other.pid!, startTicks: ticks - 1})).toBe(false)
    const dir = root()
    writeLock(dir, {pid: other.pid, since: '2026-11-30T10:00:00.000Z', holder: 'x', startTicks: ticks - 1, token: 'reused'})
    const locks = new SupervisorLocks(dir, 'podctl sync --watch')
    expect((await locks.take(UID)).held).toBe(true)
    await locks.release()
  })

  it('notices that its lock was taken from it, and release leaves the new holder alone', async () => {
    const dir = root()
    const locks = new SupervisorLocks(dir, 'podctl sync --watch')
    expect((await locks.take(UID)).held).toBe(true)
    writeLock(dir, {pid: other.pid, since: '2026-11-30T10:00:00.000Z', holder: 'podctl sync --watch', token: 'theirs'})
    await locks.release()
    expect(JSON.parse(readFileSync(supervisorLockPath(dir, UID), 'utf8')).token).toBe('theirs')
    expect((await locks.take(UID)).held).toBe(false)
    expect(locks.holding()).toEqual([])
  })

  it('release is idempotent', async () => {
    const dir = root()
    const locks = new SupervisorLocks(dir, 'podctl sync --watch')
    await locks.take(UID)
    await locks.release()
    await locks.release()
    await locks.release(UID)
    expect(existsSync(supervisorLockPath(dir, UID))).toBe(false)
  })

  it('releases its locks when the process exits without calling release (its exit listener), and only while it holds one', async () => {
    const dir = root()
    const before = new Set(process.listeners('exit'))
    const locks = new SupervisorLocks(dir, 'podctl sync --watch')
    await locks.take(UID)
    const added = process.listeners('exit').filter((listener) => !before.has(listener))
    expect(added).toHaveLength(1)
    ;(added[0] as () => void)()
    expect(existsSync(supervisorLockPath(dir, UID))).toBe(false)
    await locks.release()
    expect(process.listeners('exit').filter((listener) => !before.has(listener))).toEqual([])
  })

  it('parses a lock that names a pid, a time and a token, or a bare pid (the older pass-lock format)', () => {
    expect(parseLock('{"pid":12,"since":"2026-11-30T10:00:00.000Z","token":"t"}')).toEqual({
      pid: 12,
      since: '2026-11-30T10:00:00.000Z',
      holder: 'another podctl',
      startTicks: undefined,
      token: 't',
    })
    expect(parseLock('{"pid":0,"since":"x","token":"t"}')).toBeUndefined()
    expect(parseLock('12\n')).toEqual({pid: 12, since: '', holder: 'another podctl', token: ''})
    expect(parseLock('0\n')).toBeUndefined()
    expect(parseLock('null')).toBeUndefined()
  })
})
