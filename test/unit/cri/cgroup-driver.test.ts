import {describe, expect, it} from 'vitest'

import {cgroupDriverFromContainerdInfo, runtimeCgroupDriver} from '../../../src/lib/cri/cgroup-driver.js'
import type {CriClient} from '../../../src/lib/cri/client.js'
import {UnimplementedError} from '../../../src/lib/errors.js'

/** containerd 1.6's verbose Status `config`, abridged to what the driver is read from. */
function containerdInfo(systemd: boolean | undefined, defaultRuntimeName = 'runc'): Record<string, string> {
  const options = systemd === undefined ? null : {Root: '/run/runc', SystemdCgroup: systemd}
  return {config: JSON.stringify({containerd: {defaultRuntimeName, runtimes: {runc: {runtimeType: 'io.containerd.runc.v2', options}}}})}
}

/** A client whose RuntimeConfig and Status answer as given; counts the calls. */
function client(endpoint: string, answers: {runtimeConfig?: unknown; info?: Record<string, string>}) {
  const calls: string[] = []
  const fake = {
    runtimeEndpoint: endpoint,
    async runtimeOptional(method: string) {
      calls.push(method)
      return answers.runtimeConfig
    },
    async runtime(method: string) {
      calls.push(method)
      if (answers.info === undefined) throw new UnimplementedError('no')
      return {info: answers.info}
    },
  }
  return {client: fake as unknown as CriClient, calls}
}

describe("the runtime's cgroup driver", () => {
  it('is what RuntimeConfig says (containerd 2.x, CRI-O 1.28+), asked once a few minutes per endpoint', async () => {
    const {client: systemd, calls} = client('unix:///a.sock', {runtimeConfig: {linux: {cgroupDriver: 'SYSTEMD'}}})
    expect(await runtimeCgroupDriver(systemd, 1000)).toBe('systemd')
    expect(await runtimeCgroupDriver(systemd, 2000)).toBe('systemd')
    expect(calls).toEqual(['runtimeConfig'])
    expect(await runtimeCgroupDriver(systemd, 1000 + 6 * 60_000)).toBe('systemd')
    expect(calls).toEqual(['runtimeConfig', 'runtimeConfig'])
    const {client: cgroupfs} = client('unix:///b.sock', {runtimeConfig: {linux: {cgroupDriver: 'CGROUPFS'}}})
    expect(await runtimeCgroupDriver(cgroupfs)).toBe('cgroupfs')
  })

  it("falls back on containerd 1.x's SystemdCgroup option of its default runtime", async () => {
    expect(await runtimeCgroupDriver(client('unix:///c.sock', {info: containerdInfo(false)}).client)).toBe('cgroupfs')
    expect(await runtimeCgroupDriver(client('unix:///d.sock', {info: containerdInfo(true)}).client)).toBe('systemd')
    expect(cgroupDriverFromContainerdInfo(containerdInfo(undefined))).toBe('cgroupfs')
    expect(cgroupDriverFromContainerdInfo(containerdInfo(true, 'kata'))).toBeUndefined()
    expect(cgroupDriverFromContainerdInfo({config: '{'})).toBeUndefined()
  })

  it('is undefined, and asked again next time, when nothing says', async () => {
    const {client: silent, calls} = client('unix:///nowhere.sock', {})
    expect(await runtimeCgroupDriver(silent)).toBeUndefined()
    expect(await runtimeCgroupDriver(silent)).toBeUndefined()
    expect(calls).toEqual(['runtimeConfig', 'status', 'runtimeConfig', 'status'])
  })
})
