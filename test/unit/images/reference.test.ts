import {describe, expect, test} from 'vitest'

import {ExitCode} from '../../../src/lib/errors.js'
import {applyDefaultImageTag, defaultPullPolicy, parseImageName} from '../../../src/lib/images/reference.js'
import {InvalidImageNameError} from '../../../src/lib/images/errors.js'

const SHA = `sha256:${'0123456789abcdef'.repeat(4)}`

describe('applyDefaultImageTag', () => {
  test.each([
    ['busybox', 'busybox:latest'],
    ['busybox:1.36', 'busybox:1.36'],
    ['busybox:latest', 'busybox:latest'],
    ['library/busybox', 'library/busybox:latest'],
    ['docker.io/library/busybox', 'docker.io/library/busybox:latest'],
    ['localhost:5000/podctl/busybox', 'localhost:5000/podctl/busybox:latest'],
    ['localhost:5000/podctl/busybox:1.36', 'localhost:5000/podctl/busybox:1.36'],
    ['localhost/app', 'localhost/app:latest'],
    ['registry.example.com:8443/team/app', 'registry.example.com:8443/team/app:latest'],
    ['[::1]:5000/app', '[::1]:5000/app:latest'],
    [`busybox@${SHA}`, `busybox@${SHA}`],
    [`busybox:1.36@${SHA}`, `busybox:1.36@${SHA}`],
    ['a__b/c-d.e/f--g:V1_x.y-z', 'a__b/c-d.e/f--g:V1_x.y-z'],
    // No tag on a bare "host:port": the reference grammar reads it as repository "localhost" with tag "5000".
    ['localhost:5000', 'localhost:5000'],
  ])('%s → %s', (image, expected) => {
    expect(applyDefaultImageTag(image)).toBe(expected)
  })

  test.each([
    ['Busybox', 'invalid reference format: repository name (library/Busybox) must be lowercase'],
    ['localhost:5000/Podctl/busybox', 'invalid reference format: repository name (Podctl/busybox) must be lowercase'],
    // ParseNormalizedNamed prefixes docker.io/library/ first, so an empty name is a format error, not "empty".
    ['', 'invalid reference format'],
    ['busybox:', 'invalid reference format'],
    ['busybox:-bad', 'invalid reference format'],
    [`busybox:${'a'.repeat(129)}`, 'invalid reference format'],
    ['busy box', 'invalid reference format'],
    ['busybox/', 'invalid reference format'],
    ['-busybox', 'invalid reference format'],
    ['busybox@sha256:abc', 'invalid reference format'],
    [`busybox@md5:${'a'.repeat(32)}`, 'unsupported digest algorithm'],
    [`busybox@sha256:${'a'.repeat(63)}b0`, 'invalid checksum digest length'],
    [`busybox@sha256:${'A'.repeat(64)}`, 'invalid checksum digest format'],
    ['0123456789abcdef'.repeat(4), `invalid repository name (${'0123456789abcdef'.repeat(4)}), cannot specify 64-byte hexadecimal strings`],
    [`registry.example.com/${'a'.repeat(240)}`, 'repository name must not be more than 255 characters'],
  ])('%j is InvalidImageName: %s', (image, why) => {
    let error: unknown
    try {
      applyDefaultImageTag(image)
    } catch (error_) {
      error = error_
    }

    expect(error).toBeInstanceOf(InvalidImageNameError)
    const failure = error as InvalidImageNameError
    expect(failure.code).toBe('InvalidImageName')
    expect(failure.exitCode).toBe(ExitCode.INVALID_IMAGE_NAME)
    expect(failure.image).toBe(image)
    expect(failure.message).toBe(
      `Failed to apply default image tag ${JSON.stringify(image)}: couldn't parse image name ${JSON.stringify(image)}: ${why}`,
    )
  })
})

describe('parseImageName', () => {
  test('splits domain, path, tag and digest the way ParseNormalizedNamed does', () => {
    expect(parseImageName('busybox')).toMatchObject({domain: 'docker.io', path: 'library/busybox', tag: undefined, defaultedTag: 'latest'})
    expect(parseImageName('index.docker.io/foo/bar:1')).toMatchObject({domain: 'docker.io', path: 'foo/bar', tag: '1'})
    expect(parseImageName('localhost:5000/podctl/busybox:1.36')).toMatchObject({
      name: 'localhost:5000/podctl/busybox',
      domain: 'localhost:5000',
      path: 'podctl/busybox',
      tag: '1.36',
    })
    expect(parseImageName(`quay.io/app@${SHA}`)).toMatchObject({domain: 'quay.io', digest: SHA, defaultedTag: ''})
  })
})

describe('defaultPullPolicy (SetDefaults_Container)', () => {
  test.each([
    ['busybox', 'Always'],
    ['busybox:latest', 'Always'],
    [`busybox:latest@${SHA}`, 'Always'],
    ['localhost:5000/app', 'Always'],
    ['busybox:1.36', 'IfNotPresent'],
    [`busybox@${SHA}`, 'IfNotPresent'],
    ['Not A Valid Name', 'IfNotPresent'],
  ])('%s → %s', (image, policy) => {
    expect(defaultPullPolicy(image)).toBe(policy)
  })
})
