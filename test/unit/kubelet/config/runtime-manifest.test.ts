/**
 * A pod rebuilt from the runtime (podctl export of a pod with no record): the CRI statuses and
 * containerd's verbose config as the lab's containerd 1.6 answers them, back to the exact v1 Pod;
 * what the runtime lacks is listed, Secret-fed env never comes out, the kubelet's own mounts and
 * env are left out, and the result passes podctl's loader with --strict.
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {rebuildPod, type RuntimeContainer} from '../../../../src/lib/kubelet/config/runtime-manifest.js'
import {loadRunInput} from '../../../../src/lib/manifest/load.js'
import {toYaml} from '../../../../src/lib/output/serialize.js'
import type {ContainerStatus, Mount, PodSandboxStatus} from '../../../../src/generated/runtime/v1/api.js'
import {MountPropagation, NamespaceMode, PodSandboxState} from '../../../../src/generated/runtime/v1/api.js'

const dir = mkdtempSync(join(tmpdir(), 'podctl-runtime-manifest-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const UID = '7f92b424-f2a3-4c1e-8dec-9748e30a8cf5'
const POD_DIR = `/var/lib/podctl/pods/${UID}`

function sandbox(overrides: Partial<PodSandboxStatus> = {}): PodSandboxStatus {
  return {
    id: 'sb1',
    metadata: {name: 'web', uid: UID, namespace: 'shop', attempt: 0},
    state: PodSandboxState.SANDBOX_READY,
    createdAt: '1',
    network: {ip: '10.0.0.7', additionalIps: []},
    linux: {
      namespaces: {
        options: {network: NamespaceMode.POD, pid: NamespaceMode.CONTAINER, ipc: NamespaceMode.POD, targetId: '', usernsOptions: undefined},
      },
    },
    labels: {'io.kubernetes.pod.uid': UID, 'io.kubernetes.pod.namespace': 'shop', 'io.kubernetes.pod.name': 'web', app: 'web'},
    annotations: {'io.podctl.podDirectory': POD_DIR, 'io.podctl.restartPolicy': 'Always', team: 'blue'},
    runtimeHandler: '',
    ...overrides,
  }
}

const mount = (containerPath: string, hostPath: string, extra: Partial<Mount> = {}): Mount => ({
  containerPath,
  hostPath,
  readonly: false,
  selinuxRelabel: false,
  propagation: MountPropagation.PROPAGATION_PRIVATE,
  uidMappings: [],
  gidMappings: [],
  recursiveReadOnly: false,
  image: undefined,
  imageSubPath: '',
  mountOptions: [],
  ...extra,
})

interface ContainerFixture {
  annotations?: Record<string, string>
  mounts?: Mount[]
  config?: Record<string, unknown>
}

function container(name: string, createdAt: string, {annotations = {}, mounts = [], config}: ContainerFixture): RuntimeContainer {
  const status = {
    id: `c-${name}-${createdAt}`,
    metadata: {name, attempt: 0},
    createdAt,
    image: {image: 'localhost:5000/podctl/busybox:1.36', annotations: {}, userSpecifiedImage: '', runtimeHandler: '', imageRef: ''},
    imageRef: 'localhost:5000/podctl/busybox@sha256:bb17',
    labels: {'io.kubernetes.container.name': name, 'io.kubernetes.pod.uid': UID},
    annotations: {
      'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
      'io.kubernetes.container.terminationMessagePolicy': 'File',
      'io.kubernetes.container.restartCount': '0',
      'io.kubernetes.container.hash': '4fa5013d',
      'io.kubernetes.pod.terminationGracePeriod': '30',
      ...annotations,
    },
    mounts,
  } as unknown as ContainerStatus
  return {status, config}
}

const PROBES = JSON.stringify({
  readinessProbe: {
    handler: {exec: {command: ['true']}},
    initialDelaySeconds: 0,
    periodSeconds: 5,
    timeoutSeconds: 1,
    successThreshold: 1,
    failureThreshold: 3,
  },
})

const APP = container('app', '200', {
  annotations: {
    'io.podctl.probes': PROBES,
    'io.podctl.containerType': 'app',
    'io.podctl.secretEnv': '["PASSWORD"]',
    'io.kubernetes.container.ports': '[{"containerPort":8080,"protocol":"TCP"}]',
    'io.kubernetes.container.preStopHandler': '{"exec":{"command":["sh","-c","sleep 1"]}}',
  },
  mounts: [
    mount('/scratch', `${POD_DIR}/volumes/kubernetes.io~empty-dir/scratch`),
    mount('/cfg', `${POD_DIR}/volumes/kubernetes.io~configmap/cfgvol`, {readonly: true}),
    mount('/data', '/srv/data', {propagation: MountPropagation.PROPAGATION_HOST_TO_CONTAINER}),
    mount('/etc/hosts', `${POD_DIR}/etc-hosts`),
    mount('/dev/termination-log', `${POD_DIR}/containers/app/603d336c`),
  ],
  config: {
    command: ['sh', '-c'],
    args: ['echo start; sleep 3600'],
    working_dir: '/scratch',
    envs: [
      {key: 'A', value: 'one'},
      {key: 'PASSWORD', value: 'hunter2-not-for-print'},
      {key: 'KUBERNETES_SERVICE_HOST', value: '10.96.0.1'},
    ],
    linux: {
      resources: {cpu_period: 100_000, cpu_quota: 50_000, cpu_shares: 256, memory_limit_in_bytes: 134_217_728},
      security_context: {readonly_rootfs: true, run_as_user: {value: 1000}, capabilities: {drop_capabilities: ['ALL']}},
    },
  },
})

const INIT = container('setup', '100', {
  annotations: {'io.podctl.containerType': 'init'},
  mounts: [mount('/scratch', `${POD_DIR}/volumes/kubernetes.io~empty-dir/scratch`)],
  config: {command: ['touch', '/scratch/ready']},
})

describe('a pod rebuilt from the runtime', () => {
  it('is the exact v1 Pod the statuses, annotations and verbose config hold', () => {
    const older = container('app', '150', {annotations: {'io.podctl.containerType': 'app'}, config: {command: ['old']}})
    const rebuilt = rebuildPod({sandbox: sandbox(), sandboxConfig: {hostname: 'web'}, containers: [APP, older, INIT]})
    expect(rebuilt.pod).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'web', namespace: 'shop', labels: {app: 'web'}, annotations: {team: 'blue'}},
      spec: {
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 30,
        initContainers: [
          {
            name: 'setup',
            image: 'localhost:5000/podctl/busybox:1.36',
            command: ['touch', '/scratch/ready'],
            volumeMounts: [{name: 'scratch', mountPath: '/scratch'}],
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
          },
        ],
        containers: [
          {
            name: 'app',
            image: 'localhost:5000/podctl/busybox:1.36',
            command: ['sh', '-c'],
            args: ['echo start; sleep 3600'],
            workingDir: '/scratch',
            env: [{name: 'A', value: 'one'}],
            ports: [{containerPort: 8080, protocol: 'TCP'}],
            resources: {limits: {cpu: '500m', memory: '128Mi'}, requests: {cpu: '250m'}},
            securityContext: {runAsUser: 1000, readOnlyRootFilesystem: true, capabilities: {drop: ['ALL']}},
            lifecycle: {preStop: {exec: {command: ['sh', '-c', 'sleep 1']}}},
            readinessProbe: {exec: {command: ['true']}, periodSeconds: 5, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3},
            volumeMounts: [
              {name: 'scratch', mountPath: '/scratch'},
              {name: 'cfgvol', mountPath: '/cfg', readOnly: true},
              {name: 'host-1', mountPath: '/data', mountPropagation: 'HostToContainer'},
            ],
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
          },
        ],
        volumes: [
          {name: 'scratch', emptyDir: {}},
          {name: 'cfgvol', emptyDir: {}},
          {name: 'host-1', hostPath: {path: '/srv/data'}},
        ],
      },
    })
    expect(rebuilt.secretEnv).toEqual(['app: PASSWORD'])
    expect(JSON.stringify(rebuilt)).not.toContain('hunter2')
    expect(rebuilt.notes).toEqual([
      'volume cfgvol was a configMap volume; what it held is not on the runtime: exported as an emptyDir, give it its source',
    ])
    expect(rebuilt.unrecovered).not.toContain('probes')
  })

  it('lists what the runtime never holds; probes and the restart policy too for a pod podctl did not make', () => {
    const crictl = container('box', '1', {config: {command: ['top']}})
    const rebuilt = rebuildPod({sandbox: sandbox({annotations: {}, labels: {}}), containers: [crictl]})
    expect(rebuilt.unrecovered).toEqual([
      'restartPolicy',
      'probes',
      'imagePullPolicy',
      'lifecycle.postStart',
      'resources.requests.memory',
      'env sources (configMapKeyRef, secretKeyRef, fieldRef: the values as the runtime has them)',
      'dnsPolicy and dnsConfig',
      'imagePullSecrets',
      'serviceAccountName',
    ])
    expect(rebuilt.pod.spec).toEqual({
      terminationGracePeriodSeconds: 30,
      containers: [
        {
          name: 'box',
          image: 'localhost:5000/podctl/busybox:1.36',
          command: ['top'],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
    })
  })

  it('reads host namespaces, a hostname of its own and the runtime handler from the sandbox', () => {
    const options = {network: NamespaceMode.NODE, pid: NamespaceMode.POD, ipc: NamespaceMode.NODE, targetId: '', usernsOptions: undefined}
    const rebuilt = rebuildPod({
      sandbox: sandbox({linux: {namespaces: {options}}, runtimeHandler: 'test-handler'}),
      sandboxConfig: {hostname: 'front'},
      containers: [container('box', '1', {config: {}})],
    })
    expect(rebuilt.pod.spec).toMatchObject({
      hostNetwork: true,
      hostIPC: true,
      shareProcessNamespace: true,
      hostname: 'front',
      runtimeClassName: 'test-handler',
    })
  })

  it('leaves out the service account token of a kubelet pod, and says so', () => {
    const token = mount('/var/run/secrets/kubernetes.io/serviceaccount', `${POD_DIR}/volumes/kubernetes.io~projected/kube-api-access-x7k2p`)
    const rebuilt = rebuildPod({sandbox: sandbox(), containers: [container('box', '1', {mounts: [token], config: {}})]})
    expect(rebuilt.pod.spec).not.toHaveProperty('volumes')
    expect((rebuilt.pod.spec as {containers: object[]}).containers[0]).not.toHaveProperty('volumeMounts')
    expect(rebuilt.notes).toEqual(['volume kube-api-access-x7k2p (the service account token an API server projects) is left out'])
  })

  it("passes podctl run's loader with --strict", async () => {
    const rebuilt = rebuildPod({sandbox: sandbox(), sandboxConfig: {hostname: 'web'}, containers: [APP, INIT]})
    const file = join(dir, 'rebuilt.yaml')
    writeFileSync(file, await toYaml(rebuilt.pod))
    const loaded = await loadRunInput({filename: file, strict: true})
    expect(loaded.pods.map((pod) => [pod.name, pod.namespace])).toEqual([['web', 'shop']])
    expect(loaded.pods[0].containers[0].readinessProbe?.periodSeconds).toBe(5)
  })
})
