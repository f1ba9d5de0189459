import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'
import {parse} from 'yaml'

import {AlreadyExistsError, NotFoundError, PodctlError, UsageError} from '../../../src/lib/errors.js'
import {removeStaticPods} from '../../../src/lib/local-kubelet/static-pod-files.js'
import {apiReferences} from '../../../src/lib/local-kubelet/static-pod-references.js'
import {describeStaticRun, handToKubelet, staticPodFileName} from '../../../src/lib/local-kubelet/static-pods.js'
import {startKubeletStandIn, useStandInRuntimeSocket} from '../../support/kubelet-stand-in.js'

const runtimeSocket = useStandInRuntimeSocket('podctl-static-')
let scratch: string
let socket: string
const detect = {rootDir: '/nonexistent-kubelet-root'}
const REJECTS = '(the kubelet rejects it)'
beforeAll(() => {
  ;({dir: scratch, socket} = runtimeSocket)
})

let dir: string
let input: string

beforeEach(() => {
  const base = mkdtempSync(join(scratch, 'case-'))
  dir = join(base, 'manifests')
  mkdirSync(dir)
  input = join(base, 'input')
  mkdirSync(input)
})

afterEach(() => rmSync(dirname(dir), {recursive: true, force: true}))

function dirname(path: string): string {
  return path.slice(0, path.lastIndexOf('/'))
}

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: web
  uid: "1234"
  labels: {app: web}
spec:
  containers:
  - name: app
    image: busybox:1.36
    command: [sleep, '3600']
`

function manifest(name: string, text: string): string {
  const path = join(input, name)
  writeFileSync(path, text)
  return path
}

const deps = {endpoint: async () => `unix://${socket}`, detect, warn() {}}

async function failure(promise: Promise<unknown>): Promise<PodctlError> {
  const error = await promise.then(
    () => undefined,
    (error_: unknown) => error_,
  )
  expect(error).toBeInstanceOf(PodctlError)
  return error as PodctlError
}

describe('run --static', () => {
  it('writes each pod as a kind: Pod file marked as podctl’s, through a dot-file, and names it as the kubelet will', async () => {
    const result = await handToKubelet({filename: [manifest('pod.yaml', POD)], 'static-dir': dir}, undefined, deps)
    const file = join(dir, 'podctl-default_web.yaml')
    expect(readdirSync(dir)).toEqual(['podctl-default_web.yaml'])
    expect(result).toMatchObject({static: true, directory: dir, pods: [{pod: 'web_default', namespace: 'default', file, replaced: false}]})
    expect(result.pods[0].kubeletName).toBe(`web-${result.node}`)
    const written = parse(readFileSync(file, 'utf8'))
    expect(written).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      // The uid is the kubelet's to make (from the file); the namespace is written out.
      metadata: {name: 'web', namespace: 'default', labels: {app: 'web'}, annotations: {'io.podctl.staticPod': 'true'}},
      spec: {containers: [{name: 'app', image: 'busybox:1.36', command: ['sleep', '3600']}]},
    })
    expect(describeStaticRun(result)).toMatch(
      /^pod web_default: written to .*podctl-default_web\.yaml; the kubelet runs it as web-.* within about 20 s .*mirror pod.*--name web-/,
    )
  })

  it('hands over only the pods of a project file, naming what it leaves out in one warning', async () => {
    const warnings: string[] = []
    const project = [
      'apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n',
      'apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n',
      POD,
    ].join('---\n')
    const result = await handToKubelet({filename: [manifest('project.yaml', project)], 'static-dir': dir}, undefined, {
      ...deps,
      warn: (line: string) => warnings.push(line),
    })
    expect(result.pods.map(({pod}) => pod)).toEqual(['web_default'])
    expect(warnings).toEqual(['not handed to the kubelet (they need an API server or a controller): Namespace/demo, Service/web'])
    rmSync(join(dir, 'podctl-default_web.yaml'))
  })

  it('writes a workload as its pod: the template spec under the pod name and labels', async () => {
    const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: busybox:1.36}]
`
    const result = await handToKubelet({filename: [manifest('deploy.yaml', deployment)], 'static-dir': dir}, undefined, deps)
    const [pod] = result.pods
    expect(pod.pod).toMatch(/^api-[a-z0-9]+-[a-z0-9]{5}_shop$/)
    const name = pod.pod.split('_')[0]
    expect(pod.file).toBe(join(dir, staticPodFileName('shop', name)))
    const written = parse(readFileSync(pod.file, 'utf8'))
    expect(written).toMatchObject({kind: 'Pod', metadata: {name, namespace: 'shop', labels: {app: 'api'}}})
    expect(written.metadata.labels['pod-template-hash']).toBeDefined()
    expect(written.spec).toEqual({containers: [{name: 'api', image: 'busybox:1.36'}]})
  })

  it('refuses every API object reference of every pod in one usage error, and writes nothing', async () => {
    const pods = `${POD.replace('  containers:', '  serviceAccountName: robot\n  imagePullSecrets: [{name: reg}]\n  containers:')}    env:
    - {name: PLAIN, value: x}
    - name: TOKEN
      valueFrom: {secretKeyRef: {name: creds, key: token}}
    envFrom: [{configMapRef: {name: settings}}]
  volumes:
  - {name: data, persistentVolumeClaim: {claimName: data}}
  - {name: conf, configMap: {name: settings}}
  - {name: both, projected: {sources: [{serviceAccountToken: {path: token}}, {downwardAPI: {items: []}}, {secret: {name: creds}}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  initContainers: [{name: init, image: busybox, envFrom: [{secretRef: {name: creds}}]}]
  containers: [{name: db, image: busybox}]
  volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {}}}}, {name: s, secret: {secretName: creds}}]
---
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {token: t}
`
    const error = await failure(handToKubelet({filename: [manifest('pods.yaml', pods)], 'static-dir': dir}, undefined, deps))
    expect(error).toBeInstanceOf(UsageError)
    expect(error.exitCode).toBe(2)
    expect(error.message.split('\n')).toEqual([
      '11 references a static pod cannot have (the kubelet rejects them); nothing was written:',
      '  web: spec.serviceAccountName: a static pod cannot reference a ServiceAccount (the kubelet rejects it)',
      '  web: spec.imagePullSecrets[0]: a static pod cannot reference an image pull Secret (the kubelet rejects it)',
      '  web: spec.containers[0].env[1].valueFrom.secretKeyRef: a static pod cannot reference a Secret (the kubelet rejects it)',
      '  web: spec.containers[0].envFrom[0].configMapRef: a static pod cannot reference a ConfigMap (the kubelet rejects it)',
      '  web: spec.volumes[0].persistentVolumeClaim: a static pod cannot reference a PersistentVolumeClaim (the kubelet rejects it)',
      '  web: spec.volumes[1].configMap: a static pod cannot reference a ConfigMap (the kubelet rejects it)',
      `  web: spec.volumes[2].projected.sources[0].serviceAccountToken: a static pod cannot reference a ServiceAccount token ${REJECTS}`,
      '  web: spec.volumes[2].projected.sources[2].secret: a static pod cannot reference a Secret (the kubelet rejects it)',
      '  db: spec.initContainers[0].envFrom[0].secretRef: a static pod cannot reference a Secret (the kubelet rejects it)',
      `  db: spec.volumes[0].ephemeral: a static pod cannot reference an ephemeral volume (it makes a PersistentVolumeClaim) ${REJECTS}`,
      '  db: spec.volumes[1].secret: a static pod cannot reference a Secret (the kubelet rejects it)',
    ])
    expect(readdirSync(dir)).toEqual([])
  })

  it('refuses a single reference in one line, and reads ephemeral containers too', async () => {
    const pod = POD.replace(
      "command: [sleep, '3600']",
      "command: [sleep, '3600']\n    env: [{name: A, valueFrom: {secretKeyRef: {name: s, key: k}}}]",
    )
    const error = await failure(handToKubelet({filename: [manifest('pod.yaml', pod)], 'static-dir': dir}, undefined, deps))
    expect(error.message).toBe(
      `web: spec.containers[0].env[0].valueFrom.secretKeyRef: a static pod cannot reference a Secret ${REJECTS}; nothing was written`,
    )
    expect(
      apiReferences({spec: {ephemeralContainers: [{env: [{name: 'X', valueFrom: {configMapKeyRef: {name: 'c', key: 'k'}}}]}]}}),
    ).toEqual([
      'spec.ephemeralContainers[0].env[0].valueFrom.configMapKeyRef: a static pod cannot reference a ConfigMap (the kubelet rejects it)',
    ])
    expect(
      apiReferences({
        spec: {serviceAccountName: '', containers: [{env: [{name: 'N', valueFrom: {fieldRef: {fieldPath: 'spec.nodeName'}}}]}]},
      }),
    ).toEqual([])
  })

  it('refuses a pod whose file exists unless --replace, and never overwrites a file podctl did not write', async () => {
    const path = manifest('pod.yaml', POD)
    await handToKubelet({filename: [path], 'static-dir': dir}, undefined, deps)
    const error = await failure(handToKubelet({filename: [path], 'static-dir': dir}, undefined, deps))
    expect(error).toBeInstanceOf(AlreadyExistsError)
    expect(error.exitCode).toBe(8)
    expect(error.message).toMatch(/podctl-default_web\.yaml already exists .*--replace/)

    const replaced = await handToKubelet(
      {filename: [manifest('pod2.yaml', POD.replace('3600', '60'))], 'static-dir': dir, replace: true},
      undefined,
      deps,
    )
    expect(replaced.pods[0].replaced).toBe(true)
    expect(readFileSync(join(dir, 'podctl-default_web.yaml'), 'utf8')).toMatch(/"60"/)
    expect(readdirSync(dir)).toEqual(['podctl-default_web.yaml'])

    writeFileSync(join(dir, 'podctl-default_web.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {}\n')
    const notOurs = await failure(handToKubelet({filename: [path], 'static-dir': dir, replace: true}, undefined, deps))
    expect(notOurs.message).toMatch(/was not written by podctl; it is left alone/)
  })

  it('never writes through a link planted at a temporary name, nor replaces a file that is no podctl Pod', async () => {
    const path = manifest('pod.yaml', POD)
    const victim = join(dirname(dir), 'victim.txt')
    writeFileSync(victim, 'precious\n')
    // Where the temporary file used to be written, predictably: a link there must not be followed.
    symlinkSync(victim, join(dir, '.podctl-default_web.yaml.tmp'))
    await handToKubelet({filename: [path], 'static-dir': dir}, undefined, deps)
    expect(readFileSync(victim, 'utf8')).toBe('precious\n')
    expect(readFileSync(join(dir, 'podctl-default_web.yaml'), 'utf8')).toMatch(/^# Written by podctl run --static/)
    rmSync(join(dir, '.podctl-default_web.yaml.tmp'))

    for (const [what, plant] of [
      ['a file that is no Pod', () => writeFileSync(join(dir, 'podctl-default_web.yaml'), 'log_level: debug\n')],
      ['a link to a podctl file', () => symlinkSync(join(dir, 'elsewhere.yaml'), join(dir, 'podctl-default_web.yaml'))],
      ['a link to nothing', () => symlinkSync(join(dir, 'nowhere'), join(dir, 'podctl-default_web.yaml'))],
    ] as const) {
      rmSync(join(dir, 'podctl-default_web.yaml'), {force: true})
      await handToKubelet({filename: [path], 'static-dir': dir}, undefined, deps)
      if (what === 'a link to a podctl file') renameSync(join(dir, 'podctl-default_web.yaml'), join(dir, 'elsewhere.yaml'))
      else rmSync(join(dir, 'podctl-default_web.yaml'))
      plant()
      const before = readdirSync(dir).sort()
      const refused = await failure(handToKubelet({filename: [path], 'static-dir': dir, replace: true}, undefined, deps))
      expect(refused.message, what).toBe(
        `${join(dir, 'podctl-default_web.yaml')} in the static pod directory was not written by podctl; it is left alone ` +
          '(remove it by hand to use the name)',
      )
      expect(readdirSync(dir).sort(), what).toEqual(before)
      rmSync(join(dir, 'elsewhere.yaml'), {force: true})
    }

    expect(readFileSync(victim, 'utf8')).toBe('precious\n')
  })

  it('a 253-character pod name gets a file name that fits, kept apart from names it shares a start with', () => {
    const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`
    expect(long).toHaveLength(253)
    const name = staticPodFileName('kube-system', long)
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255 - 22)
    expect(name).toMatch(/^podctl-kube-system_a{63}\.b+.*~[0-9a-f]{16}\.yaml$/)
    expect(staticPodFileName('kube-system', `${long.slice(0, -1)}e`)).not.toBe(name)
    expect(staticPodFileName('default', 'web')).toBe('podctl-default_web.yaml')
  })

  it('--dry-run returns the manifests and writes nothing', async () => {
    const result = await handToKubelet({filename: [manifest('pod.yaml', POD)], 'static-dir': dir, 'dry-run': true}, undefined, deps)
    expect(readdirSync(dir)).toEqual([])
    expect(result.dryRun).toBe(true)
    expect(describeStaticRun(result)).toMatch(
      /^# .*podctl-default_web\.yaml\n# Written by podctl run --static[^\n]*\napiVersion: v1\nkind: Pod\n/,
    )
  })

  it('refuses the flags that mean nothing when the kubelet runs the pod', async () => {
    const flags = {filename: [manifest('pod.yaml', POD)], 'static-dir': dir, rm: true, wait: 'ready', volume: ['a=/tmp']}
    const error = await failure(handToKubelet(flags, undefined, deps))
    expect(error.message).toBe(
      '--static hands the pods to the kubelet, which runs them itself, so --rm, --wait, --volume have no meaning there; ' +
        'drop them, or run without --static',
    )
    expect(readdirSync(dir)).toEqual([])
  })

  it('needs a kubelet or --static-dir, and an existing directory', async () => {
    const path = manifest('pod.yaml', POD)
    const none = await failure(handToKubelet({filename: [path]}, undefined, deps))
    expect(none).toBeInstanceOf(UsageError)
    expect(none.message).toBe(
      `no kubelet uses the runtime at unix://${socket}, so there is no static pod directory to hand the pod to; ` +
        'give one with --static-dir DIR (or run without --static)',
    )
    const missing = await failure(handToKubelet({filename: [path], 'static-dir': join(dir, 'nope')}, undefined, deps))
    expect(missing.message).toMatch(/^the static pod directory .*nope \(from --static-dir\) does not exist; create it/)
    // --static-dir needs no runtime: an endpoint that cannot be resolved only costs the kubelet's node name.
    const offline = {...deps, endpoint: () => Promise.reject(new Error('no runtime'))}
    expect((await handToKubelet({filename: [path], 'static-dir': dir}, undefined, offline)).pods).toHaveLength(1)
  })

  it('uses the static pod directory of the kubelet that uses the runtime, and its node name; says so when it has none', async () => {
    const kubelet = await startKubeletStandIn((standIn) => {
      mkdirSync(join(standIn, 'manifests'))
      writeFileSync(
        join(standIn, 'config.yaml'),
        'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n' +
          `containerRuntimeEndpoint: unix://${socket}\nstaticPodPath: ${standIn}/manifests\n`,
      )
      return [`--config=${join(standIn, 'config.yaml')}`, '--hostname-override', 'Node-A']
    })
    try {
      const result = await handToKubelet({filename: [manifest('pod.yaml', POD)]}, undefined, deps)
      expect(result).toMatchObject({directory: join(kubelet.dir, 'manifests'), node: 'node-a', pods: [{kubeletName: 'web-node-a'}]})
      expect(existsSync(join(kubelet.dir, 'manifests', 'podctl-default_web.yaml'))).toBe(true)
      const removed = await removeStaticPods(['web-node-a'], {}, deps)
      expect(removed.result.items).toEqual([
        {
          pod: 'web_default',
          namespace: 'default',
          file: join(kubelet.dir, 'manifests', 'podctl-default_web.yaml'),
          kubeletName: 'web-node-a',
        },
      ])
    } finally {
      await kubelet.stop()
    }

    const bare = await startKubeletStandIn(() => ['--container-runtime-endpoint', `unix://${socket}`])
    try {
      const error = await failure(handToKubelet({filename: [manifest('pod.yaml', POD)]}, undefined, deps))
      expect(error.message).toBe(
        `kubelet pid ${bare.pid} uses this runtime but it has no static pod directory configured; ` +
          'configure staticPodPath in its --config (or --pod-manifest-path) and restart it, or pass --static-dir DIR',
      )
    } finally {
      await bare.stop()
    }
  })
})

describe('kill --static', () => {
  const kill = (refs: string[], flags: Record<string, unknown> = {}) => removeStaticPods(refs, {'static-dir': dir, ...flags}, deps)

  it('removes the file podctl wrote, by NAME or NAME-<node>', async () => {
    const written = await handToKubelet({filename: [manifest('pod.yaml', POD)], 'static-dir': dir, namespace: 'team'}, undefined, deps)
    const {result, errors} = await kill([written.pods[0].kubeletName], {namespace: 'team'})
    expect(errors).toEqual([])
    expect(result).toEqual({
      static: true,
      directory: dir,
      node: written.node,
      items: [{pod: 'web_team', namespace: 'team', file: join(dir, 'podctl-team_web.yaml'), kubeletName: written.pods[0].kubeletName}],
      failures: [],
    })
    expect(readdirSync(dir)).toEqual([])
    await handToKubelet({filename: [manifest('pod.yaml', POD)], 'static-dir': dir}, undefined, deps)
    expect((await kill(['web'])).result.items).toHaveLength(1)
    await handToKubelet({filename: [manifest('pod.yaml', POD)], 'static-dir': dir, namespace: 'team'}, undefined, deps)
    expect((await kill(['web_team'])).result.items).toMatchObject([{pod: 'web_team', namespace: 'team'}])
    expect(readdirSync(dir)).toEqual([])
  })

  it('is NotFound for a pod with no file, unless --ignore-not-found', async () => {
    const {result, errors} = await kill(['ghost'])
    expect(errors[0]).toBeInstanceOf(NotFoundError)
    expect(errors[0].message).toMatch(/^no static pod ghost_default in .* \(from --static-dir\)/)
    expect(result.failures).toEqual([{pod: 'ghost_default', code: 'NotFound', exitCode: 5, message: errors[0].message}])
    expect(await kill(['ghost'], {'ignore-not-found': true})).toMatchObject({
      errors: [],
      result: {items: [], failures: []},
    })
  })

  it("refuses kill's flags about runtime objects", async () => {
    const error = await failure(kill(['web'], {all: true, 'grace-period': 5, force: false}))
    expect(error.message).toBe(
      'kill --static removes a static pod file (the kubelet stops the pod its own way), so it takes no --all, --grace-period',
    )
    const manifest = await failure(kill(['web'], {filename: ['web.yaml'], label: []}))
    expect(manifest.message).toMatch(/so it takes no --filename$/)
  })

  it('leaves a file podctl did not write, and says how to remove it', async () => {
    writeFileSync(join(dir, 'etcd.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: etcd, namespace: kube-system}\nspec: {}\n')
    writeFileSync(join(dir, '.hidden.tmp'), 'not: yaml: at all')
    const {errors} = await kill(['etcd'], {namespace: 'kube-system'})
    expect(errors[0]).toBeInstanceOf(UsageError)
    expect(errors[0].message).toBe(
      `${join(dir, 'etcd.yaml')} holds pod etcd_kube-system but podctl did not write it, so it is left alone; ` +
        'remove it by hand to stop the pod',
    )
    expect(existsSync(join(dir, 'etcd.yaml'))).toBe(true)
  })
})
