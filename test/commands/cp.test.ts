import {describe, expect, it} from 'vitest'

import {endpointEnv, podctl} from '../support/podctl.js'

/**
 * `podctl cp` with `-` (a tar stream), refused before any runtime is asked when the streams cannot
 * work: the endpoint points at nothing, so reaching it would exit 3 instead.
 */
const env = endpointEnv('unix:///nonexistent/podctl-cp-test.sock')

describe('cp - (tar streams)', () => {
  it('refuses -o json and --json when stdout carries the archive', async () => {
    const message = 'cp POD:PATH -: stdout carries the tar archive; drop -o/--json'
    const output = await podctl(['cp', 'web/app:/data', '-', '-o', 'json'], {env})
    expect(output).toMatchObject({code: 2, stdout: '', stderr: `Error: ${message}\n`})
    const json = await podctl(['cp', 'web/app:/data', '-', '--json'], {env})
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout)).toEqual({error: {code: 'UsageError', exitCode: 2, message}})
  })

  it('refuses "-" on both sides or beside a local path', async () => {
    for (const args of [
      ['-', '-'],
      ['-', './local'],
      ['./local', '-'],
    ]) {
      const result = await podctl(['cp', ...args], {env})
      expect(result).toMatchObject({
        code: 2,
        stdout: '',
        stderr: 'Error: cp copies between a container and this host: give exactly one side as POD[/CONTAINER]:PATH\n',
      })
    }
  })

  it('documents "-" in its help', async () => {
    const help = await podctl(['cp', '--help'], {env})
    expect(help.stdout).toContain('"-" stands for a tar stream, as in docker cp')
    expect(help.stdout).toContain('podctl cp web/app:/var/log - -n shop | tar -tvf -')
  })
})
