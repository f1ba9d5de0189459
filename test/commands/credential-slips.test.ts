import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {podctl} from '../support/podctl.js'

/**
 * Mistyped command lines that used to put a password into events, errors or an image name sent
 * to a registry. Each is refused before anything is parsed or sent, and nothing that may be a
 * credential is printed. No runtime is needed: a missing socket proves nothing was contacted.
 */
const SECRET = 's3cretPW'
const dir = mkdtempSync(join(tmpdir(), 'podctl-slips-'))
const manifest = join(dir, 'pod.yaml')
writeFileSync(
  manifest,
  'apiVersion: v1\nkind: Pod\nmetadata: {name: slip}\nspec:\n  containers: [{name: a, image: localhost:5000/podctl/busybox:1.36}]\n',
)
const env = {CONTAINER_RUNTIME_ENDPOINT: `unix://${join(dir, 'no.sock')}`, CRI_CONFIG_FILE: undefined, DOCKER_CONFIG: dir}

async function refused(args: string[]) {
  const result = await podctl(args, {env})
  expect(result.code).toBe(ExitCode.USAGE)
  expect(result.stdout).toBe('')
  expect(result.stderr.split('\n').filter(Boolean)).toHaveLength(1)
  expect(result.stderr).not.toContain(SECRET.slice(0, 3))
  expect(result.stderr).not.toContain(SECRET.slice(3))
  expect(result.stderr).not.toMatch(/Pulling|at Object|\.js:\d+/)
  return result.stderr
}

describe('credential slips on the command line', () => {
  it('-creds with one dash (read as -c reds, the value becoming an image)', async () => {
    expect(await refused(['pull', '-creds', `alice:${SECRET}`, 'localhost:5000/podctl/busybox:1.36'])).toMatch(
      /^Error: -creds has one dash.*write --creds/,
    )
    expect(await refused(['pull', `-auth=${Buffer.from(`alice:${SECRET}`).toString('base64')}`, 'localhost:5000/x'])).toMatch(
      /^Error: -auth has one dash/,
    )
    expect(await refused(['run', '-f', manifest, '-creds', `alice:${SECRET}`])).toMatch(/^Error: -creds has one dash/)
  })

  it('an unquoted space in the password', async () => {
    const [head, tail] = [SECRET.slice(0, 3), SECRET.slice(3)]
    expect(await refused(['pull', '--creds', `alice:${head}`, tail, 'localhost:5000/podctl/busybox:1.36'])).toMatch(
      /^Error: the argument after the --creds value is not an image with a registry host .* \(not shown\); quote the whole value/,
    )
    expect(await refused(['pull', `--creds=alice:${head}`, tail])).toMatch(/after the --creds value/)
    expect(await refused(['run', '--creds', `alice:${head}`, tail, '-f', manifest])).toMatch(
      /after the --creds value is not an existing manifest file/,
    )
  })

  it('a password given as its own word, which pull would take as an image name', async () => {
    expect(await refused(['pull', '--creds', 'alice', SECRET, 'busybox'])).toMatch(/after the --creds value/)
    expect(await refused(['pull', '--auth', 'YWxpY2U6cw==', SECRET])).toMatch(/after the --auth value/)
  })

  it('still takes an image with a registry host, or a manifest file, right after the credentials', async () => {
    const pull = await podctl(['pull', '--creds', `alice:${SECRET}`, 'localhost:5000/podctl/busybox:1.36'], {env})
    expect(pull.code).toBe(ExitCode.UNREACHABLE)
    const run = await podctl(['run', '--creds', `alice:${SECRET}`, manifest, '--dry-run', '-o', 'json'], {env})
    expect(run.code).toBe(0)
    expect(run.stdout).not.toContain(SECRET)
  })
})

describe('pull reports the runtime and its config before any event', () => {
  it('a missing --config file is a usage error, not ErrImagePull', async () => {
    const result = await podctl(['pull', '--config', join(dir, 'missing.yaml'), 'localhost:5000/podctl/busybox:1.36'], {env})
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stderr).toBe(
      `Error: cannot read config file ${join(dir, 'missing.yaml')}: no such file; fix the path given by --config or CRI_CONFIG_FILE\n`,
    )
  })

  it('an unreachable runtime prints no Pulling event first', async () => {
    const result = await podctl(['pull', 'localhost:5000/podctl/busybox:1.36'], {env})
    expect(result.code).toBe(ExitCode.UNREACHABLE)
    expect(result.stderr).toMatch(/^Error: no socket at .*no\.sock: is the runtime running\?[^\n]*\n$/)
  })

  it('an invalid name still needs no runtime (exit 11)', async () => {
    const result = await podctl(['pull', 'UPPER'], {env})
    expect(result.code).toBe(ExitCode.INVALID_IMAGE_NAME)
  })
})
