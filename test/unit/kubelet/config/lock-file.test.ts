import {spawn, spawnSync} from 'node:child_process'
import {mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {liveHolder, newHolder, releaseLock, takeLock} from '../../../../src/lib/kubelet/config/lock-file.js'
import {startTicksOf} from '../../../../src/lib/util/process-start.js'

/** The pid of a process that has certainly exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid as number
}

// Another live process (not this one) whose pid the tests write into locks.
const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], {stdio: 'ignore'})
afterAll(() => {
  other.kill('SIGKILL')
})

function lockPath(): string {
  return join(mkdtempSync(join(tmpdir(), 'podctl-lock-file-')), 'x.lock')
}

const theirs = (fields: Record<string, unknown>) => JSON.stringify({since: '2026-12-01T10:00:00.000Z', holder: 'podctl sync', ...fields})

describe('lock file: one format, one stale rule', () => {
  it('is made whole (JSON, mode 0600) and leaves nothing else beside it', async () => {
    const path = lockPath()
    const me = newHolder('podctl sync')
    expect(await takeLock(path, me)).toEqual({held: true, holder: me})
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(me)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(readdirSync(join(path, '..'))).toEqual(['x.lock'])
    await releaseLock(path, me.token)
    expect(readdirSync(join(path, '..'))).toEqual([])
  })

  it('respects a live holder in another process, in either format, and leaves its file alone', async () => {
    const path = lockPath()
    const ticks = startTicksOf(other.pid!)
    for (const content of [theirs({pid: other.pid, startTicks: ticks, token: 'theirs'}), `${other.pid}\n`]) {
      writeFileSync(path, content)
      const claim = await takeLock(path, newHolder('podctl run'))
      expect(claim.held).toBe(false)
      expect(claim.holder.pid).toBe(other.pid)
      expect(await liveHolder(path)).toMatchObject({pid: other.pid})
      expect(readFileSync(path, 'utf8')).toBe(content)
    }
  })

  it('respects a second holder in this process (another token)', async () => {
    const path = lockPath()
    const first = newHolder('first')
    await takeLock(path, first)
    expect(await takeLock(path, newHolder('second'))).toEqual({held: false, holder: first})
    await releaseLock(path, first.token)
  })

  it('takes over a stale lock: dead pid (either format), reused pid, garbage that stays garbage', async () => {
    const path = lockPath()
    const ticks = startTicksOf(other.pid!)
    const stale = [theirs({pid: deadPid(), token: 'dead'}), `${deadPid()}\n`, 'not a lock', '']
    // The pid answers, but the process behind it started at another time than the holder did.
    if (ticks !== undefined) stale.push(theirs({pid: other.pid, startTicks: ticks - 1, token: 'reused'}))
    for (const content of stale) {
      writeFileSync(path, content)
      expect(await liveHolder(path)).toBeUndefined()
      const me = newHolder('podctl sync')
      expect(await takeLock(path, me)).toEqual({held: true, holder: me})
      expect(JSON.parse(readFileSync(path, 'utf8')).token).toBe(me.token)
      await releaseLock(path, me.token)
    }
  })

  it('release removes only a lock that still holds its token', async () => {
    const path = lockPath()
    const me = newHolder('podctl sync')
    await takeLock(path, me)
    const replaced = theirs({pid: other.pid, token: 'theirs'})
    writeFileSync(path, replaced)
    await releaseLock(path, me.token)
    expect(readFileSync(path, 'utf8')).toBe(replaced)
  })
})
