import {describe, expect, it} from 'vitest'

import {
  DEFAULT_MASKED_PATHS,
  DEFAULT_READONLY_PATHS,
  generateContainerConfig,
} from '../../../../src/lib/kubelet/kuberuntime/container-config.js'
import {volumeHostPaths} from '../../../../src/lib/kubelet/volumes/pod-dirs.js'
import {containerHash} from '../../../../src/lib/kube/labels.js'
import {FULL, GiB, pod, POD_DIRS, UID} from '../../../support/pod-manifest.js'

describe('generateContainerConfig', () => {
  it('builds the kubelet ContainerConfig: labels, annotations, log path, mounts, resources, security', async () => {
    const model = await pod()
    const app = model.containers[0]
    const config = generateContainerConfig(model, app, {
      type: 'app',
      attempt: 3,
      imageRef: 'sha256:abc',
      imageUser: {uid: 0},
      volumePaths: volumeHostPaths(model, POD_DIRS),
      etcHostsPath: `${POD_DIRS}/${UID}/etc-hosts`,
      terminationMessageFile: `${POD_DIRS}/${UID}/containers/app/deadbeef`,
      nodeMemoryBytes: 8 * GiB,
    })
    expect(config).toEqual({
      metadata: {name: 'app', attempt: 3},
      image: {image: 'sha256:abc', userSpecifiedImage: 'localhost:5000/app:1'},
      command: ['/bin/server'],
      args: ['--port', '8080', '--greeting', 'hello on 8080', '$(PORT)', '$(MISSING)'],
      workingDir: '/srv',
      labels: {
        'io.kubernetes.pod.name': 'web',
        'io.kubernetes.pod.namespace': 'shop',
        'io.kubernetes.pod.uid': UID,
        'io.kubernetes.container.name': 'app',
      },
      annotations: {
        'io.kubernetes.container.hash': containerHash(app),
        'io.kubernetes.container.restartCount': '3',
        'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
        'io.kubernetes.container.terminationMessagePolicy': 'File',
        'io.kubernetes.pod.terminationGracePeriod': '15',
        'io.kubernetes.container.preStopHandler': '{"exec":{"command":["sh","-c","sleep 1"]}}',
        'io.kubernetes.container.ports':
          '[{"name":"http","hostPort":18080,"containerPort":8080,"protocol":"TCP"},{"containerPort":9090,"protocol":"UDP"}]',
        'io.podctl.containerType': 'app',
      },
      devices: [],
      CDIDevices: [],
      mounts: [
        {
          containerPath: '/cache',
          hostPath: `${POD_DIRS}/${UID}/volumes/kubernetes.io~empty-dir/cache`,
          readonly: false,
          selinuxRelabel: false,
          propagation: 'PROPAGATION_PRIVATE',
        },
        {containerPath: '/etc/web', hostPath: '/etc/web', readonly: true, selinuxRelabel: false, propagation: 'PROPAGATION_PRIVATE'},
        {
          containerPath: '/etc/hosts',
          hostPath: `${POD_DIRS}/${UID}/etc-hosts`,
          readonly: false,
          selinuxRelabel: false,
          propagation: 'PROPAGATION_PRIVATE',
        },
        {
          containerPath: '/dev/termination-log',
          hostPath: `${POD_DIRS}/${UID}/containers/app/deadbeef`,
          readonly: false,
          selinuxRelabel: false,
          propagation: 'PROPAGATION_PRIVATE',
        },
      ],
      logPath: 'app/3.log',
      stdin: false,
      stdinOnce: false,
      tty: false,
      linux: {
        resources: {
          cpuPeriod: '100000',
          cpuQuota: '50000',
          cpuShares: '512',
          memoryLimitInBytes: '134217728',
          // Burstable: 1000 - 1000 × 128Mi / 8Gi = 985 (integer division).
          oomScoreAdj: '985',
        },
        securityContext: {
          capabilities: {addCapabilities: ['NET_BIND_SERVICE'], dropCapabilities: ['ALL']},
          privileged: false,
          namespaceOptions: {network: 'POD', pid: 'CONTAINER', ipc: 'POD'},
          runAsUser: {value: '1000'},
          runAsGroup: {value: '3000'},
          runAsUsername: '',
          readonlyRootfs: true,
          noNewPrivs: true,
          maskedPaths: DEFAULT_MASKED_PATHS,
          readonlyPaths: DEFAULT_READONLY_PATHS,
          seccomp: {profileType: 'Unconfined'},
        },
      },
      envs: [
        {key: 'PORT', value: Buffer.from('8080')},
        {key: 'GREETING', value: Buffer.from('hello on 8080')},
      ],
    })
  })

  it('takes the user from the image when the container sets none, and leaves optional annotations out', async () => {
    const model = await pod()
    const sidecar = model.containers[1]
    const config = generateContainerConfig(model, sidecar, {
      type: 'app',
      attempt: 0,
      imageRef: 'sha256:def',
      imageUser: {username: 'nobody'},
      volumePaths: new Map(),
      nodeMemoryBytes: 8 * GiB,
    })
    expect(config.linux?.securityContext?.runAsUser).toBeUndefined()
    expect(config.linux?.securityContext?.runAsUsername).toBe('nobody')
    expect(config.linux?.securityContext?.privileged).toBe(true)
    expect(config.annotations).not.toHaveProperty('io.kubernetes.container.preStopHandler')
    expect(config.annotations).not.toHaveProperty('io.kubernetes.container.ports')
    expect(config.mounts).toEqual([])
    expect(config.logPath).toBe('sidecar/0.log')
    // No limits → shares 2, and Burstable (the pod has limits elsewhere) with no memory request → 999.
    expect(config.linux?.resources).toEqual({
      cpuPeriod: '100000',
      cpuQuota: '0',
      cpuShares: '2',
      memoryLimitInBytes: '0',
      oomScoreAdj: '999',
    })
    const withUid = generateContainerConfig(model, sidecar, {
      type: 'app',
      attempt: 0,
      imageRef: 'x',
      imageUser: {uid: 65_534},
      volumePaths: new Map(),
      nodeMemoryBytes: GiB,
    })
    expect(withUid.linux?.securityContext?.runAsUser).toEqual({value: '65534'})
  })

  it('does not mount the managed /etc/hosts over a volume mounted there', async () => {
    const model = await pod(FULL.replace('mountPath: /cache', 'mountPath: /etc/hosts'))
    const config = generateContainerConfig(model, model.containers[0], {
      type: 'app',
      attempt: 0,
      imageRef: 'x',
      volumePaths: volumeHostPaths(model, POD_DIRS),
      etcHostsPath: '/p/etc-hosts',
      nodeMemoryBytes: GiB,
    })
    expect(config.mounts?.filter((mount) => mount?.containerPath === '/etc/hosts').map((mount) => mount?.hostPath)).toEqual([
      `${POD_DIRS}/${UID}/volumes/kubernetes.io~empty-dir/cache`,
    ])
  })
})
