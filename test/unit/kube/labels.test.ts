import {describe, expect, it} from 'vitest'

import {containerHash, parseRestartPolicy} from '../../../src/lib/kube/labels.js'
import {pod} from '../../support/pod-manifest.js'

describe('parseRestartPolicy', () => {
  it('defaults to Always like Kubernetes', () => {
    expect(parseRestartPolicy(undefined)).toBe('Always')
    expect(parseRestartPolicy('never')).toBe('Always')
    expect(parseRestartPolicy('Never')).toBe('Never')
    expect(parseRestartPolicy('OnFailure')).toBe('OnFailure')
  })
})

describe('containerHash', () => {
  it('keeps the hash stable and sensitive to the spec', async () => {
    const model = await pod()
    expect(containerHash(model.containers[0])).toBe(containerHash((await pod()).containers[0]))
    expect(containerHash(model.containers[0])).not.toBe(containerHash({...model.containers[0], args: []}))
    expect(containerHash(model.containers[0])).toMatch(/^[0-9a-f]+$/)
  })
})
