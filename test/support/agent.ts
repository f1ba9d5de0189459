/**
 * A long-running podctl in a test (`sync --watch`, a unit's ExecStart): its output as it comes, and
 * a stop that sends the signal and waits for the exit code. Whatever a failed test left running is
 * killed when the test file ends.
 */
import {type ChildProcess, spawn} from 'node:child_process'

import {afterAll} from 'vitest'

export interface Agent {
  /** The process's pid (to read its /proc entries). */
  pid: number
  /** stdout and stderr so far, interleaved as they came. */
  output(): string
  /** Sends `signal` (SIGTERM, as systemd stops a unit) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

const running = new Set<ChildProcess>()
let cleanupRegistered = false

export function startAgent(argv: readonly string[], env: Record<string, string | undefined>): Agent {
  if (!cleanupRegistered) {
    cleanupRegistered = true
    afterAll(() => {
      for (const child of running) child.kill('SIGKILL')
    })
  }

  const child = spawn(argv[0], argv.slice(1), {env: {...env, NO_COLOR: '1'}, stdio: ['ignore', 'pipe', 'pipe']})
  running.add(child)
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => {
    child.on('close', (code) => {
      running.delete(child)
      resolve(code)
    })
  })
  return {
    pid: child.pid!,
    output: () => output,
    stop(signal = 'SIGTERM') {
      child.kill(signal)
      return exited
    },
  }
}
