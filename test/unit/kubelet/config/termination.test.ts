import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {recordDesiredPod} from '../../../../src/lib/kubelet/config/desired-state.js'
import {recordTermination, terminatingPods} from '../../../../src/lib/kubelet/config/termination.js'
import {readTermination, terminationPath} from '../../../../src/lib/kubelet/config/termination-record.js'
import type {PodModel} from '../../../../src/lib/manifest/model.js'

const THIS = 'unix:///run/podctl-test/this.sock'
const OTHER = 'unix:///run/podctl-test/other.sock'

function pod(name: string, uid: string): PodModel {
  return {name, namespace: 'shop', uid, containers: [], initContainers: [], volumes: []} as unknown as PodModel
}

const at = (requestedBy: string, extra = {}) => ({requestedAt: '2026-12-07T03:00:00.000Z', requestedBy, ...extra})

describe('a recorded termination', () => {
  it('is recorded only for a pod podctl recorded for this runtime (or for none), never for another runtime or no record', async () => {
    const root = mkdtempSync(join(tmpdir(), 'podctl-termination-'))
    await recordDesiredPod(root, pod('mine', 'u-mine'), THIS)
    await recordDesiredPod(root, pod('theirs', 'u-theirs'), OTHER)
    await recordDesiredPod(root, pod('legacy', 'u-legacy'))
    expect(await recordTermination(root, 'u-mine', THIS, at('podctl kill'))).toBe(true)
    expect(await recordTermination(root, 'u-legacy', THIS, at('podctl kill'))).toBe(true)
    expect(await recordTermination(root, 'u-theirs', THIS, at('podctl kill'))).toBe(false)
    expect(await recordTermination(root, 'u-none', THIS, at('podctl kill'))).toBe(false)
    expect(readTermination(root, 'u-mine')).toEqual(at('podctl kill'))
    expect(readTermination(root, 'u-theirs')).toBeUndefined()
    expect((await terminatingPods(root, THIS)).map((recorded) => recorded.name).sort()).toEqual(['legacy', 'mine'])
  })

  it('keeps the first request; a later one only shortens its grace period or forces it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'podctl-termination-'))
    await recordDesiredPod(root, pod('web', 'u-web'), THIS)
    await recordTermination(root, 'u-web', THIS, at('its manifest was removed', {gracePeriodSeconds: 30}))
    await recordTermination(root, 'u-web', THIS, {...at('podctl kill', {gracePeriodSeconds: 60}), requestedAt: 'later'})
    expect(readTermination(root, 'u-web')).toEqual(at('its manifest was removed', {gracePeriodSeconds: 30}))
    await recordTermination(root, 'u-web', THIS, at('podctl kill', {gracePeriodSeconds: 5}))
    expect(readTermination(root, 'u-web')).toEqual(at('its manifest was removed', {gracePeriodSeconds: 5}))
    await recordTermination(root, 'u-web', THIS, at('podctl kill --force', {force: true}))
    expect(readTermination(root, 'u-web')).toEqual(at('its manifest was removed', {gracePeriodSeconds: 5, force: true}))
  })

  it('a record that is not JSON (a torn write) still asks for the termination', () => {
    const root = mkdtempSync(join(tmpdir(), 'podctl-termination-'))
    mkdirSync(join(root, 'u-torn'))
    writeFileSync(terminationPath(root, 'u-torn'), '{"requestedAt": "2026-')
    expect(readTermination(root, 'u-torn')).toEqual({requestedAt: '', requestedBy: 'podctl'})
    expect(readTermination(root, 'u-absent')).toBeUndefined()
  })
})
