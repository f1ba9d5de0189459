/** exec -i/-t, attach and port-forward against a runtime without a usable streaming server: one line, exit 16. */
import {join} from 'node:path'

import {status} from '@grpc/grpc-js'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {failWith, socketDir, startFakeRuntime, versionHandler} from '../support/fake-runtime.js'
import {podctl} from '../support/podctl.js'

const dir = socketDir()
const socket = join(dir, 'cri.sock')
const env = {CONTAINER_RUNTIME_ENDPOINT: undefined, CRI_CONFIG_FILE: undefined}
// The endpoint right after the command name: exec's words after "--" are the command's.
const args = (command: string, ...rest: string[]) => [command, '-r', socket, ...rest]
let stop: () => Promise<void>

type Callback = (error: null, response: unknown) => void
const ID = 'c0ffee'.padEnd(64, '1')
const POD = 'feed'.padEnd(64, '2')

beforeAll(async () => {
  const container = {
    id: ID,
    podSandboxId: POD,
    metadata: {name: 'app', attempt: 0},
    state: 'CONTAINER_RUNNING',
    labels: {},
    annotations: {},
  }
  const sandbox = {
    id: POD,
    metadata: {name: 'web', namespace: 'default', uid: 'u', attempt: 0},
    state: 'SANDBOX_READY',
    labels: {},
    annotations: {},
  }
  const runtime = {
    version: versionHandler,
    listPodSandbox: (_call: unknown, cb: Callback) => cb(null, {items: [sandbox]}),
    listContainers: (_call: unknown, cb: Callback) => cb(null, {containers: [container]}),
    // A runtime without a streaming server: no URL, no Attach, a URL nobody listens on.
    exec: (_call: unknown, cb: Callback) => cb(null, {url: ''}),
    attach: failWith(status.UNIMPLEMENTED, 'unknown method Attach'),
    portForward: (_call: unknown, cb: Callback) => cb(null, {url: 'http://127.0.0.1:1/portforward/x'}),
  }
  stop = await startFakeRuntime(socket, runtime as never)
})

afterAll(async () => {
  await stop()
})

describe('a runtime without a usable streaming server', () => {
  it('exec -it: Exec answers no URL', async () => {
    const result = await podctl(args('exec', '-it', 'c0ffee', '--', 'sh'), {env})
    expect(result.code).toBe(ExitCode.STREAMING_UNAVAILABLE)
    expect(result.stderr).toBe(
      `Error: Exec at unix://${socket} answered without a streaming URL; ` +
        'the runtime needs a streaming server (containerd: stream_server_address in its CRI config)\n',
    )
  })

  it('attach: the runtime does not implement Attach', async () => {
    const result = await podctl(args('attach', 'c0ffee'), {env})
    expect(result.code).toBe(ExitCode.STREAMING_UNAVAILABLE)
    expect(result.stderr).toMatch(/^Error: the runtime at \S+ cannot stream \(Attach: runtime at \S+ does not implement Attach\); .*\n$/)
  })

  it('port-forward: nothing listens at the URL', async () => {
    const result = await podctl(args('port-forward', 'web', ':8080'), {env})
    expect(result.code).toBe(ExitCode.STREAMING_UNAVAILABLE)
    expect(result.stderr).toBe("Error: cannot reach the runtime's streaming server at http://127.0.0.1:1 (ECONNREFUSED)\n")
    expect(result.stdout).toBe('')
  })

  it('exec without -i/-t still uses ExecSync', async () => {
    const result = await podctl(args('exec', 'c0ffee', '--', 'true'), {env})
    expect(result.code).toBe(ExitCode.UNIMPLEMENTED)
    expect(result.stderr).toContain('does not implement ExecSync')
  })
})
