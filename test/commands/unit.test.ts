/** `podctl unit`: what it prints and how it refuses, through the built binary (no runtime is called). */
import {chmodSync, mkdirSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {BIN, endpointEnv, podctl} from '../support/podctl.js'
import {splitExecStart, unitValue} from '../support/systemd-exec.js'

const work = mkdtempSync(join(tmpdir(), 'podctl-unit-'))
const manifests = join(work, 'manifests')
mkdirSync(manifests)
// A manifest directory anyone may write to: sync --watch refuses it, so unit does too.
const shared = join(work, 'shared')
mkdirSync(shared)
chmodSync(shared, 0o777)
afterAll(() => rmSync(work, {recursive: true, force: true}))

const socket = join(work, 'containerd.sock')
// No endpoint from the machine's environment or crictl config: each test names its own.
const env = endpointEnv()
const unit = (...args: string[]) => podctl(['unit', ...args], {env})

describe('podctl unit', () => {
  it('prints the unit: ExecStart through this node and bin/run.js, the endpoint given; no runtime unit when nothing runs it', async () => {
    const result = await unit('-r', socket, '--all')
    expect(result.code, result.stderr).toBe(0)
    // The socket's file is called containerd.sock, but no process listens there: containerd.service is not guessed.
    expect(result.stderr).toBe(
      `No Wants=/After= for the runtime at unix://${socket}: no process podctl can see listens on ${socket}, ` +
        `and no systemd .socket unit has ListenStream=${socket}; name its unit with --after UNIT if it has one\n`,
    )
    expect(splitExecStart(unitValue(result.stdout, 'ExecStart')!)).toEqual([
      process.execPath,
      BIN,
      'sync',
      '--watch',
      '--all',
      '--runtime-endpoint',
      `unix://${socket}`,
    ])
    expect(unitValue(result.stdout, 'After')).toBe('network-online.target')
    expect(unitValue(result.stdout, 'Wants')).toBe('network-online.target')
    expect(unitValue(result.stdout, 'KillSignal')).toBe('SIGTERM')
    expect(result.stdout).toMatch(/^\[Install]\nWantedBy=multi-user\.target\n$/m)
  })

  it('takes the endpoint from CONTAINER_RUNTIME_ENDPOINT, --name and --after', async () => {
    const result = await podctl(['unit', '--all', '-n', 'edge', '--name', 'edge-agent', '--after', 'k3s.service'], {
      env: {...env, CONTAINER_RUNTIME_ENDPOINT: '/run/k3s/k3s.sock'},
    })
    expect(result.code, result.stderr).toBe(0)
    // --after names the runtime's unit: nothing is looked up, nothing said.
    expect(result.stderr).toBe('')
    expect(unitValue(result.stdout, 'Description')).toBe(
      'edge-agent: podctl node agent (sync --watch) for every pod podctl made of namespace edge',
    )
    expect(unitValue(result.stdout, 'Wants')).toBe('network-online.target k3s.service')
    expect(splitExecStart(unitValue(result.stdout, 'ExecStart')!).slice(2)).toEqual([
      'sync',
      '--watch',
      '--all',
      '-n',
      'edge',
      '--runtime-endpoint',
      'unix:///run/k3s/k3s.sock',
    ])
  })

  it('takes a manifest directory only its owner may write, as sync --watch does', async () => {
    const result = await unit('-r', socket, '-f', manifests)
    expect(result.code, result.stderr).toBe(0)
    expect(splitExecStart(unitValue(result.stdout, 'ExecStart')!).slice(2, 6)).toEqual(['sync', '--watch', '-f', manifests])
  })

  it('--json gives the name, the install path, the command line and the unit text', async () => {
    const result = await unit('-r', socket, '-l', 'app=web', '--json')
    expect(result.code, result.stderr).toBe(0)
    const parsed = JSON.parse(result.stdout)
    expect(parsed).toMatchObject({name: 'podctl', path: '/etc/systemd/system/podctl.service'})
    expect(parsed.execStart.slice(2, 6)).toEqual(['sync', '--watch', '-l', 'app=web'])
    expect(parsed.unit).toMatch(/^ExecStart=/m)
  })

  it.each([
    [['-r', socket], 'nothing to supervise; give -f FILE|DIR, --all, --label KEY=VALUE or POD names'],
    [['-r', socket, 'web', '--all'], 'give either POD names or --all, not both'],
    [
      ['-r', socket, '--all', '--metrics-address', 'nine'],
      '--metrics-address "nine": expected HOST:PORT, e.g. 127.0.0.1:9100 (port 0 picks a free one)',
    ],
    [['-r', socket, '--all', '--name', 'a/b'], '--name: "a/b" is not a unit name; use letters, digits and ":-_." (e.g. --name podctl)'],
    [
      ['-r', socket, '--all', '--after', 'containerd'],
      '--after: "containerd" is not a unit name; give one with its type, e.g. --after containerd.service',
    ],
    [['-r', socket, '-f', shared], `-f ${shared} is writable by users other than its owner (mode 0777); fix: chmod go-w ${shared}`],
  ])('refuses %j with exit 2 and one line naming the flag', async (args, message) => {
    const result = await unit(...args)
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stdout).toBe('')
    expect(result.stderr.split('\n')[0]).toContain(`Error: ${message}`)
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1)
  })
})
