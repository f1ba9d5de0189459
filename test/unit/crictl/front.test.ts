import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'

import {decide} from '../../../src/lib/crictl/front.js'
import {logLine} from '../../../src/lib/crictl/log.js'

/** What the reference crictl v1.29.0 printed (scripts/record-crictl-fixtures.mjs), TIME for logrus' timestamp. */
interface Recorded {
  args: string[]
  stdout: string
  stderr: string
  exit: number
}

const REFERENCE: Recorded[] = JSON.parse(readFileSync(new URL('../../fixtures/crictl/reference.json', import.meta.url), 'utf8'))

/** The stderr the front's outcome gives, with logrus' timestamp as the fixtures have it. */
function stderrOf(outcome: ReturnType<typeof decide>): string {
  if (outcome.kind !== 'exit') return ''
  const line = outcome.fatal === undefined ? '' : logLine('fatal', outcome.fatal).replace(/^time="[^"]+"/, 'time="TIME"')
  return outcome.stderr + line
}

/** Cases whose outcome is the command's run against the runtime, not the command line's: not the front's to print. */
const RUNS = new Set(['pods extra', 'version'])

describe('crictl front: what urfave prints for crictl v1.29, byte for byte', () => {
  for (const recorded of REFERENCE) {
    const line = recorded.args.join(' ')
    const outcome = decide(recorded.args, '0.1.0')
    if (
      outcome.kind === 'run' &&
      (RUNS.has(line) || recorded.stdout === '' || recorded.exit !== 0 || !recorded.stdout.startsWith('NAME:'))
    ) {
      continue
    }

    it(`crictl ${line}`, () => {
      expect(outcome.kind, 'decided without the runtime').toBe('exit')
      if (outcome.kind !== 'exit') return
      const stdout = recorded.args.some((arg) => arg === '--version' || arg === '-v')
        ? outcome.stdout.replace(/ \(podctl .*\)/, '')
        : outcome.stdout
      expect({stdout, stderr: stderrOf(outcome), exit: outcome.exit}).toEqual({
        stdout: recorded.stdout,
        stderr: recorded.stderr,
        exit: recorded.exit,
      })
    })
  }
})
