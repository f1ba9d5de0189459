import {mkdtempSync, readdirSync, readlinkSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {containerLogLinkPath, createContainerLogLink} from '../../../../src/lib/kubelet/kuberuntime/container-logs-links.js'

const LONGEST = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`
const id = (digit: string) => digit.repeat(64)

describe('container log links (/var/log/containers)', () => {
  it('are the kubelet’s <pod>_<namespace>_<container>-<id>.log when the name fits', () => {
    expect(containerLogLinkPath('/var/log/containers', {name: 'web', namespace: 'shop'}, 'app', id('1'))).toBe(
      `/var/log/containers/web_shop_app-${id('1')}.log`,
    )
  })

  it('of a pod with a 253-character name cut its name, so every container keeps a link of its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'podctl-links-'))
    const pod = {name: LONGEST, namespace: 'shop'}
    await createContainerLogLink(pod, {name: 'app', id: id('1'), logPath: '/logs/app/0.log'}, dir)
    await createContainerLogLink(pod, {name: 'sidecar', id: id('2'), logPath: '/logs/sidecar/0.log'}, dir)
    const names = readdirSync(dir).sort()
    expect(names).toHaveLength(2)
    for (const name of names) expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255)
    const targets = Object.fromEntries(names.map((name) => [readlinkSync(join(dir, name)), name]))
    expect(targets['/logs/app/0.log']).toMatch(new RegExp(`^a{63}\\.b+.*_shop_app-${id('1')}\\.log$`))
    expect(targets['/logs/sidecar/0.log']).toMatch(new RegExp(`^a{63}\\.b+.*_shop_sidecar-${id('2')}\\.log$`))
  })
})
