/** sync --watch -f against a fake runtime: what is refused before anything runs, each in one line naming the flag. */
import {chmodSync, mkdirSync} from 'node:fs'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {endpointEnv, podctl} from '../support/podctl.js'
import {socketDir, startEmptyRuntime} from '../support/fake-runtime.js'

const dir = socketDir()
const socket = join(dir, 'cri.sock')
const env = endpointEnv(`unix://${socket}`, {PODCTL_POD_DIR_ROOT: join(dir, 'pods')})
let stop: () => Promise<void>

beforeAll(async () => {
  stop = await startEmptyRuntime(socket)
})

afterAll(async () => {
  await stop()
})

describe('sync --watch -f: refused up front', () => {
  const open = join(dir, 'open')
  mkdirSync(open)
  chmodSync(open, 0o777)

  it.each([
    [['-f', join(dir, 'nope')], `-f ${join(dir, 'nope')}: no such file or directory`],
    [['-f', '-'], '-f - (stdin) cannot be watched: give files or directories with --watch'],
    [['-f', open], `-f ${open} is writable by users other than its owner (mode 0777); fix: chmod go-w ${open}`],
    [['-f', dir, '--dry-run'], '--watch=true cannot also be provided when using --dry-run'],
  ])('%j exits 2 with one line', async (args, message) => {
    const result = await podctl(['sync', '--watch', '-q', ...args], {env})
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stdout).toBe('')
    expect(result.stderr.split('\n')[0]).toContain(message)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
  })
})
