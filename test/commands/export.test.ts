/**
 * `podctl export` against the in-process fake runtime: what users see for a pod that is not
 * there and for a form that does not exist (one line, exit code, nothing sent to the runtime),
 * a pod run by `podctl run` (from its record: the manifest as given, the ConfigMap before it,
 * the Secret only named), and one made with runp/create (rebuilt from the runtime, what is
 * missing said on stderr).
 */
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {unmountUnder} from '../../src/lib/kubelet/volumes/volumes.js'
import {FakePodRuntime} from '../support/fake-pod-runtime.js'
import {endpointEnv, podctl} from '../support/podctl.js'

const fake = new FakePodRuntime()
const dir = mkdtempSync(join(tmpdir(), 'podctl-export-'))
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text)
  return join(dir, name)
}

const POD = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  containers:
  - name: app
    image: busybox:1.36
    command: [sleep, '3600']
    env:
    - {name: MODE, value: fast}
    - {name: LEVEL, valueFrom: {configMapKeyRef: {name: settings, key: level}}}
    - {name: TOKEN, valueFrom: {secretKeyRef: {name: api, key: token}}}
`
const MANIFEST = file(
  'pod.yaml',
  `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {level: debug}
---
apiVersion: v1
kind: Secret
metadata: {name: api, namespace: shop}
stringData: {token: tok-3d9f-not-for-print}
---
${POD}`,
)
const SANDBOX_ONLY = file('sandbox.yaml', POD.replace(/ {4}env:\n(?: {4}- .*\n)+/, ''))

let env: Record<string, string | undefined>
const run = (...args: string[]) => podctl(args, {env})

beforeAll(async () => {
  await fake.start()
  env = endpointEnv(fake.client.runtimeEndpoint, {
    PODCTL_POD_DIR_ROOT: join(dir, 'pods'),
    PODCTL_POD_LOGS_ROOT: join(dir, 'logs'),
  })
})

beforeEach(() => fake.reset())

afterAll(async () => {
  // run keeps the ConfigMaps on a tmpfs in the pod directory; a failed test may leave it mounted.
  await unmountUnder(dir)
  await fake.close()
  rmSync(dir, {recursive: true, force: true})
})

describe('podctl export', () => {
  it('a pod that is not there: one line naming it and how to list pods, exit 5, nothing on stdout', async () => {
    const result = await run('export', 'nope', '-n', 'shop')
    expect(result.code).toBe(ExitCode.NOT_FOUND)
    expect(result.stdout).toBe('')
    expect(result.stderr).toBe('Error: pod "nope" not found in namespace "shop"; list pods with: podctl pods\n')
  })

  it('a form that does not exist: one line naming --as and its values, exit 2, no runtime call', async () => {
    const result = await run('export', 'web', '--as', 'daemonset')
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stdout).toBe('')
    expect(result.stderr).toBe('Error: --as takes pod, deployment or static, not "daemonset"\n')
    expect(fake.calls).toEqual([])
  })

  it('a pod podctl ran: its record as given, the ConfigMap before it, the Secret named on stderr and never printed', async () => {
    const started = await run('run', '-f', MANIFEST, '--wait', 'none', '-q')
    expect(started.code, started.stderr).toBe(0)
    const result = await run('export', 'web', '-n', 'shop')
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toBe('Note: the pod needs Secrets api (key token): never printed; give them beside the manifest\n')
    expect(result.stdout).not.toContain('tok-3d9f')
    expect(result.stdout).toBe(`apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  level: debug
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
  labels:
    app: web
spec:
  restartPolicy: Always
  dnsPolicy: ClusterFirst
  containers:
    - name: app
      image: busybox:1.36
      command:
        - sleep
        - "3600"
      env:
        - name: MODE
          value: fast
        - name: LEVEL
          valueFrom:
            configMapKeyRef:
              name: settings
              key: level
        - name: TOKEN
          valueFrom:
            secretKeyRef:
              name: api
              key: token
      terminationMessagePath: /dev/termination-log
      terminationMessagePolicy: File
`)
    const json = await run('export', 'web_shop', '-o', 'json', '--as', 'deployment')
    expect(json.code, json.stderr).toBe(0)
    const list = JSON.parse(json.stdout)
    expect(list.kind).toBe('List')
    expect(list.items.map((item: {kind: string}) => item.kind)).toEqual(['ConfigMap', 'Deployment'])
    expect(list.items[1].spec).toMatchObject({replicas: 1, selector: {matchLabels: {app: 'web'}}})

    // A static pod file holds the Pod alone, and the kubelet refuses its API references: said, one line each.
    const asStatic = await run('export', 'web', '-n', 'shop', '--as', 'static')
    expect(asStatic.code, asStatic.stderr).toBe(0)
    expect(asStatic.stdout).toMatch(/^apiVersion: v1\nkind: Pod\n/)
    expect(asStatic.stderr.split('\n').filter((line) => line.startsWith('Warning:'))).toEqual([
      'Warning: spec.containers[0].env[1].valueFrom.configMapKeyRef: a static pod cannot reference a ConfigMap (the kubelet rejects it)',
      'Warning: spec.containers[0].env[2].valueFrom.secretKeyRef: a static pod cannot reference a Secret (the kubelet rejects it)',
    ])

    // The record changed under the running container (a sync -f not applied yet): the hash says so.
    const [sandbox] = fake.sandboxes.values()
    const record = join(dir, 'pods', sandbox.metadata.uid, 'pod.json')
    const changed = JSON.parse(readFileSync(record, 'utf8'))
    changed.containers[0].command = ['sleep', '60']
    writeFileSync(record, JSON.stringify(changed))
    const drifted = await run('export', 'web', '-n', 'shop')
    expect(drifted.stderr).toMatch(
      /^Note: container app runs another spec than the record's \(io\.kubernetes\.container\.hash [0-9a-f]+\); the export is the record$/m,
    )
    expect(drifted.stdout).toContain('        - sleep\n        - "60"\n')
    expect((await run('kill', 'web', '-n', 'shop', '--force')).code).toBe(0)
  })

  it('a static pod of the kubelet (kubernetes.io/config.source: file) loses the -<node> suffix under --as static', async () => {
    const kubeletPod = file(
      'kubelet-pod.yaml',
      POD.replace('name: web,', 'name: web-node-1, annotations: {kubernetes.io/config.source: file, kubernetes.io/config.hash: 9f2c},'),
    )
    expect((await run('runp', kubeletPod, '-q')).code).toBe(0)
    const result = await run('export', 'web-node-1', '-n', 'shop', '--as', 'static', '--node-name', 'node-1')
    expect(result.code, result.stderr).toBe(0)
    expect(
      result.stdout.startsWith('apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: shop\n  labels:\n    app: web\nspec:\n'),
    ).toBe(true)
    expect(result.stdout).not.toContain('kubernetes.io/config')
  })

  it('a pod made with runp and create: rebuilt from the runtime, what it lacks said on stderr', async () => {
    expect((await run('runp', SANDBOX_ONLY, '-q')).code).toBe(0)
    const created = await run('create', '-n', 'shop', 'web', '-f', SANDBOX_ONLY, '--container', 'app', '-q')
    expect(created.code, created.stderr).toBe(0)
    const result = await run('export', 'web', '-n', 'shop', '--as', 'static')
    expect(result.code, result.stderr).toBe(0)
    const [first] = result.stderr.split('\n')
    expect(first).toMatch(/^Note: no record of this pod \(made by runp\/create, or its pod directory is gone\): rebuilt from the runtime; /)
    expect(first).toMatch(/; not on the runtime, so left out: probes, imagePullPolicy, lifecycle.postStart, /)
    const manifest = result.stdout
    expect(manifest).toContain('kind: Pod\nmetadata:\n  name: web\n  namespace: shop\n  labels:\n    app: web\n')
    expect(manifest).toContain('    - name: app\n      image: busybox:1.36\n')
    expect(manifest).not.toMatch(/uid|io\.podctl|io\.kubernetes|status:/)
  })
})
