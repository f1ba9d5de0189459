import {describe, expect, it} from 'vitest'

import {parseRestartPolicy} from '../../../src/lib/kube/labels.js'

describe('parseRestartPolicy', () => {
  it('defaults to Always like Kubernetes', () => {
    expect(parseRestartPolicy(undefined)).toBe('Always')
    expect(parseRestartPolicy('never')).toBe('Always')
    expect(parseRestartPolicy('Never')).toBe('Never')
    expect(parseRestartPolicy('OnFailure')).toBe('OnFailure')
  })
})
