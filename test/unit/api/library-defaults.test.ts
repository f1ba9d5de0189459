import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {LIBRARY_GRACE_PERIOD_SECONDS, LIBRARY_SETTLE_MS, withDefaultGrace} from '../../../src/lib/api/library-defaults.js'
import {loadManifestInput} from '../../../src/lib/api/manifest-input.js'

const work = mkdtempSync(join(tmpdir(), 'podctl-library-defaults-'))
const claimsRoot = join(work, 'claims')
afterAll(() => rmSync(work, {recursive: true, force: true}))

describe("the library's defaults for tests", () => {
  it('gives pods whose manifest sets no grace period 2 s, and keeps the grace period a manifest sets', async () => {
    const pod = (name: string, grace?: number) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name},
      spec: {terminationGracePeriodSeconds: grace, containers: [{name: 'app', image: 'busybox:1.36'}]},
    })
    const {pods} = await loadManifestInput([pod('unset'), pod('seven', 7), pod('zero', 0)], {claimsRoot})
    expect(withDefaultGrace(pods, LIBRARY_GRACE_PERIOD_SECONDS).map((pod) => pod.terminationGracePeriodSeconds)).toEqual([2, 7, 0])
    expect(pods.map((pod) => pod.terminationGracePeriodSeconds)).toEqual([undefined, 7, 0])
  })

  it('settles for 0 ms after the last start', () => {
    expect(LIBRARY_SETTLE_MS).toBe(0)
  })
})
