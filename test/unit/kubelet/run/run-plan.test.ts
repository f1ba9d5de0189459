import {describe, expect, it} from 'vitest'

import {planPodRun, redactAuth, REDACTED} from '../../../../src/lib/kubelet/run/run-plan.js'
import {GiB, HOST_RESOLV, pod, POD_DIRS} from '../../../support/pod-manifest.js'

describe('dry-run plan', () => {
  it('lists the CRI requests in order with credentials redacted', async () => {
    const plan = await planPodRun(await pod(), {
      logsRoot: '/logs',
      podDirRoot: POD_DIRS,
      hostResolvConf: HOST_RESOLV,
      nodeMemoryBytes: GiB,
      auth: {username: 'alice', password: 'secretpass'},
    })
    expect(plan.calls.map((call) => call.rpc)).toEqual([
      'RuntimeService/RunPodSandbox',
      'RuntimeService/PodSandboxStatus',
      'ImageService/ImageStatus',
      'ImageService/PullImage',
      'RuntimeService/CreateContainer',
      'RuntimeService/StartContainer',
      'ImageService/ImageStatus',
      'ImageService/PullImage',
      'RuntimeService/CreateContainer',
      'RuntimeService/StartContainer',
      'RuntimeService/ExecSync',
      // busybox has no tag: pull policy Always, no ImageStatus first.
      'ImageService/PullImage',
      'RuntimeService/CreateContainer',
      'RuntimeService/StartContainer',
    ])
    expect(plan.calls[0].request).toMatchObject({runtimeHandler: 'test-handler'})
    const text = JSON.stringify(plan)
    expect(text).not.toContain('secretpass')
    expect(plan.calls[3].request).toMatchObject({auth: {username: 'alice', password: REDACTED}})
    expect(redactAuth({auth: 'YWxpY2U6cw==', identityToken: 't', serverAddress: 'r'})).toEqual({
      serverAddress: 'r',
      auth: REDACTED,
      identityToken: REDACTED,
    })
  })
})
