import {describe, expect, it} from 'vitest'

import {planPodRun} from '../../../../src/lib/kubelet/run/run-plan.js'
import {GiB, HOST_RESOLV, pod, POD_DIRS} from '../../../support/pod-manifest.js'

const WITH_PROBES = `
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: app
    image: busybox:1.36
    ports: [{name: http, containerPort: 8080}]
    readinessProbe: {httpGet: {path: /ready, port: http}}
    lifecycle:
      postStart: {httpGet: {path: /warm, port: http, httpHeaders: [{name: X-Hook, value: "1"}]}}
      preStop: {sleep: {seconds: 3}}
  - name: quiet
    image: busybox:1.36
    lifecycle: {postStart: {sleep: {seconds: 1}}}
`

describe('dry-run plan: probes and node-side hooks', () => {
  it('lists the probes per container and the postStart hooks that run from the node', async () => {
    const plan = await planPodRun(await pod(WITH_PROBES), {
      logsRoot: '/logs',
      podDirRoot: POD_DIRS,
      hostResolvConf: HOST_RESOLV,
      nodeMemoryBytes: GiB,
    })
    expect(plan.probes).toEqual([
      {
        container: 'app',
        readinessProbe: {
          handler: {httpGet: {path: '/ready', port: 'http', scheme: 'HTTP', httpHeaders: []}},
          initialDelaySeconds: 0,
          periodSeconds: 10,
          timeoutSeconds: 1,
          successThreshold: 1,
          failureThreshold: 3,
        },
      },
    ])
    expect(plan.calls.filter((call) => call.rpc.startsWith('node:'))).toEqual([
      {
        rpc: 'node: HTTP GET',
        note: 'postStart hook of app, from the node',
        request: {url: 'http://<pod IP>:<port http>/warm', httpHeaders: [{name: 'X-Hook', value: '1'}]},
      },
      {rpc: 'node: sleep', note: 'postStart hook of quiet', request: {seconds: 1}},
    ])
    // The preStop handler is recorded for kill, probes for status --wait-for ready.
    const create = plan.calls.find((call) => call.rpc === 'RuntimeService/CreateContainer')!.request as {
      config: {annotations: Record<string, string>}
    }
    expect(JSON.parse(create.config.annotations['io.kubernetes.container.preStopHandler'])).toEqual({sleep: {seconds: 3}})
    expect(JSON.parse(create.config.annotations['io.podctl.probes'])).toMatchObject({readinessProbe: {periodSeconds: 10}})
  })
})
