import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {parse} from 'yaml'

import {type StandIn, startKubeletStandIn} from '../support/kubelet-stand-in.js'
import {lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'

/**
 * run --static beside a kubelet (the stand-in, configured by a KubeletConfiguration file like a real
 * one) writes the pod into its static pod directory and starts nothing in the runtime; kill --static
 * takes the file back. The stand-in runs only while this file's checks do: any `run` against the lab
 * meanwhile is refused with KubeletOwnsRuntime.
 */
const client = labClient()
const namespace = uniqueNamespace('e2e-static')
const work = mkdtempSync(join(tmpdir(), 'podctl-static-e2e-'))
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: join(work, 'pods')})
let kubelet: StandIn
let manifests: string

function run(args: string[], input?: string) {
  return podctl(args, {env, input})
}

function podFile(name: string, extra = ''): string {
  const path = join(work, `${name}.yaml`)
  writeFileSync(
    path,
    `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  containers:
  - name: app
    image: ${lab().busybox}
    command: [sleep, '3600']
${extra}`,
  )
  return path
}

beforeAll(async () => {
  kubelet = await startKubeletStandIn((dir) => {
    mkdirSync(join(dir, 'manifests'))
    writeFileSync(
      join(dir, 'config.yaml'),
      'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n' +
        `containerRuntimeEndpoint: ${lab().endpoint}\nstaticPodPath: ${dir}/manifests\n`,
    )
    return [`--config=${join(dir, 'config.yaml')}`, '--hostname-override', 'E2E-Node']
  })
  manifests = join(kubelet.dir, 'manifests')
})

afterAll(async () => {
  await kubelet?.stop()
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
  rmSync(work, {recursive: true, force: true})
})

describe('run --static and kill --static beside a kubelet', () => {
  it('without --static, run is refused (exit 17)', async () => {
    const result = await run(['run', '-f', podFile('refused')])
    expect(result.code, result.stderr).toBe(17)
    expect(result.stderr).toMatch(/--static/)
  })

  it("writes the pod into the kubelet's static pod directory and creates no sandbox", async () => {
    const result = await run(['run', '--static', '-f', podFile('web'), '-o', 'json'])
    expect(result.code, result.stderr).toBe(0)
    const file = join(manifests, `podctl-${namespace}_web.yaml`)
    expect(JSON.parse(result.stdout)).toEqual({
      static: true,
      directory: manifests,
      node: 'e2e-node',
      pods: [{pod: `web_${namespace}`, namespace, file, kubeletName: 'web-e2e-node', replaced: false}],
    })
    expect(readdirSync(manifests)).toEqual([`podctl-${namespace}_web.yaml`])
    expect(parse(readFileSync(file, 'utf8'))).toMatchObject({
      kind: 'Pod',
      metadata: {name: 'web', namespace, annotations: {'io.podctl.staticPod': 'true'}},
    })

    const pods = await run(['pods', '-n', namespace, '-o', 'json'])
    expect(pods.code, pods.stderr).toBe(0)
    expect(JSON.parse(pods.stdout).items).toEqual([])

    const human = await run(['run', '--static', '-f', podFile('web')])
    expect(human.code).toBe(8)
    expect(human.stderr).toMatch(/already exists .*--replace/)
  })

  it('kill --static removes the file (by the kubelet name too), then it is NotFound', async () => {
    const result = await run(['kill', '--static', 'web-e2e-node', '-n', namespace])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(
      new RegExp(`^pod web_${namespace}: removed .*podctl-${namespace}_web\\.yaml; the kubelet stops web-e2e-node`),
    )
    expect(readdirSync(manifests)).toEqual([])
    const again = await run(['kill', '--static', 'web', '-n', namespace])
    expect(again.code).toBe(5)
  })

  it('refuses a pod with a Secret env reference (exit 2) and writes nothing', async () => {
    const extra = '    env:\n    - name: TOKEN\n      valueFrom: {secretKeyRef: {name: creds, key: token}}\n'
    const result = await run(['run', '--static', '-f', podFile('secretive', extra)])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(
      'secretive: spec.containers[0].env[0].valueFrom.secretKeyRef: a static pod cannot reference a Secret (the kubelet rejects it)',
    )
    expect(readdirSync(manifests)).toEqual([])
    expect(existsSync(join(manifests, `.podctl-${namespace}_secretive.yaml.tmp`))).toBe(false)
  })
})
