import {spawn} from 'node:child_process'
import {PassThrough} from 'node:stream'

import {afterAll, describe, expect, it} from 'vitest'

import type {ContainerProcess} from '../../../src/lib/host/container-process.js'
import {composeEnvironment, parseEnvFlags, planHostExec, runHostExec} from '../../../src/lib/host/host-exec.js'
import {startTicksOf} from '../../../src/lib/util/process-start.js'

// A process standing for a container's main one: same namespaces as this test, its own environment.
const main = spawn('sleep', ['120'], {stdio: 'ignore', env: {PATH: '/usr/bin:/bin', GREETING: 'hi', HOME: '/root'}})
afterAll(() => {
  main.kill('SIGKILL')
})

function target(): ContainerProcess {
  return {containerId: 'c0ffee', name: 'main', pid: main.pid!, startTicks: startTicksOf(main.pid!), root: `/proc/${main.pid}/root`}
}

async function run(options: Parameters<typeof planHostExec>[1]): Promise<{code: number; stdout: string; stderr: string}> {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const chunks = {out: [] as Buffer[], err: [] as Buffer[]}
  stdout.on('data', (chunk: Buffer) => chunks.out.push(chunk))
  stderr.on('data', (chunk: Buffer) => chunks.err.push(chunk))
  const code = await runHostExec(planHostExec(target(), options), {...options, io: {stdout, stderr}})
  return {code, stdout: Buffer.concat(chunks.out).toString(), stderr: Buffer.concat(chunks.err).toString()}
}

describe('-e words', () => {
  it('are NAME=VALUE pairs, the value may hold "=" or be empty', () => {
    expect(parseEnvFlags(['FOO=bar', 'A=b=c', 'EMPTY='])).toEqual([
      ['FOO', 'bar'],
      ['A', 'b=c'],
      ['EMPTY', ''],
    ])
    expect(() => parseEnvFlags(['FOO'])).toThrow('-e "FOO": expected NAME=VALUE')
    expect(() => parseEnvFlags(['=x'])).toThrow('-e "=x": expected NAME=VALUE')
  })

  it("override the container's environment; HOME comes from the user's entry only where the container has none", () => {
    expect(composeEnvironment(['PATH=/bin', 'A=1'], [['A', '2']], '/home/app')).toEqual({PATH: '/bin', A: '2', HOME: '/home/app'})
    expect(composeEnvironment(['HOME=/root'], [], '/home/app')).toEqual({HOME: '/root'})
    expect(composeEnvironment([], [], undefined)).toEqual({})
  })
})

// These enter a process's namespaces with nsenter: podctl's host side runs as root.
describe.runIf(process.getuid?.() === 0)('a command entered from the host', () => {
  it('runs as the user asked, in the directory asked, with the environment of the main process and the overrides', async () => {
    const result = await run({
      cmd: ['sh', '-c', 'echo "$(id -u):$(id -g) $(pwd) $GREETING $FOO"'],
      user: '1234:1234',
      env: [['FOO', 'bar']],
      workdir: '/tmp',
    })
    expect(result).toEqual({code: 0, stdout: '1234:1234 /tmp hi bar\n', stderr: ''})
  })

  it("keeps the main process's own user without --user, and passes the exit code through", async () => {
    expect(await run({cmd: ['sh', '-c', 'id -u; exit 7']})).toEqual({code: 7, stdout: '0\n', stderr: ''})
  })

  it('gives 128+N for a command ended by signal N, and 127 for a command that does not exist', async () => {
    expect((await run({cmd: ['sh', '-c', 'kill -TERM $$']})).code).toBe(143)
    const missing = await run({cmd: ['no-such-command-x']})
    expect(missing.code).toBe(127)
    expect(missing.stderr).toContain('no-such-command-x')
  })

  it('refuses a working directory the container lacks, and a relative one (usage, exit 2)', () => {
    expect(() => planHostExec(target(), {cmd: ['true'], workdir: '/no/such/dir'})).toThrow(
      '-w /no/such/dir: no such directory in container main (c0ffee)',
    )
    expect(() => planHostExec(target(), {cmd: ['true'], workdir: 'tmp'})).toThrow(
      '-w tmp: the working directory must be an absolute path in the container',
    )
    expect(() => planHostExec(target(), {cmd: []})).toThrow(/^no command given/)
  })

  it('stops the command when aborted', async () => {
    const controller = new AbortController()
    const started = Date.now()
    const running = run({cmd: ['sleep', '60'], user: '0', signal: controller.signal})
    setTimeout(() => controller.abort(), 300)
    expect(await running).toMatchObject({code: 143})
    expect(Date.now() - started).toBeLessThan(10_000)
  })
})
