import {describe, expect, it} from 'vitest'

import {buildPodLogsDirectory} from '../../../src/lib/kube/helpers.js'

const LONGEST = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`
const UID = '0b5e5f0e-6d1f-4f8a-9c59-6b4e9d3c2a10'

describe('buildPodLogsDirectory', () => {
  it('is the kubelet’s <namespace>_<name>_<uid> when it fits', () => {
    expect(buildPodLogsDirectory('/var/log/pods/', 'shop', 'web', UID)).toBe(`/var/log/pods/shop_web_${UID}`)
  })

  it('cuts a 253-character name so the directory is one file name, namespace first and uid last', () => {
    const namespace = 'n'.repeat(63)
    const path = buildPodLogsDirectory('/var/log/pods', namespace, LONGEST, UID)
    const name = path.slice('/var/log/pods/'.length)
    expect(Buffer.byteLength(name)).toBe(255)
    const parts = name.split('_')
    expect([parts[0], parts.at(-1)]).toEqual([namespace, UID])
    expect(LONGEST.startsWith(parts[1])).toBe(true)
  })
})
