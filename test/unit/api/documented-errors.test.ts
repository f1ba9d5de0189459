/**
 * Every public member of the library's classes and functions says in its doc comment what it
 * throws (@throws, "nothing" when it throws nothing): a test author reads it in the editor's hover.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {ROOT} from '../../support/podctl.js'

const FILES = ['runtime.ts', 'pod.ts', 'container.ts']
/** A public method, getter, generator or exported function at the top of a class or module. */
const MEMBER = /^(?: {2}(?:async \*?|get )?(?!private |constructor|readonly |static )([\w[\].]+)\(|export async function (\w+)\()/

/** The members of `source` whose doc comment right above has no @throws. */
function undocumented(source: string): string[] {
  const lines = source.split('\n')
  const missing: string[] = []
  for (const [index, line] of lines.entries()) {
    const member = MEMBER.exec(line)
    if (!member) continue
    let start = index - 1
    while (start >= 0 && !lines[start].trim().startsWith('/**')) start--
    const comment = lines.slice(start, index).join('\n')
    if (start < 0 || !lines[index - 1].trim().endsWith('*/') || !comment.includes('@throws')) missing.push(member[1] ?? member[2])
  }

  return missing
}

describe("the library's doc comments", () => {
  it.each(FILES)('%s: every public member says what it throws', (file) => {
    const source = readFileSync(join(ROOT, 'src/lib/api', file), 'utf8')
    expect(undocumented(source)).toEqual([])
  })
})
