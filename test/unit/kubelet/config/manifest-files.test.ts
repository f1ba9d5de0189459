import {describe, expect, it} from 'vitest'

import {type ManifestFile, ParsedFiles, readManifestFiles} from '../../../../src/lib/kubelet/config/manifest-files.js'
import {labelledDocuments} from '../../../../src/lib/manifest/load.js'

const options = {claimsRoot: '/var/lib/podctl/claims', newUid: () => 'uid-1'}

const pod = (name: string, extra = '') => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: shop}
spec:
  containers:
  - name: app
    image: busybox:1.36
${extra}`

const configMap = (name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: shop}\ndata: {greeting: ${value}}\n`

const envFrom = '    env: [{name: G, valueFrom: {configMapKeyRef: {name: cfg, key: greeting}}}]\n'

describe('readManifestFiles: the pods of a watched directory, file by file', () => {
  it('gives each file its pods; an object-only file feeds the pods of its directory, and its digest is theirs', async () => {
    const readings = await readManifestFiles(
      [
        {path: '/m/web.yaml', text: pod('web', envFrom)},
        {path: '/m/cfg.yaml', text: configMap('cfg', 'hello')},
      ],
      options,
    )
    expect(readings.map((reading) => [reading.path, reading.error, reading.pods?.map((p) => p.name)])).toEqual([
      ['/m/web.yaml', undefined, ['web']],
      ['/m/cfg.yaml', undefined, []],
    ])
    expect(readings[0].pods![0].objects?.configMap('shop', 'cfg')?.data).toEqual({greeting: 'hello'})
    const changed = await readManifestFiles(
      [
        {path: '/m/web.yaml', text: pod('web', envFrom)},
        {path: '/m/cfg.yaml', text: configMap('cfg', 'bye')},
      ],
      options,
    )
    expect(changed[0].digest).toBe(readings[0].digest)
    expect(changed[0].feedDigest).not.toBe(readings[0].feedDigest)
  })

  it('a broken file gets its one error naming it; the other files stand', async () => {
    const readings = await readManifestFiles(
      [
        {path: '/m/bad.yaml', text: 'kind: Pod\nspec: [\n'},
        {path: '/m/typo.yaml', text: pod('typo').replace('image:', 'imagee:')},
        {path: '/m/ok.yaml', text: pod('ok')},
      ],
      options,
    )
    expect(readings[0].error).toMatch(/^\/m\/bad\.yaml: line \d+, column \d+: /)
    expect(readings[1].error).toContain('/m/typo.yaml')
    expect(readings[1].error).toContain('imagee')
    expect(readings[2].error).toBeUndefined()
    expect(readings[2].pods?.map((p) => p.name)).toEqual(['ok'])
  })

  it('a pod whose ConfigMap is in no file of its directory is refused; another directory does not feed it', async () => {
    const readings = await readManifestFiles(
      [
        {path: '/a/web.yaml', text: pod('web', envFrom)},
        {path: '/b/cfg.yaml', text: configMap('cfg', 'hello')},
      ],
      options,
    )
    expect(readings[0].error).toContain('cfg')
    expect(readings[1].error).toBeUndefined()
  })

  it('objects not run are said by their own file once, not by every pod file beside them', async () => {
    const service = 'apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80}]}\n'
    const readings = await readManifestFiles(
      [
        {path: '/m/svc.yaml', text: `${service}---\n${configMap('cfg', 'x')}`},
        {path: '/m/web.yaml', text: pod('web', envFrom)},
      ],
      options,
    )
    expect(readings[0].warnings.join('\n')).toContain('Service/shop/web')
    expect(readings[1].warnings.join('\n')).not.toContain('Service')
  })
})

describe('ParsedFiles: a file that did not change is not parsed again', () => {
  it('parses each content once, hands out copies, and forgets files no longer read', async () => {
    const parsed: string[] = []
    const cache = new ParsedFiles(async (file: ManifestFile) => {
      parsed.push(file.path)
      return labelledDocuments(file.text, file.path)
    })
    const web = {path: '/m/web.yaml', text: pod('web')}
    const cfg = {path: '/m/cfg.yaml', text: configMap('cfg', 'hello')}
    const first = await readManifestFiles([web, cfg], options, cache)
    const again = await readManifestFiles([web, cfg], options, cache)
    expect(again).toEqual(first)
    expect(parsed).toEqual(['/m/web.yaml', '/m/cfg.yaml'])

    // A copy each time: what a reader does to one never reaches the next.
    const copy = (await cache.documentsOf(web)) as unknown as Array<{document: {metadata: {name: string}}}>
    copy[0].document.metadata.name = 'changed'
    expect(((await cache.documentsOf(web)) as unknown as typeof copy)[0].document.metadata.name).toBe('web')

    await readManifestFiles([web, {...cfg, text: configMap('cfg', 'bye')}], options, cache)
    await readManifestFiles([web], options, cache)
    await readManifestFiles([web, cfg], options, cache)
    expect(parsed).toEqual(['/m/web.yaml', '/m/cfg.yaml', '/m/cfg.yaml', '/m/cfg.yaml'])
  })
})
