import {describe, expect, it} from 'vitest'

import {normalizeEndpoint, planEndpoints} from '../../../src/lib/cri/endpoint.js'
import {UsageError} from '../../../src/lib/errors.js'

const config = {path: '/etc/crictl.yaml', runtimeEndpoint: 'unix:///from/config.sock', imageEndpoint: 'unix:///img/config.sock'}

describe('planEndpoints: first match wins', () => {
  it('prefers the flag over the environment and the config file', () => {
    const plan = planEndpoints({
      runtimeFlag: 'unix:///flag.sock',
      env: {CONTAINER_RUNTIME_ENDPOINT: 'unix:///env.sock'},
      config,
    })
    expect(plan.runtime).toEqual({endpoint: 'unix:///flag.sock', source: 'flag'})
  })

  it('uses CONTAINER_RUNTIME_ENDPOINT before the config file', () => {
    const plan = planEndpoints({env: {CONTAINER_RUNTIME_ENDPOINT: '/run/env.sock'}, config})
    expect(plan.runtime).toEqual({endpoint: 'unix:///run/env.sock', source: 'env'})
  })

  it('falls back to the config file, then leaves the runtime to probing', () => {
    expect(planEndpoints({env: {}, config}).runtime).toEqual({endpoint: 'unix:///from/config.sock', source: 'config'})
    expect(planEndpoints({env: {}}).runtime).toBeUndefined()
  })

  it('resolves the image endpoint on its own ladder and leaves it undefined to follow the runtime', () => {
    expect(planEndpoints({env: {IMAGE_SERVICE_ENDPOINT: 'unix:///img.sock'}, config}).image).toEqual({
      endpoint: 'unix:///img.sock',
      source: 'env',
    })
    expect(planEndpoints({imageFlag: '/i.sock', env: {IMAGE_SERVICE_ENDPOINT: 'unix:///img.sock'}}).image?.source).toBe('flag')
    expect(planEndpoints({env: {}, config: {path: 'x'}}).image).toBeUndefined()
  })

  it('ignores empty values', () => {
    expect(planEndpoints({runtimeFlag: '', env: {CONTAINER_RUNTIME_ENDPOINT: '  '}, config}).runtime?.source).toBe('config')
  })
})

describe('normalizeEndpoint', () => {
  it.each([
    ['unix:///run/containerd/containerd.sock', 'unix:///run/containerd/containerd.sock'],
    ['/run/crio/crio.sock', 'unix:///run/crio/crio.sock'],
    ['unix:/run/x.sock', 'unix:///run/x.sock'],
    ['unix:////run/x.sock', 'unix:///run/x.sock'],
  ])('%s → %s', (input, expected) => {
    expect(normalizeEndpoint(input)).toBe(expected)
  })

  it('refuses tcp and relative paths with a usage error naming the source', () => {
    expect(() => normalizeEndpoint('tcp://10.0.0.1:1234', '--runtime-endpoint')).toThrow(UsageError)
    expect(() => normalizeEndpoint('run/x.sock', '--runtime-endpoint')).toThrow(/--runtime-endpoint: unsupported endpoint "run\/x.sock"/)
  })
})
