import {describe, expect, it} from 'vitest'

import {UsageError} from '../../../../src/lib/errors.js'
import {resourceChanges} from '../../../../src/lib/kubelet/kuberuntime/update-resources.js'

describe('resourceChanges', () => {
  it("takes crictl's units as they are", () => {
    expect(
      resourceChanges({cpuPeriod: '50000', cpuQuota: '25000', cpuShares: '512', memory: '268435456', cpusetCpus: '0-1', cpusetMems: '0'}),
    ).toEqual({
      cpuPeriod: '50000',
      cpuQuota: '25000',
      cpuShares: '512',
      memoryLimitInBytes: '268435456',
      cpusetCpus: '0-1',
      cpusetMems: '0',
    })
  })

  it('turns quantities into bytes and a CFS quota over the period (default 100ms)', () => {
    expect(resourceChanges({cpus: '0.5', memory: '256Mi'})).toEqual({
      cpuPeriod: '100000',
      cpuQuota: '50000',
      memoryLimitInBytes: '268435456',
    })
    expect(resourceChanges({cpus: '250m', cpuPeriod: '200000'})).toEqual({cpuPeriod: '200000', cpuQuota: '50000'})
    expect(resourceChanges({memory: '1G'})).toEqual({memoryLimitInBytes: '1000000000'})
    expect(resourceChanges({cpuQuota: '-1'})).toEqual({cpuQuota: '-1'})
  })

  it('refuses nothing, nonsense and conflicts with the flag named', () => {
    expect(() => resourceChanges({})).toThrow(/^nothing to update/)
    expect(() => resourceChanges({memory: 'lots'})).toThrow('--memory "lots" is not a size')
    expect(() => resourceChanges({memory: '1Ki'})).toThrow(/below the runtime's minimum of 4Mi/)
    expect(() => resourceChanges({cpus: '0'})).toThrow('--cpus "0" is not a CPU amount')
    expect(() => resourceChanges({cpus: '1', cpuQuota: '1000'})).toThrow('give either --cpus or --cpu-quota, not both')
    expect(() => resourceChanges({cpuShares: '1'})).toThrow('--cpu-shares must be at least 2, not 1')
    expect(() => resourceChanges({cpuPeriod: '1.5'})).toThrow('--cpu-period "1.5" is not an integer')
    expect(() => resourceChanges({cpusetCpus: 'all'})).toThrow('--cpuset-cpus "all" is not a CPU list')
    expect(() => resourceChanges({memory: 'x'})).toThrow(UsageError)
  })
})
