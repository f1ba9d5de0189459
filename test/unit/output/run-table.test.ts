import {describe, expect, it} from 'vitest'

import {makeChalk} from '../../../src/lib/output/color.js'
import {renderRunTable, type RunTablePod} from '../../../src/lib/output/run-table.js'

const plain = makeChalk(false)

function pod(extra: Partial<RunTablePod> = {}): RunTablePod {
  return {
    pod: 'web',
    namespace: 'default',
    sandboxId: 'a'.repeat(64),
    attempt: 0,
    ip: '10.0.0.5',
    phase: 'Running',
    error: null,
    rolledBack: false,
    removed: false,
    containers: [
      {name: 'init', type: 'init', state: 'Exited', exitCode: 0, attempt: 0, id: 'b'.repeat(64)},
      {name: 'app', type: 'app', state: 'Running', exitCode: null, attempt: 1, id: 'c'.repeat(64)},
    ],
    ...extra,
  }
}

describe('renderRunTable', () => {
  it('one row per container, the pod columns on the first only', () => {
    const lines = renderRunTable([pod()], plain).split('\n')
    expect(lines[0]).toMatch(/^POD\s+SANDBOX\s+ATTEMPT\s+IP\s+PHASE\s+CONTAINER\s+TYPE\s+STATE\s+EXIT\s+RESTARTS\s+ID$/)
    expect(lines[1]).toMatch(/^web_default\s+aaaaaaaaaaaaa\s+0\s+10\.0\.0\.5\s+Running\s+init\s+init\s+Exited\s+0\s+0\s+bbbbbbbbbbbbb$/)
    expect(lines[2]).toMatch(/^\s+app\s+app\s+Running\s+1\s+ccccccccccccc$/)
  })

  it('says what became of the sandbox, and leaves out pods that never got one', () => {
    expect(renderRunTable([pod({rolledBack: true, phase: null, error: {code: 'PodFailed'}, containers: []})], plain)).toMatch(
      /^web_default\s+\(rolled back\)\s+0\s+10\.0\.0\.5\s+Failed\s+-$/m,
    )
    expect(renderRunTable([pod({removed: true, phase: 'Succeeded'})], plain)).toContain('(removed)')
    expect(renderRunTable([pod({sandboxId: null})], plain)).toBe('')
  })
})
