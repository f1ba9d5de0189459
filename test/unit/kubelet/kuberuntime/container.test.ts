import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {restartCountFromLogs, verifyRunAsNonRoot} from '../../../../src/lib/kubelet/kuberuntime/container.js'
import {pod, UID} from '../../../support/pod-manifest.js'

describe('runAsNonRoot (verifyRunAsNonRoot)', () => {
  it('refuses root, allows a numeric non-root user, and cannot verify a named one', async () => {
    const model = await pod()
    const c = {...model.containers[1], securityContext: {runAsNonRoot: true}}
    expect(verifyRunAsNonRoot(model, c, {uid: 0})).toBe(
      `container has runAsNonRoot and image will run as root (pod: "web_shop(${UID})", container: sidecar)`,
    )
    expect(verifyRunAsNonRoot(model, c, {uid: 1000})).toBeUndefined()
    expect(verifyRunAsNonRoot(model, c, {username: 'app'})).toMatch(/image has non-numeric user \(app\), cannot verify user is non-root/)
    expect(verifyRunAsNonRoot(model, {...c, securityContext: {runAsNonRoot: true, runAsUser: 5}}, {uid: 0})).toBeUndefined()
    expect(verifyRunAsNonRoot(model, model.containers[1], {uid: 0})).toBeUndefined()
  })
})

describe('restartCountFromLogs', () => {
  it('continues the restart count after the highest N.log (calcRestartCountByLogDir)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'podctl-logs-'))
    expect(await restartCountFromLogs(join(dir, 'missing'))).toBe(0)
    mkdirSync(join(dir, 'app'))
    for (const name of ['0.log', '2.log.20240101-000000', 'notes.txt']) writeFileSync(join(dir, 'app', name), '')
    mkdirSync(join(dir, 'app', '7.log'))
    expect(await restartCountFromLogs(join(dir, 'app'))).toBe(3)
  })
})
