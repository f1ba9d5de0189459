import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'

import {decide} from '../../../src/lib/crictl/front.js'
import {logLine} from '../../../src/lib/crictl/log.js'

/**
 * What the reference crictl v1.37.0 printed (scripts/record-crictl-fixtures.mjs), TIME for logrus' timestamp
 * and PROGRAM_DIR for the directory crictl looks in when /etc/crictl.yaml is missing.
 */
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
  const line = outcome.error === undefined ? '' : logLine('error', outcome.error).replace(/^time="[^"]+"/, 'time="TIME"')
  return outcome.stderr + line
}

/** app.Before's warning about the missing config file (main.ts prints it when the outcome says Before ran). */
const CONFIG_WARNING = /^time="TIME" level=warning msg="Config .* does not exist, trying next: .*"\n/m

/** Cases whose outcome is the command's run against the runtime, not the command line's: not the front's to print. */
const RUNS = new Set(['pods extra', 'version', 'inspect', 'inspectp', 'inspecti'])

describe('crictl front: what urfave prints for crictl v1.37, byte for byte', () => {
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
      expect({stdout, stderr: stderrOf(outcome), exit: outcome.exit, before: outcome.before}).toEqual({
        stdout: recorded.stdout,
        stderr: recorded.stderr.replace(CONFIG_WARNING, ''),
        exit: recorded.exit,
        before: CONFIG_WARNING.test(recorded.stderr),
      })
    })
  }
})
