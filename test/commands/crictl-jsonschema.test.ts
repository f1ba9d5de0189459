/**
 * `crictl run|create|runp|pull jsonschema` under the crictl personality, as users run them: which
 * schema each prints (crictl v1.37's bytes, test/fixtures/crictl/jsonschema/), run's and create's
 * usage without --pod or --container, and no runtime needed (the endpoint leads nowhere).
 */
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {endpointEnv, podctl} from '../support/podctl.js'

const dir = mkdtempSync(join(tmpdir(), 'crictl-jsonschema-'))
// An empty crictl config: crictl warns on every command when /etc/crictl.yaml is missing.
const config = join(dir, 'crictl.yaml')
writeFileSync(config, '')
const env = endpointEnv(`unix://${join(dir, 'nothing.sock')}`, {PODCTL_PERSONALITY: 'crictl', CRI_CONFIG_FILE: config})
const crictl = (...args: string[]) => podctl(args, {env})
const recorded = (file: string) => readFileSync(new URL(`../fixtures/crictl/jsonschema/${file}`, import.meta.url), 'utf8')
const POD = recorded('pod-sandbox-config.json')
const CONTAINER = recorded('container-config.json')

describe('crictl jsonschema', () => {
  it.each([
    ['runp jsonschema', POD],
    ['pull js', POD],
    ['pull jsonschema extra', POD],
    ['run jsonschema --pod', POD],
    ['create js -c', CONTAINER],
    ['run js -pc', POD + CONTAINER],
    ['create jsonschema --container --pod', POD + CONTAINER],
  ])('%s: the schema on stdout, exit 0', async (line, schema) => {
    expect(await crictl(...line.split(' '))).toMatchObject({code: 0, stdout: schema, stderr: ''})
  })

  it('run jsonschema without --pod or --container: its usage, exit 0', async () => {
    const usage = await crictl('run', 'jsonschema')
    expect(usage).toMatchObject({code: 0, stderr: ''})
    expect(usage.stdout).toMatch(/^NAME:\n {3}crictl run jsonschema - Display the JSON schema for the pod or container config\n/)
    expect(usage.stdout).toContain('--container, -c  Print the container JSON schema')
  })
})
