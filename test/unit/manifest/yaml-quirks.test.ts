import {describe, expect, it} from 'vitest'

import {parseDocuments} from '../../../src/lib/manifest/load.js'

describe("YAML that kubectl accepts (go-yaml's escapes)", () => {
  it(String.raw`takes \' inside a double-quoted string as a quote, keys and values alike`, async () => {
    const [document] = await parseDocuments(
      [String.raw`a: "it\'s"`, String.raw`"k\'": "x\\'y"`, String.raw`b: "plain \"q\""`, ''].join('\n'),
      'pod.yaml',
    )
    expect(document).toEqual({a: "it's", "k'": String.raw`x\'y`, b: 'plain "q"'})
  })

  it('still refuses other invalid escapes with the line', async () => {
    await expect(parseDocuments(String.raw`a: "bad \q"` + '\n', 'pod.yaml')).rejects.toThrow(
      /^pod\.yaml: line 1, column \d+: an invalid escape sequence \(\\\) in a double-quoted string \(not valid YAML or JSON\)$/,
    )
  })
})
