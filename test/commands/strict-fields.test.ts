/**
 * `podctl run -f` of a manifest with a field that no Kubernetes release has: refused before
 * anything is made, as `kubectl apply` refuses it with its default strict field validation (exit 2,
 * one line per field, by path, with a did-you-mean); a gated field of a release up to 1.36 is dropped
 * with one warning and the pod runs. Against the in-process fake runtime, which records every call.
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {FakePodRuntime} from '../support/fake-pod-runtime.js'
import {endpointEnv, podctl} from '../support/podctl.js'

const fake = new FakePodRuntime()
const dir = mkdtempSync(join(tmpdir(), 'podctl-strict-'))
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text)
  return join(dir, name)
}

const pod = (extra: {metadata?: string; container?: string; spec?: string}) => `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop${extra.metadata ?? ''}
spec:${extra.spec ?? ''}
  containers:
  - name: app
    image: busybox:1.36
    command: [sleep, '3600']${extra.container ?? ''}
`

let env: Record<string, string | undefined>
/** What would have made something on the runtime. */
const WRITES = new Set(['runPodSandbox', 'createContainer', 'startContainer', 'pullImage'])

beforeAll(async () => {
  await fake.start()
  env = endpointEnv(fake.client.runtimeEndpoint, {PODCTL_POD_DIR_ROOT: join(dir, 'pods'), PODCTL_POD_LOGS_ROOT: join(dir, 'logs')})
})

beforeEach(() => fake.reset())

afterAll(async () => {
  await fake.close()
  rmSync(dir, {recursive: true, force: true})
})

describe('podctl run: fields of no Kubernetes release', () => {
  it('imagePolicy in a container: exit 2, its path and did-you-mean, nothing created', async () => {
    const result = await podctl(['run', '-f', file('typo.yaml', pod({container: '\n    imagePolicy: Always'}))], {env})
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stdout).toBe('')
    expect(result.stderr).toBe(
      `Error: ${join(dir, 'typo.yaml')}: spec.containers[0].imagePolicy is not a known field; did you mean imagePullPolicy?\n`,
    )
    expect(fake.methods().filter((method) => WRITES.has(method))).toEqual([])
    expect(fake.sandboxes.size).toBe(0)
  })

  it('a __proto__ key in metadata: exit 2, named by its path, nothing created', async () => {
    const result = await podctl(['run', '-f', file('proto.yaml', pod({metadata: '\n  __proto__: {polluted: true}'}))], {env})
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stderr).toBe(
      `Error: ${join(dir, 'proto.yaml')}: metadata.__proto__ is not a field of ObjectMeta in Kubernetes 1.17–1.36\n`,
    )
    expect(fake.methods().filter((method) => WRITES.has(method))).toEqual([])
  })

  it('a gated field of Kubernetes 1.36 (schedulingGroup) is dropped with the warning, and the pod runs', async () => {
    const manifest = file('gated.yaml', pod({spec: '\n  schedulingGroup: {podGroupName: gang}'}))
    const result = await podctl(['run', '-f', manifest, '--wait', 'none', '-q'], {env})
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain(
      "dropped (not known to podctl's Kubernetes version, as an API server without the feature gate drops them): " +
        'spec.schedulingGroup; --strict refuses them',
    )
    expect(fake.methods()).toContain('runPodSandbox')
  })
})
