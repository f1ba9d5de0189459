/** "Report every failure, exit with the first one" is the base command's; kill and rmi lean on it. */
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {podctl} from '../support/podctl.js'
import {socketDir, startFakeRuntime, versionHandler} from '../support/fake-runtime.js'

const dir = socketDir()
const socket = join(dir, 'cri.sock')
const env = {CONTAINER_RUNTIME_ENDPOINT: undefined, CRI_CONFIG_FILE: undefined}
// Global flags first, as crictl users write them (in ps, -r after the command is --resolve-image-path).
const args = (...rest: string[]) => ['-r', socket, ...rest]
let stop: () => Promise<void>

type Callback = (error: null, response: unknown) => void
const image = (id: string, repoTags: string[]) => ({id: `sha256:${id.padEnd(64, '0')}`, repoTags, repoDigests: [], size: '1000'})

beforeAll(async () => {
  const runtime = {
    version: versionHandler,
    listPodSandbox: (_call: unknown, cb: Callback) => cb(null, {items: []}),
    listContainers: (_call: unknown, cb: Callback) => cb(null, {containers: []}),
  }
  // Two images whose IDs share the prefix "ab": an ambiguous reference.
  const images = {listImages: (_call: unknown, cb: Callback) => cb(null, {images: [image('ab1', ['a:1']), image('ab2', ['b:1'])]})}
  stop = await startFakeRuntime(socket, runtime as never, images as never)
})

afterAll(async () => {
  await stop()
})

describe('several failures', () => {
  it('kill: one line per pod that does not exist, exit 5', async () => {
    const result = await podctl(args('kill', 'ghost', 'spook'), {env})
    expect(result.code).toBe(ExitCode.NOT_FOUND)
    const lines = result.stderr.trimEnd().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^Error: pod "ghost" not found/)
    expect(lines[1]).toMatch(/^Error: pod "spook" not found/)
  })

  it('rmi: every failure in the order named, the exit code of the first', async () => {
    const [missingFirst, ambiguousFirst] = await Promise.all([
      podctl(args('rmi', 'nope:1', 'ab'), {env}),
      podctl(args('rmi', 'ab', 'nope:1'), {env}),
    ])
    expect(missingFirst.code).toBe(ExitCode.NOT_FOUND)
    expect(missingFirst.stderr).toMatch(/^Error: image "nope:1" not found.*\nError: image ID prefix "ab" matches 2 images/)
    expect(ambiguousFirst.code).toBe(ExitCode.AMBIGUOUS)
    expect(ambiguousFirst.stderr).toMatch(/^Error: image ID prefix "ab" matches 2 images.*\nError: image "nope:1" not found/)
  })

  it('with --json: the result carries every failure, stderr the lines', async () => {
    const result = await podctl(args('kill', 'ghost', 'spook', '--json'), {env})
    expect(result.code).toBe(ExitCode.NOT_FOUND)
    expect(JSON.parse(result.stdout)).toMatchObject({
      items: [],
      failures: [
        {pod: 'ghost', code: 'NotFound'},
        {pod: 'spook', code: 'NotFound'},
      ],
    })
  })
})
