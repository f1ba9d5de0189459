/** `podctl resize` as users run it, against the in-process fake runtime: its line, JSON, and usage errors (exit 2, no call). */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {FakePodRuntime} from '../support/fake-pod-runtime.js'
import {endpointEnv, podctl} from '../support/podctl.js'

const fake = new FakePodRuntime()
const dir = mkdtempSync(join(tmpdir(), 'podctl-resize-cmd-'))
const manifest = join(dir, 'pod.yaml')
let env: Record<string, string | undefined>

beforeAll(async () => {
  await fake.start()
  env = endpointEnv(fake.client.runtimeEndpoint, {PODCTL_POD_DIR_ROOT: join(dir, 'pods'), PODCTL_POD_LOGS_ROOT: join(dir, 'logs')})
  writeFileSync(
    manifest,
    `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers:
  - name: app
    image: busybox:1.36
    resources: {requests: {cpu: 100m}, limits: {cpu: 200m, memory: 64Mi}}
`,
  )
})

beforeEach(() => fake.reset())

afterAll(async () => {
  await fake.close()
  rmSync(dir, {recursive: true, force: true})
})

describe('podctl resize', () => {
  it('says what changed and how, on one line; -o json has the same', async () => {
    expect((await podctl(['run', '-f', manifest, '--wait', 'none', '-q'], {env})).code).toBe(0)
    const result = await podctl(['resize', 'web', '-n', 'shop', '--limits', 'cpu=500m,memory=128Mi'], {env})
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe('web_shop/app: cpu 100m/200m, memory -/64Mi -> cpu 100m/500m, memory -/128Mi: changed in place\n')
    const json = await podctl(['resize', 'web_shop', '--requests', 'cpu=200m', '-o', 'json'], {env})
    expect(JSON.parse(json.stdout)).toMatchObject({pod: 'web_shop', container: 'app', action: 'updated', after: {requests: {cpu: '200m'}}})
  })

  it('refuses a resource other than cpu and memory, or nothing to change, before any runtime call (exit 2)', async () => {
    const gpu = await podctl(['resize', 'web', '--limits', 'nvidia.com/gpu=1'], {env})
    expect(gpu.code).toBe(ExitCode.USAGE)
    expect(gpu.stderr).toBe('Error: --limits "nvidia.com/gpu=1": give cpu=QUANTITY or memory=QUANTITY\n')
    const nothing = await podctl(['resize', 'web'], {env})
    expect(nothing.code).toBe(ExitCode.USAGE)
    expect(nothing.stderr).toBe('Error: nothing to resize; give --requests or --limits\n')
    expect(fake.calls).toEqual([])
  })
})
