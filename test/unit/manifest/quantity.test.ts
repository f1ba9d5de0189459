import {describe, expect, it} from 'vitest'

import {compareQuantities, parseQuantity, quantityMilliValue, quantityValue} from '../../../src/lib/manifest/quantity.js'
import {linuxResources, milliCpuToQuota, milliCpuToShares} from '../../../src/lib/kubelet/core/resources.js'

const value = (text: string | number) => quantityValue(parseQuantity(text)!)
const milli = (text: string | number) => quantityMilliValue(parseQuantity(text)!)

describe('parseQuantity', () => {
  it('reads CPU quantities as millicores, rounding up like MilliValue()', () => {
    expect(milli('500m')).toBe(500n)
    expect(milli('1')).toBe(1000n)
    expect(milli(2)).toBe(2000n)
    expect(milli('1.5')).toBe(1500n)
    expect(milli('0.1')).toBe(100n)
    expect(milli('100u')).toBe(1n)
    expect(milli('1500n')).toBe(1n)
    expect(milli('.5')).toBe(500n)
  })

  it('reads memory quantities as bytes with binary and decimal suffixes', () => {
    expect(value('128Mi')).toBe(134_217_728n)
    expect(value('1Gi')).toBe(1_073_741_824n)
    expect(value('1G')).toBe(1_000_000_000n)
    expect(value('64k')).toBe(64_000n)
    expect(value('1Ki')).toBe(1024n)
    expect(value('1e3')).toBe(1000n)
    expect(value('1E3')).toBe(1000n)
    expect(value('2E')).toBe(2_000_000_000_000_000_000n)
    expect(value('1.5Gi')).toBe(1_610_612_736n)
    expect(value(1024)).toBe(1024n)
  })

  it('rounds fractional bytes up like Value()', () => {
    expect(value('0.5')).toBe(1n)
    expect(value('1500m')).toBe(2n)
  })

  it('refuses what is not a quantity', () => {
    for (const bad of ['', 'abc', '1mi', '1 Gi', '1GB', '--1', '1.2.3', 'Mi', '1e', '1e99']) expect(parseQuantity(bad), bad).toBeUndefined()
  })

  it('compares exactly', () => {
    expect(compareQuantities(parseQuantity('1Gi')!, parseQuantity('1024Mi')!)).toBe(0)
    expect(compareQuantities(parseQuantity('500m')!, parseQuantity('1')!)).toBe(-1)
    expect(compareQuantities(parseQuantity('1G')!, parseQuantity('1Gi')!)).toBe(-1)
  })
})

describe('the kubelet CPU arithmetic', () => {
  it('converts millicores to shares with the kernel minimum of 2', () => {
    expect(milliCpuToShares(0n)).toBe(2n)
    expect(milliCpuToShares(1n)).toBe(2n)
    expect(milliCpuToShares(500n)).toBe(512n)
    expect(milliCpuToShares(1000n)).toBe(1024n)
  })

  it('converts millicores to a CFS quota over 100 ms with a 1 ms floor', () => {
    expect(milliCpuToQuota(0n)).toBe(0n)
    expect(milliCpuToQuota(5n)).toBe(1000n)
    expect(milliCpuToQuota(250n)).toBe(25_000n)
    expect(milliCpuToQuota(2000n)).toBe(200_000n)
  })

  it('takes the shares from the limit when no request is set (calculateLinuxResources)', () => {
    expect(linuxResources(0n, 500n, 134_217_728n)).toEqual({
      cpuPeriod: '100000',
      cpuQuota: '50000',
      cpuShares: '512',
      memoryLimitInBytes: '134217728',
    })
    expect(linuxResources(250n, 1000n, 0n)).toEqual({cpuPeriod: '100000', cpuQuota: '100000', cpuShares: '256', memoryLimitInBytes: '0'})
    expect(linuxResources(0n, 0n, 0n)).toEqual({cpuPeriod: '100000', cpuQuota: '0', cpuShares: '2', memoryLimitInBytes: '0'})
  })
})
