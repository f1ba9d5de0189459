import {describe, expect, it} from 'vitest'

import {containerOomScoreAdj, podQosClass, sandboxResources} from '../../../../src/lib/kubelet/core/resources.js'
import {GiB, pod} from '../../../support/pod-manifest.js'

describe('QoS and OOM score (pkg/kubelet/qos)', () => {
  const container = (limits: {cpu?: string; memory?: string}, requests: {cpu?: string; memory?: string} = {}) => ({
    name: 'c',
    image: 'busybox',
    command: [],
    args: [],
    env: [],
    ports: [],
    resources: {limits, requests},
    lifecycle: {},
    volumeMounts: [],
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File' as const,
  })

  it('classifies pods and scores their containers', async () => {
    const base = await pod()
    const guaranteed = {...base, initContainers: [], containers: [container({cpu: '1', memory: '1Gi'})]}
    const bestEffort = {...base, initContainers: [], containers: [container({})]}
    const burstable = {...base, initContainers: [], containers: [container({memory: '1Gi'}, {memory: '512Mi'})]}
    expect(podQosClass(guaranteed)).toBe('Guaranteed')
    expect(containerOomScoreAdj(guaranteed, guaranteed.containers[0], 8 * GiB)).toBe(-997)
    expect(podQosClass(bestEffort)).toBe('BestEffort')
    expect(containerOomScoreAdj(bestEffort, bestEffort.containers[0], 8 * GiB)).toBe(1000)
    expect(podQosClass(burstable)).toBe('Burstable')
    expect(containerOomScoreAdj(burstable, burstable.containers[0], 8 * GiB)).toBe(938)
    expect(containerOomScoreAdj(burstable, burstable.containers[0], 512 * 1024 * 1024)).toBe(3)
    expect(sandboxResources(guaranteed)).toEqual({
      cpuPeriod: '100000',
      cpuQuota: '100000',
      cpuShares: '1024',
      memoryLimitInBytes: String(GiB),
    })
  })
})
