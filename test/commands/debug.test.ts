import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {join} from 'node:path'

import {socketDir, startFakeRuntime, versionHandler} from '../support/fake-runtime.js'
import {endpointEnv, podctl} from '../support/podctl.js'

/**
 * `podctl debug`'s command line against a fake runtime with one running pod (web, container app):
 * bad flags exit 2 before the runtime is asked to make anything, an unknown pod or target exits 5,
 * and the fake sees no CreateContainer or RunPodSandbox.
 */
const dir = socketDir()
const socket = join(dir, 'runtime.sock')
const env = endpointEnv(`unix://${socket}`, {PODCTL_DEBUG_IMAGE: undefined})
const made: string[] = []
let stop: () => Promise<void>

const app = {
  id: 'c0ffee0000001',
  podSandboxId: 'sandbox1',
  metadata: {name: 'app', attempt: 0},
  state: 'CONTAINER_RUNNING',
  labels: {'io.kubernetes.container.name': 'app', 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'default'},
  annotations: {},
}

beforeAll(async () => {
  stop = await startFakeRuntime(socket, {
    version: versionHandler,
    listPodSandbox: (_call, callback) =>
      callback(null, {
        items: [
          {id: 'sandbox1', metadata: {name: 'web', namespace: 'default', uid: 'u1', attempt: 0}, state: 'SANDBOX_READY', createdAt: 1},
        ],
      }),
    listContainers: (_call, callback) => callback(null, {containers: [app]}),
    createContainer(_call, callback) {
      made.push('createContainer')
      callback(new Error('not in this test'))
    },
    runPodSandbox(_call, callback) {
      made.push('runPodSandbox')
      callback(new Error('not in this test'))
    },
  })
})

afterAll(async () => {
  await stop()
  expect(made).toEqual([])
})

const image = ['--image', 'busybox:1.36']

describe('debug: the command line', () => {
  it.each([
    [['debug'], 'Error: no pod given; usage: podctl debug POD --image IMAGE'],
    [
      ['debug', 'web', '--', 'ps'],
      'Error: --image is required (no $PODCTL_DEBUG_IMAGE set): the image of the debug container, e.g. --image busybox:1.36\n',
    ],
    [['debug', 'web', ...image, '-t', '--', 'sh'], 'Error: -t/--tty needs -i/--interactive (as kubectl debug -it)\n'],
    [
      ['debug', 'web', ...image, '--container', 'Bad_Name'],
      'Error: --container "Bad_Name": not a container name (lower-case letters, digits and "-", at most 63)\n',
    ],
    [['debug', 'node', ...image, '--target', 'app'], 'Error: --target applies to debug POD, not to debug node\n'],
    [['debug', 'node', ...image, '--keep'], 'Error: --keep applies to debug POD, not to debug node\n'],
  ])('%j exits 2 with one line naming the flag', async (args, message) => {
    const result = await podctl(args, {env})
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr.startsWith(message)).toBe(true)
  })

  it('refuses an unknown flag (exit 2)', async () => {
    const result = await podctl(['debug', 'web', ...image, '--bogus'], {env})
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/--bogus/)
  })

  it('takes the image from $PODCTL_DEBUG_IMAGE, and says an unknown pod is not found (exit 5)', async () => {
    const result = await podctl(['debug', 'nothere', '--', 'ps'], {env: {...env, PODCTL_DEBUG_IMAGE: 'busybox:1.36'}})
    expect(result.code).toBe(5)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(/^Error: .*nothere/)
  })

  it('says a target the pod lacks is not found, naming its containers (exit 5)', async () => {
    const result = await podctl(['debug', 'web', ...image, '--target', 'ghost', '--', 'ps'], {env})
    expect(result).toMatchObject({
      code: 5,
      stdout: '',
      stderr: 'Error: --target ghost: pod web_default has no container "ghost"; it has app\n',
    })
  })
})
