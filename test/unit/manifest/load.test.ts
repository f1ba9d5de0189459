import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {loadCrictlConfigs, loadPodManifest} from '../../../src/lib/manifest/load.js'

/**
 * A file that is no manifest — an .env, /etc/passwd, a key, a half-broken YAML holding a secret —
 * handed to `run -f` (or dropped into a watched directory, which reads it the same way) is refused
 * naming the file and where, never quoting what it holds.
 */
const dir = mkdtempSync(join(tmpdir(), 'podctl-load-'))
const SECRET = 'hunter2-s3cr3t'

async function refusalOf(name: string, text: string): Promise<string> {
  const path = join(dir, name)
  writeFileSync(path, text)
  const error = await loadPodManifest(path).then(
    () => undefined,
    (error_: unknown) => error_ as Error,
  )
  expect(error, `${name} was read`).toBeInstanceOf(Error)
  return error!.message
}

describe('a file that is no manifest is never echoed', () => {
  it.each([
    ['an .env', 'app.env.yaml', `DB_PASSWORD=${SECRET}\nDB_USER=app\n`, 'is not a Kubernetes manifest: the document is text'],
    ['a passwd file', 'passwd.yaml', `root:x:0:0:${SECRET}:/root:/bin/bash\ndaemon:x:1:1::/:/bin/false\n`, 'the document is text'],
    ['a list', 'list.json', `["${SECRET}", "other"]`, 'the document is a list'],
    ['a number', 'pin.yaml', '12345678\n', 'the document is a number'],
    ['an unknown tag', 'tag.yaml', `!${SECRET} value\n`, 'line 1, column 1: a YAML tag (!name) podctl does not read'],
    ['an alias without anchor', 'alias.yaml', `key: *${SECRET}\n`, 'a YAML alias (*name) names no anchor (&name) set before it'],
    ['a bad escape', 'escape.yaml', `password: "\\q${SECRET}"\n`, 'an invalid escape sequence'],
    ['stray text after a flow list', 'flow.yaml', `[a, b]] ${SECRET}\n`, 'line 1, column 7: unexpected text here'],
  ])('%s', async (_what, name, text, said) => {
    const message = await refusalOf(name, text)
    expect(message).toContain(join(dir, name))
    expect(message).toContain(said)
    expect(message).not.toContain(SECRET)
    expect(message).not.toContain(SECRET.slice(0, 7))
  })

  it('crictl configs too', async () => {
    const pod = join(dir, 'pod-config.json')
    const container = join(dir, 'container-config.json')
    writeFileSync(pod, `TOKEN=${SECRET}\n`)
    writeFileSync(container, '{}')
    const error = await loadCrictlConfigs(pod, container).catch((error_: unknown) => error_ as Error)
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toBe(
      `${pod}: is not a Kubernetes manifest: the document is text, not an object with apiVersion and kind`,
    )
  })
})

describe('run -f DIR reads the names a watched directory reads', () => {
  it('its .yaml, .yml and .json files, sorted; never hidden files, backups or swap files', async () => {
    const manifests = mkdtempSync(join(tmpdir(), 'podctl-load-dir-'))
    const pod = (name: string) =>
      `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  containers: [{name: app, image: busybox}]\n`
    writeFileSync(join(manifests, 'web.yaml'), pod('web'))
    writeFileSync(
      join(manifests, 'db.json'),
      JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {name: 'db'}, spec: {containers: [{name: 'c', image: 'busybox'}]}}),
    )
    for (const copy of ['.web.yaml', 'web.yaml~', 'web.yaml.bak', '#web.yaml#', '.web.yaml.swp'])
      writeFileSync(join(manifests, copy), pod('copy'))
    expect((await loadPodManifest(manifests)).map((pod_) => pod_.name)).toEqual(['db', 'web'])
  })
})
