import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {credentialsFromFlags} from '../../../src/lib/images/credentials.js'
import {parseAnnotations, pullSandboxConfig} from '../../../src/lib/images/pull-options.js'

describe('crictl pull options', () => {
  it('--username takes the password from the prompt on a terminal, else from stdin', async () => {
    const prompted = await credentialsFromFlags({username: 'alice'}, {isTTY: true, prompt: async () => 's3cret'})
    expect(prompted).toEqual({auth: {username: 'alice', password: 's3cret'}, source: '--username'})
    const piped = await credentialsFromFlags({username: 'alice'}, {isTTY: false, readStdin: async () => 'piped'})
    expect(piped?.auth).toEqual({username: 'alice', password: 'piped'})
    await expect(credentialsFromFlags({username: 'alice'}, {isTTY: false, readStdin: async () => ''})).rejects.toThrow(/no password given/)
    await expect(credentialsFromFlags({username: 'alice', creds: 'bob:x'})).rejects.toThrow(/pass only one/)
  })

  it('--annotation KEY=VALUE (values may hold "=") merged into --pod-config', async () => {
    expect(parseAnnotations(['a=1', 'b=x=y'])).toEqual({a: '1', b: 'x=y'})
    expect(() => parseAnnotations(['=1'])).toThrow('--annotation "=1" is not KEY=VALUE')
    expect(await pullSandboxConfig(undefined, undefined)).toBeUndefined()
    const path = join(mkdtempSync(join(tmpdir(), 'podctl-pull-')), 'pod.json')
    writeFileSync(path, JSON.stringify({metadata: {name: 'p', namespace: 'ns', uid: 'u', attempt: 1}, annotations: {a: 'pod'}}))
    expect(await pullSandboxConfig(path, ['b=flag'])).toEqual({
      metadata: {name: 'p', namespace: 'ns', uid: 'u', attempt: 1},
      labels: {},
      annotations: {a: 'pod', b: 'flag'},
    })
  })
})
