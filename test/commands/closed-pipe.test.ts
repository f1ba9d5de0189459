/** A reader that closes podctl's output early (`| head -1`): every command ends quietly with exit 0. */
import {spawn} from 'node:child_process'
import {closeSync, openSync} from 'node:fs'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {BIN, podctl} from '../support/podctl.js'
import {socketDir, startFakeRuntime, versionHandler} from '../support/fake-runtime.js'

const dir = socketDir()
const socket = join(dir, 'cri.sock')
const env = {CONTAINER_RUNTIME_ENDPOINT: undefined, CRI_CONFIG_FILE: undefined}
let stop: () => Promise<void>

type Callback = (error: null, response: unknown) => void

// Far more than a pipe's buffer (64 KiB), so podctl is still writing when the reader goes away.
const containers = Array.from({length: 4000}, (_, i) => ({
  id: `c${String(i).padStart(5, '0')}`.padEnd(64, 'f'),
  podSandboxId: 'aaa111',
  metadata: {name: `app-${i}`, attempt: 0},
  image: {image: 'localhost:5000/app:v1'},
  imageRef: 'sha256:1',
  state: 'CONTAINER_RUNNING',
  createdAt: String(1_700_000_000_000_000_000n + BigInt(i)),
  labels: {},
  annotations: {},
}))

beforeAll(async () => {
  const runtime = {
    version: versionHandler,
    listPodSandbox: (_call: unknown, cb: Callback) => cb(null, {items: []}),
    listContainers: (_call: unknown, cb: Callback) => cb(null, {containers}),
    execSync: (_call: unknown, cb: Callback) =>
      cb(null, {stdout: Buffer.from('line\n'.repeat(200_000)), stderr: Buffer.alloc(0), exitCode: 0}),
  }
  stop = await startFakeRuntime(socket, runtime as never)
})

afterAll(async () => {
  await stop()
})

/** podctl with its stdout closed by the reader after the first chunk, as `| head -1` does. */
function closedAfterFirstChunk(args: string[]) {
  return podctl(['-r', socket, ...args], {
    env,
    onSpawn(child) {
      child.stdout!.once('data', () => child.stdout!.destroy())
    },
  })
}

describe('a closed output pipe', () => {
  it('ends ps quietly with exit 0', async () => {
    const result = await closedAfterFirstChunk(['ps', '--no-trunc'])
    expect(result).toMatchObject({code: 0, stderr: ''})
  })

  it('ends exec quietly with exit 0', async () => {
    const result = await closedAfterFirstChunk(['exec', 'c00001', '--', 'cat', '/big'])
    expect(result).toMatchObject({code: 0, stderr: ''})
  })

  it('ends ps -o json quietly with exit 0', async () => {
    const result = await closedAfterFirstChunk(['ps', '-o', 'json'])
    expect(result).toMatchObject({code: 0, stderr: ''})
  })
})

describe('an output that cannot be written', () => {
  it('is one line on stderr and exit 19 (OutputFailed), not a stack trace: stdout on a full disk', async () => {
    const full = openSync('/dev/full', 'w')
    try {
      const child = spawn('node', [BIN, '-r', socket, 'ps', '--no-trunc'], {
        stdio: ['ignore', full, 'pipe'],
        env: {...process.env, CONTAINER_RUNTIME_ENDPOINT: '', CRI_CONFIG_FILE: ''},
      })
      let stderr = ''
      child.stderr!.on('data', (chunk) => (stderr += chunk))
      const code = await new Promise((resolve) => {
        child.on('close', resolve)
      })
      expect({code, stderr}).toEqual({code: 19, stderr: 'Error: writing to stdout failed: ENOSPC: no space left on device, write\n'})
    } finally {
      closeSync(full)
    }
  })
})
