/**
 * The recorded pod back to a manifest (podctl export): the exact document for a small pod, a
 * round trip of every field the model keeps through the parser again, what never comes out
 * (uid, the node's annotations, Secret values), the notes for what the model no longer holds,
 * the --as forms, and that the output passes podctl's own loader with --strict.
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {configMapManifest, describeSecrets, inForm, objectReferences, staticPodName} from '../../../src/lib/manifest/export-forms.js'
import {podsFromDocuments} from '../../../src/lib/manifest/inputs.js'
import {loadRunInput, parseDocuments} from '../../../src/lib/manifest/load.js'
import type {PodModel} from '../../../src/lib/manifest/model.js'
import {podManifest} from '../../../src/lib/manifest/pod-manifest.js'
import {toYaml} from '../../../src/lib/output/serialize.js'

const dir = mkdtempSync(join(tmpdir(), 'podctl-pod-manifest-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

async function pods(text: string): Promise<PodModel[]> {
  const documents = await parseDocuments(text, 'in.yaml')
  return podsFromDocuments(
    documents.map((document) => ({document, label: 'in.yaml'})),
    {newUid: () => 'uid-1'},
  )
}

/** The model without what only the run knows (where it came from, its uid), to compare two parses. */
function comparable(pod: PodModel): Partial<PodModel> {
  const rest: Partial<PodModel> = {...pod}
  for (const key of ['source', 'uid', 'uidGenerated', 'objects', 'annotations'] as const) delete rest[key]
  return rest
}

const EVERYTHING = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {level: debug, app.conf: "x=1"}
---
apiVersion: v1
kind: Secret
metadata: {name: db, namespace: shop}
stringData: {password: hunter2-not-for-print, user: admin}
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
  uid: 0f0f0f0f-1111-2222-3333-444444444444
  labels: {app: web, tier: front}
  annotations: {team: blue, io.podctl.staticPod: "true", kubernetes.io/config.seen: "2026-01-01T00:00:00Z"}
spec:
  restartPolicy: OnFailure
  terminationGracePeriodSeconds: 12
  activeDeadlineSeconds: 600
  hostname: front
  subdomain: web
  hostAliases: [{ip: 10.0.0.9, hostnames: [db.local]}]
  securityContext:
    {runAsUser: 1000, fsGroup: 2000, supplementalGroups: [3000], sysctls: [{name: net.ipv4.ping_group_range, value: "0 2000"}]}
  dnsPolicy: None
  dnsConfig: {nameservers: [10.0.0.53], searches: [shop.local], options: [{name: ndots, value: "2"}]}
  initContainers:
  - name: setup
    image: busybox:1.36
    command: [sh, -c, 'echo ready > /work/flag']
    volumeMounts: [{name: work, mountPath: /work}]
  - name: proxy
    image: busybox:1.36
    restartPolicy: Always
    command: [sleep, infinity]
  containers:
  - name: app
    image: busybox:1.36
    imagePullPolicy: IfNotPresent
    command: [sh, -c]
    args: ['echo $(GREETING); sleep 3600']
    workingDir: /work
    env:
    - {name: GREETING, value: hello}
    - {name: LEVEL, valueFrom: {configMapKeyRef: {name: settings, key: level}}}
    - {name: PASSWORD, valueFrom: {secretKeyRef: {name: db, key: password}}}
    - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
    - {name: MEM, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}}
    envFrom: [{prefix: CFG_, configMapRef: {name: settings}}]
    ports: [{name: http, containerPort: 8080, hostPort: 18080}]
    resources: {limits: {cpu: 500m, memory: 128Mi}, requests: {cpu: 250m, memory: 64Mi}}
    securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}}
    lifecycle:
      postStart: {exec: {command: [touch, /work/started]}}
      preStop: {httpGet: {path: /quit, port: http}}
    livenessProbe:
      {httpGet: {path: /healthz, port: 8080, httpHeaders: [{name: X-Probe, value: "1"}]}, initialDelaySeconds: 3, periodSeconds: 7}
    readinessProbe: {exec: {command: [cat, /work/flag]}, failureThreshold: 5}
    startupProbe: {tcpSocket: {port: http}, failureThreshold: 30, periodSeconds: 1}
    volumeMounts:
    - {name: work, mountPath: /work}
    - {name: settings, mountPath: /etc/settings, readOnly: true}
    - {name: creds, mountPath: /etc/creds, readOnly: true}
    - {name: all, mountPath: /etc/all, readOnly: true}
    - {name: host, mountPath: /host, subPath: data}
    terminationMessagePolicy: FallbackToLogsOnError
  - name: side
    image: busybox:1.36
    command: [sleep, '3600']
    livenessProbe: {grpc: {port: 9090, service: health}}
    stdin: true
    tty: true
  volumes:
  - {name: work, emptyDir: {sizeLimit: 64Mi}}
  - {name: settings, configMap: {name: settings, items: [{key: app.conf, path: app.conf}], defaultMode: 0440}}
  - {name: creds, secret: {secretName: db, items: [{key: user, path: user}]}}
  - name: all
    projected:
      sources:
      - configMap: {name: settings}
      - downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}
  - {name: host, hostPath: {path: /srv/web, type: DirectoryOrCreate}}
`

describe('the recorded pod as a manifest', () => {
  it('is the exact v1 Pod for a small pod: the defaults the API server fills, no uid, no empty lists', async () => {
    const [pod] = await pods(`apiVersion: v1
kind: Pod
metadata: {name: one, namespace: lab, uid: u-1}
spec:
  containers: [{name: app, image: busybox:1.36, command: [sleep, '60']}]
`)
    expect(podManifest(pod)).toEqual({
      pod: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {name: 'one', namespace: 'lab'},
        spec: {
          restartPolicy: 'Always',
          dnsPolicy: 'ClusterFirst',
          containers: [
            {
              name: 'app',
              image: 'busybox:1.36',
              command: ['sleep', '60'],
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
            },
          ],
        },
      },
      notes: [],
    })
  })

  it('parses back to the same pod: every field the model keeps survives the round trip', async () => {
    const original = (await pods(EVERYTHING))[0]
    const {pod} = podManifest(original)
    const again = (await pods(await toYaml(pod)))[0]
    expect(comparable(again)).toEqual(comparable(original))
    expect(again.annotations).toEqual({team: 'blue'})
  })

  it("leaves out the uid and the node's annotations, and holds no Secret value", async () => {
    const {pod} = podManifest((await pods(EVERYTHING))[0])
    const text = JSON.stringify(pod)
    expect(pod.metadata).toEqual({name: 'web', namespace: 'shop', labels: {app: 'web', tier: 'front'}, annotations: {team: 'blue'}})
    expect(text).not.toContain('0f0f0f0f')
    expect(text).not.toContain('hunter2')
    expect(text).toContain('"secretKeyRef":{"name":"db","key":"password"}')
  })

  it('names the Secrets and keys the pod needs, and the ConfigMaps it reads', async () => {
    const references = objectReferences((await pods(EVERYTHING))[0])
    expect(references.configMaps).toEqual(['settings'])
    expect(describeSecrets(references.secrets)).toBe('db (keys password, user)')
    const envFrom = (await pods(EVERYTHING.replace('configMapRef: {name: settings}', 'secretRef: {name: db}')))[0]
    expect(describeSecrets(objectReferences(envFrom).secrets)).toBe('db (all keys)')
  })

  it('says what the record no longer holds: fields ignored at run, crictl-only settings', async () => {
    const [pod] = await pods(`apiVersion: v1
kind: Pod
metadata: {name: one}
spec:
  nodeSelector: {disk: ssd}
  tolerations: [{operator: Exists}]
  containers: [{name: app, image: busybox:1.36}]
`)
    const {pod: manifest, notes} = podManifest(pod)
    expect(notes).toEqual(['not recorded (they had no effect on this node, so run left them out): spec.nodeSelector, spec.tolerations'])
    expect(manifest.spec).not.toHaveProperty('nodeSelector')
  })

  it('prints a ConfigMap as a v1 ConfigMap, binary data in base64', () => {
    const document = configMapManifest({
      name: 'files',
      namespace: 'shop',
      data: {'a.conf': 'x=1'},
      binaryData: {blob: Buffer.from([0, 1, 2])},
      immutable: true,
      source: 'in.yaml',
    })
    expect(document).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {name: 'files', namespace: 'shop'},
      immutable: true,
      data: {'a.conf': 'x=1'},
      binaryData: {blob: 'AAEC'},
    })
  })

  it("passes podctl run's loader with --strict, the ConfigMap beside it and the Secret the user gives", async () => {
    const {pod} = podManifest((await pods(EVERYTHING))[0])
    const configMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {name: 'settings', namespace: 'shop'},
      data: {level: 'x', 'app.conf': 'y'},
    }
    const secret = {apiVersion: 'v1', kind: 'Secret', metadata: {name: 'db', namespace: 'shop'}, stringData: {password: 'p', user: 'u'}}
    const file = join(dir, 'exported.yaml')
    writeFileSync(file, [await toYaml(configMap), await toYaml(secret), await toYaml(pod)].join('\n---\n'))
    const loaded = await loadRunInput({filename: file, strict: true})
    expect(loaded.pods.map((loadedPod) => loadedPod.name)).toEqual(['web'])
    expect(loaded.warning).toBeUndefined()
  })
})

describe('the --as forms', () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-7d4b9c-x2x9q',
      namespace: 'shop',
      labels: {app: 'web', 'pod-template-hash': '7d4b9c'},
      annotations: {team: 'blue'},
    },
    spec: {restartPolicy: 'Always', containers: [{name: 'app', image: 'busybox:1.36'}]},
  }

  it('deployment: one replica, the selector from the labels a controller did not add, the name of the Deployment it came from', () => {
    const {document, notes} = inForm(pod, 'deployment', {owner: {kind: 'Deployment', name: 'web'}})
    expect(notes).toEqual([])
    expect(document).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {name: 'web', namespace: 'shop', labels: {app: 'web'}},
      spec: {
        replicas: 1,
        selector: {matchLabels: {app: 'web'}},
        template: {metadata: {labels: {app: 'web'}, annotations: {team: 'blue'}}, spec: pod.spec},
      },
    })
  })

  it('deployment: app: NAME when the pod has no labels; restartPolicy Never becomes Always, said', () => {
    const bare = {...pod, metadata: {name: 'job', namespace: 'shop'}, spec: {...pod.spec, restartPolicy: 'Never'}}
    const {document, notes} = inForm(bare, 'deployment')
    expect(document.metadata).toEqual({name: 'job', namespace: 'shop', labels: {app: 'job'}})
    expect(document.spec).toMatchObject({selector: {matchLabels: {app: 'job'}}, template: {metadata: {labels: {app: 'job'}}}})
    expect((document.spec as {template: {spec: {restartPolicy: string}}}).template.spec.restartPolicy).toBe('Always')
    expect(notes).toEqual(['spec.restartPolicy Never became Always: a Deployment only takes Always'])
  })

  it("static: the Pod under the name of its file, the kubelet's -<node> suffix taken off", () => {
    expect(staticPodName('web-node-1', 'node-1')).toBe('web')
    expect(staticPodName('web', 'node-1')).toBe('web')
    expect(staticPodName('node-1', 'node-1')).toBe('node-1')
    const {document} = inForm(pod, 'static', {staticName: 'web'})
    expect(document.metadata).toMatchObject({name: 'web', namespace: 'shop'})
    expect(document.kind).toBe('Pod')
  })
})
