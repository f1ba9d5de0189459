import {describe, expect, it} from 'vitest'

import {rollouts} from '../../../../src/lib/kubelet/config/superseded.js'
import type {PodModel} from '../../../../src/lib/manifest/model.js'

function replica(name: string, replica: number, owner = 'web', namespace = 'shop'): PodModel {
  return {name, namespace, uid: `u-${name}`, owner: {kind: 'Deployment', name: owner, replica}} as unknown as PodModel
}

const names = (pods: Array<PodModel | undefined>) => pods.map((pod) => pod?.name)

describe('rollouts', () => {
  it('pairs each new replica with the old pod of its index, and leaves replicas the workload no longer has', () => {
    const desired = [replica('web-new-a', 0), replica('web-new-b', 1)]
    const recorded = [replica('web-old-c', 2), replica('web-old-b', 1), replica('web-old-a', 0), replica('api-x', 0, 'api')]
    const [rollout] = rollouts(desired, recorded)
    expect(rollout.workload).toBe('Deployment web')
    expect(names(rollout.steps.map((step) => step.pod))).toEqual(['web-new-a', 'web-new-b'])
    expect(names(rollout.steps.map((step) => step.replaces))).toEqual(['web-old-a', 'web-old-b'])
    expect(names(rollout.leftover)).toEqual(['web-old-c'])
  })

  it("has nothing to do when the recorded pods are the manifest's, for a Pod, or in another namespace", () => {
    const same = [replica('web-a', 0), replica('web-b', 1)]
    expect(rollouts(same, same)).toEqual([])
    const plain = {name: 'solo', namespace: 'shop', uid: 'u'} as unknown as PodModel
    expect(rollouts([plain], [plain])).toEqual([])
    expect(rollouts([replica('web-a', 0)], [replica('web-old', 0, 'web', 'staging')])).toEqual([])
  })

  it('a scaled-up workload starts its new replicas with nothing to replace', () => {
    const [rollout] = rollouts([replica('web-n0', 0), replica('web-n1', 1), replica('web-n2', 2)], [replica('web-o0', 0)])
    expect(names(rollout.steps.map((step) => step.replaces))).toEqual(['web-o0', undefined, undefined])
    expect(rollout.leftover).toEqual([])
  })
})
