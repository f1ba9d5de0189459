import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {podctl} from '../support/podctl.js'
import {socketDir, startFakeRuntime, versionHandler} from '../support/fake-runtime.js'

const dir = socketDir()
const socket = join(dir, 'ok.sock')
const env = {CONTAINER_RUNTIME_ENDPOINT: undefined, CRI_CONFIG_FILE: undefined}
let stop: () => Promise<void>

beforeAll(async () => {
  stop = await startFakeRuntime(socket, {
    version: versionHandler,
    listPodSandbox: (_c: unknown, cb: (e: null, r: unknown) => void) => cb(null, {items: []}),
    listContainers: (_c: unknown, cb: (e: null, r: unknown) => void) => cb(null, {containers: []}),
  } as never)
})

afterAll(async () => stop())

describe('durations longer than a timer can wait', () => {
  it('--connect-timeout 597h connects instead of timing out at once', async () => {
    const result = await podctl(['pods', '-r', socket, '--connect-timeout', '597h', '-o', 'json'], {env})
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({items: []})
  })

  it('--timeout 99999999999999s is a usable call deadline', async () => {
    const result = await podctl(['pods', '-r', socket, '--timeout', '99999999999999s', '-o', 'json'], {env})
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
  })
})
