import {describe, expect, it} from 'vitest'

import {expandReferences} from '../../../src/lib/kube/expansion.js'

describe('expandReferences (the kubelet $(VAR) expansion)', () => {
  const lookup = (name: string) => ({A: 'x', B: 'y'})[name]

  it('expands known names, keeps unknown ones and honours $$', () => {
    expect(expandReferences('$(A)-$(B)', lookup)).toBe('x-y')
    expect(expandReferences('$(C)', lookup)).toBe('$(C)')
    expect(expandReferences('$$(A)', lookup)).toBe('$(A)')
    expect(expandReferences('$A $(A', lookup)).toBe('$A $(A')
    expect(expandReferences('cost: 5$', lookup)).toBe('cost: 5$')
  })
})
