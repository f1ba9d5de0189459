import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {loadManifestInput} from '../../../src/lib/api/manifest-input.js'
import {PodctlError, UsageError} from '../../../src/lib/errors.js'
import {ManifestError} from '../../../src/lib/manifest/fields.js'

const work = mkdtempSync(join(tmpdir(), 'podctl-api-manifest-'))
const claimsRoot = join(work, 'claims')
afterAll(() => rmSync(work, {recursive: true, force: true}))

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {name: 'web'},
  spec: {containers: [{name: 'app', image: 'busybox:1.36', envFrom: [{configMapRef: {name: 'settings'}}]}]},
}
const settings = {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'settings'}, data: {MODE: 'smoke'}}
const podYaml = 'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: app, image: "busybox:1.36"}]\n'

describe('the manifest forms of the library API', () => {
  it('reads YAML text, with the namespace option for pods that name none', async () => {
    const {pods} = await loadManifestInput(podYaml, {claimsRoot, namespace: 'smoke'})
    expect(pods.map((model) => [model.name, model.namespace, model.containers.map((c) => c.name)])).toEqual([['web', 'smoke', ['app']]])
  })

  it('reads objects, a ConfigMap beside the pod feeding its envFrom', async () => {
    const {pods} = await loadManifestInput([pod, settings], {claimsRoot})
    expect(pods).toHaveLength(1)
    expect(pods[0].name).toBe('web')
  })

  it('reads {file} as run -f does', async () => {
    const path = join(work, 'pod.yaml')
    writeFileSync(path, podYaml)
    const {pods} = await loadManifestInput({file: path}, {claimsRoot})
    expect(pods.map((model) => model.name)).toEqual(['web'])
  })

  it('names the text <manifest> in its errors, with the field', async () => {
    const failure = await loadManifestInput('apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n', {claimsRoot}).catch(
      (error: unknown) => error,
    )
    expect(failure).toBeInstanceOf(ManifestError)
    expect(failure).toBeInstanceOf(UsageError)
    expect((failure as ManifestError).toJSON()).toMatchObject({code: 'InvalidManifest', exitCode: 2})
    expect((failure as ManifestError).message).toMatch(/^<manifest>: /)
  })

  it('refuses a pod whose ConfigMap is missing before anything runs, as the kubelet names it', async () => {
    const failure = await loadManifestInput(pod, {claimsRoot}).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(PodctlError)
    expect((failure as PodctlError).toJSON()).toMatchObject({code: 'CreateContainerConfigError', exitCode: 14})
    expect((failure as PodctlError).message).toContain('configmap "settings" not found')
  })

  it('refuses an empty list of objects', async () => {
    await expect(loadManifestInput([], {claimsRoot})).rejects.toThrow(
      'manifest: no object given; pass a Pod (and its ConfigMaps and Secrets)',
    )
  })

  it('reads a string of one line as a path, a workload of a real project among them', async () => {
    const path = join(work, 'by-path.yaml')
    writeFileSync(path, podYaml)
    const {pods} = await loadManifestInput(path, {claimsRoot})
    expect(pods.map((model) => model.name)).toEqual(['web'])
    const deployment = await loadManifestInput('test/fixtures/workloads/deployment.yaml', {claimsRoot, replicas: 1})
    expect(deployment.pods).toHaveLength(1)
  })

  it('names a path that does not exist', async () => {
    const failure = await loadManifestInput(join(work, 'missing.yaml'), {claimsRoot}).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(PodctlError)
    expect((failure as PodctlError).message).toContain(join(work, 'missing.yaml'))
  })

  it("reads a typed client's model objects, class instances without an index signature", async () => {
    // The shape of @kubernetes/client-node's V1Pod: a class whose fields are the JSON's.
    class TypedPod {
      apiVersion = 'v1'
      kind = 'Pod'
      metadata = {name: 'typed', labels: {app: 'typed'}}
      spec = {containers: [{name: 'app', image: 'busybox:1.36', ports: [{containerPort: 8080}]}]}
    }
    const {pods} = await loadManifestInput(new TypedPod(), {claimsRoot})
    expect(pods.map((model) => [model.name, model.containers.map((c) => c.image)])).toEqual([['typed', ['busybox:1.36']]])
  })
})
