/** One -o parser for every command: the same formats mean the same output, listing commands included. */
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

const sandbox = (id: string, name: string, createdAt: string) => ({
  id,
  metadata: {name, namespace: 'default', uid: `uid-${id}`, attempt: 0},
  state: 'SANDBOX_READY',
  createdAt,
})
const image = (id: string, repoTags: string[]) => ({id: `sha256:${id.repeat(64).slice(0, 64)}`, repoTags, repoDigests: [], size: '1000'})

beforeAll(async () => {
  const runtime = {
    version: versionHandler,
    listPodSandbox: (_call: unknown, cb: Callback) => cb(null, {items: [sandbox('aaa111', 'web', '2'), sandbox('bbb222', 'db', '1')]}),
    listContainers: (_call: unknown, cb: Callback) =>
      cb(null, {
        containers: [
          {id: 'ccc333', podSandboxId: 'aaa111', metadata: {name: 'app', attempt: 0}, state: 'CONTAINER_RUNNING', createdAt: '3'},
        ],
      }),
  }
  const images = {
    listImages: (_call: unknown, cb: Callback) => cb(null, {images: [image('1', ['localhost:5000/app:v1']), image('2', [])]}),
  }
  stop = await startFakeRuntime(socket, runtime as never, images as never)
})

afterAll(async () => {
  await stop()
})

describe('-o jsonpath= and -o go-template= on the listing commands', () => {
  it('pods: fields of the document -o json prints ({"items": [...]})', async () => {
    const [ids, count] = await Promise.all([
      podctl(args('pods', '-o', 'jsonpath={.items[*].id}'), {env}),
      podctl(args('pods', '-o', 'go-template={{len .items}}'), {env}),
    ])
    expect(ids.stderr).toBe('')
    expect(ids.code).toBe(0)
    expect(ids.stdout).toBe('aaa111 bbb222\n')
    expect(count.stdout).toBe('2\n')
  })

  it('ps and images: the same, on {"containers": [...]} and {"images": [...]}', async () => {
    const [ps, images] = await Promise.all([
      podctl(args('ps', '-o', 'jsonpath={.containers[0].metadata.name}'), {env}),
      podctl(args('images', '-o', 'go-template={{index .images 0 "repoTags"}}'), {env}),
    ])
    expect(ps.stdout).toBe('app\n')
    expect(images.stdout).toBe('["localhost:5000/app:v1"]\n')
  })

  it('a missing key or a bad expression is a one-line usage error, before any runtime call for the latter', async () => {
    const [missing, bad] = await Promise.all([
      podctl(args('pods', '-o', 'jsonpath={.nope}'), {env}),
      podctl(['pods', '-o', 'jsonpath={.items[x]}', '-r', join(dir, 'nothing-here.sock')], {env}),
    ])
    expect(missing.code).toBe(ExitCode.USAGE)
    expect(missing.stderr).toBe('Error: jsonpath: no field "nope" at . (it has: items)\n')
    expect(bad.code).toBe(ExitCode.USAGE)
    expect(bad.stderr.split('\n')).toHaveLength(2)
  })

  it('json and name keep their meaning', async () => {
    const [json, name] = await Promise.all([podctl(args('pods', '-o', 'json'), {env}), podctl(args('pods', '-o', 'name'), {env})])
    expect(JSON.parse(json.stdout).items.map((pod: {id: string}) => pod.id)).toEqual(['aaa111', 'bbb222'])
    expect(name.stdout).toBe('web_default\ndb_default\n')
  })
})

describe('formats a command does not take', () => {
  it('are refused with the list of those it does take (exit 2)', async () => {
    const [pods, stats] = await Promise.all([
      podctl(args('pods', '-o', 'csv'), {env}),
      podctl(args('stats', '-o', 'jsonpath={.items}'), {env}),
    ])
    expect(pods.code).toBe(ExitCode.USAGE)
    expect(pods.stderr).toBe('Error: -o "csv" is not a format here; use table|wide|json|yaml|name|jsonpath=EXPR|go-template=TPL\n')
    expect(stats.code).toBe(ExitCode.USAGE)
    expect(stats.stderr).toBe('Error: -o "jsonpath={.items}" is not a format here; use table|json|yaml\n')
  })

  it('a bare -o go-template says how to give the template on commands without --template', async () => {
    const result = await podctl(args('ps', '-o', 'go-template'), {env})
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stderr).toBe("Error: -o go-template needs a template, e.g. -o go-template='{{.items}}'\n")
  })
})
