import {describe, expect, it} from 'vitest'

import {DEFAULT_DETACH_KEYS, describeDetachKeys, DetachKeyFilter, parseDetachKeys} from '../../../src/lib/streaming/detach-keys.js'

/** What the filter passes on for these chunks, and whether it detached. */
async function filtered(keys: string, chunks: string[]): Promise<{sent: string; detached: boolean}> {
  let detached = false
  const filter = new DetachKeyFilter(parseDetachKeys(keys), () => (detached = true))
  let sent = ''
  filter.on('data', (chunk: Buffer) => (sent += chunk.toString('latin1')))
  for (const chunk of chunks) filter.write(Buffer.from(chunk, 'latin1'))
  await new Promise((resolve) => {
    setImmediate(resolve)
  })
  return {sent, detached}
}

describe('detach keys', () => {
  it("reads docker's spelling", () => {
    expect([...parseDetachKeys(DEFAULT_DETACH_KEYS)]).toEqual([16, 17])
    expect([...parseDetachKeys('ctrl-a,x,ctrl-@,ctrl-[')]).toEqual([1, 120, 0, 27])
    expect(parseDetachKeys('')).toHaveLength(0)
    expect(describeDetachKeys(parseDetachKeys(DEFAULT_DETACH_KEYS))).toBe('Ctrl-P Ctrl-Q')
    expect(() => parseDetachKeys('ctrl-1')).toThrow('--detach-keys "ctrl-1": "ctrl-1" is not a key; use e.g. ctrl-p,ctrl-q')
  })

  it('ends on the sequence, even across chunks, and passes what came before it', async () => {
    expect(await filtered(DEFAULT_DETACH_KEYS, ['ls\r\u0010\u0011more'])).toEqual({sent: 'ls\r', detached: true})
    expect(await filtered(DEFAULT_DETACH_KEYS, ['a\u0010', '\u0011', 'b'])).toEqual({sent: 'a', detached: true})
  })

  it('sends a held-back key when the next one does not go on with the sequence', async () => {
    expect(await filtered(DEFAULT_DETACH_KEYS, ['\u0010x'])).toEqual({sent: '\u0010x', detached: false})
    expect(await filtered(DEFAULT_DETACH_KEYS, ['\u0010', '\u0010\u0011'])).toEqual({sent: '\u0010', detached: true})
    expect(await filtered('ctrl-x', ['ab\u0018'])).toEqual({sent: 'ab', detached: true})
  })

  it('passes everything with detaching turned off', async () => {
    expect(await filtered('', ['\u0010\u0011'])).toEqual({sent: '\u0010\u0011', detached: false})
  })
})
