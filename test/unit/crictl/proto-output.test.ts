import {describe, expect, it} from 'vitest'

import {crictlJson, crictlYaml} from '../../../src/lib/crictl/proto-output.js'

describe("crictl's jsonpb layout", () => {
  it('writes an empty list over two lines, closing at its key, and leaves "[]" inside strings alone', () => {
    const text = crictlJson({items: [], nested: {labels: [], note: 'x: []', value: undefined}})
    expect(text).toBe(`{
  "items": [
  ],
  "nested": {
    "labels": [
    ],
    "note": "x: []",
    "value": null
  }
}`)
  })

  it('YAML: keys sorted, lists flush with their key, the trailing newline kept for Println', async () => {
    expect(await crictlYaml({b: ['1'], a: {d: [], c: '10'}})).toBe('a:\n  c: "10"\n  d: []\nb:\n- "1"\n')
  })
})
