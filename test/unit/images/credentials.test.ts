import {mkdir, mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it, test} from 'vitest'

import {UsageError} from '../../../src/lib/errors.js'
import {checkCredentialArgv} from '../../../src/lib/flags.js'
import {
  credentialsFromFlags,
  decodeAuth,
  DockerConfigKeyring,
  dockerConfigPaths,
  namesRegistryHost,
  parseDockerConfig,
  parseRegistryKey,
  registryKeyMatches,
} from '../../../src/lib/images/credentials.js'
import {parseImageName} from '../../../src/lib/images/reference.js'

const b64 = (text: string) => Buffer.from(text).toString('base64')

describe('parseRegistryKey', () => {
  test.each([
    ['https://index.docker.io/v1/', {host: 'docker.io', port: '', path: ''}],
    ['index.docker.io', {host: 'docker.io', port: '', path: ''}],
    ['docker.io', {host: 'docker.io', port: '', path: ''}],
    ['registry-1.docker.io', {host: 'docker.io', port: '', path: ''}],
    ['localhost:5000', {host: 'localhost', port: '5000', path: ''}],
    ['http://localhost:5000/v2/', {host: 'localhost', port: '5000', path: ''}],
    ['Registry.Example.com/team/', {host: 'registry.example.com', port: '', path: 'team'}],
    ['*.example.com', {host: '*.example.com', port: '', path: ''}],
  ])('%s', (key, parsed) => {
    expect(parseRegistryKey(key)).toEqual(parsed)
  })
})

describe('registryKeyMatches (the kubelet keyring rules)', () => {
  const matches = (key: string, image: string) => registryKeyMatches(parseRegistryKey(key), parseImageName(image))
  test('Docker Hub aliases all match short names', () => {
    expect(matches('https://index.docker.io/v1/', 'busybox')).toBe(true)
    expect(matches('docker.io', 'library/busybox:1.36')).toBe(true)
    expect(matches('index.docker.io', 'docker.io/alice/app')).toBe(true)
    expect(matches('quay.io', 'busybox')).toBe(false)
  })

  test('host and port must both match', () => {
    expect(matches('localhost:5000', 'localhost:5000/podctl/busybox:1.36')).toBe(true)
    expect(matches('localhost:5001', 'localhost:5000/podctl/busybox:1.36')).toBe(false)
    expect(matches('localhost', 'localhost:5000/podctl/busybox:1.36')).toBe(false)
    expect(matches('example.com', 'registry.example.com/app')).toBe(false)
  })

  test('a path in the key limits it to repositories below it', () => {
    expect(matches('registry.example.com/team', 'registry.example.com/team/app:v1')).toBe(true)
    expect(matches('registry.example.com/team', 'registry.example.com/teamwork/app:v1')).toBe(false)
    expect(matches('registry.example.com/team', 'registry.example.com/other/app:v1')).toBe(false)
  })

  test('globs match one host label each', () => {
    expect(matches('*.example.com', 'registry.example.com/app')).toBe(true)
    expect(matches('*.example.com', 'a.b.example.com/app')).toBe(false)
  })
})

describe('parseDockerConfig', () => {
  test('config.json "auths": auth is decoded into username/password; entries without credentials are skipped', () => {
    const file = parseDockerConfig(
      JSON.stringify({
        auths: {
          'localhost:5000': {auth: b64('alice:s3cret:with:colons')},
          'quay.io': {username: 'bob', password: 'pw'},
          'ghcr.io': {},
          'gcr.io': {identitytoken: 'tok'},
        },
        credsStore: 'desktop',
      }),
      '/x/config.json',
    )
    expect(file.entries).toEqual([
      {key: 'localhost:5000', auth: {username: 'alice', password: 's3cret:with:colons'}},
      {key: 'quay.io', auth: {username: 'bob', password: 'pw'}},
      {key: 'gcr.io', auth: {identityToken: 'tok'}},
    ])
  })

  test('sends no serverAddress, as the kubelet: containerd 1.6 cannot parse a bare "host:port" and then drops the credentials', () => {
    const file = parseDockerConfig(
      JSON.stringify({auths: {'localhost:5099': {auth: b64('u:p')}, 'https://index.docker.io/v1/': {auth: b64('v:q')}}}),
      '/x',
    )
    for (const entry of file.entries) expect(entry.auth).not.toHaveProperty('serverAddress')
  })

  test('legacy .dockercfg is the map itself', () => {
    const file = parseDockerConfig(JSON.stringify({'https://index.docker.io/v1/': {auth: b64('u:p'), email: 'u@x'}}), '/x/.dockercfg')
    expect(file.entries).toEqual([{key: 'https://index.docker.io/v1/', auth: {username: 'u', password: 'p'}}])
  })

  test('a broken file is a usage error naming the file and never echoing its content', () => {
    const secret = '{"auths": {"x": {"auth": "c2VjcmV0OnBhc3N3b3Jk"'
    expect(() => parseDockerConfig(secret, '/home/u/.docker/config.json')).toThrow(UsageError)
    try {
      parseDockerConfig(secret, '/home/u/.docker/config.json')
    } catch (error) {
      expect((error as Error).message).toContain('/home/u/.docker/config.json')
      expect((error as Error).message).not.toContain('c2VjcmV0')
    }

    const badAuth = JSON.stringify({auths: {'localhost:5000': {auth: 'bm9jb2xvbg=='}}})
    expect(() => parseDockerConfig(badAuth, '/f')).toThrow(/"auth" of registry "localhost:5000" is not base64 of USER:PASSWORD/)
  })
})

describe('dockerConfigPaths', () => {
  test('$DOCKER_CONFIG first, then ~/.docker, the kubelet file, legacy ~/.dockercfg', () => {
    expect(dockerConfigPaths({DOCKER_CONFIG: '/etc/dc'}, '/home/u')).toEqual([
      '/etc/dc/config.json',
      '/home/u/.docker/config.json',
      '/var/lib/kubelet/config.json',
      '/home/u/.dockercfg',
    ])
    expect(dockerConfigPaths({}, '/home/u')[0]).toBe('/home/u/.docker/config.json')
  })
})

describe('DockerConfigKeyring', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'podctl-creds-'))
    await mkdir(join(dir, 'a'))
    await writeFile(
      join(dir, 'a', 'config.json'),
      JSON.stringify({auths: {'registry.example.com': {auth: b64('host:1')}, 'registry.example.com/team': {auth: b64('team:2')}}}),
    )
    await writeFile(
      join(dir, 'b.json'),
      JSON.stringify({auths: {'https://registry.example.com/v1/': {auth: b64('host:1')}, 'localhost:5000': {auth: b64('local:3')}}}),
    )
  })
  afterAll(async () => {
    await rm(dir, {recursive: true, force: true})
  })

  test('most specific key first, then file order; duplicates and absent files are skipped', async () => {
    const keyring = new DockerConfigKeyring([join(dir, 'missing.json'), join(dir, 'a', 'config.json'), join(dir, 'b.json')])
    const found = await keyring.lookup(parseImageName('registry.example.com/team/app:v1'))
    expect(found.map((c) => c.auth.username)).toEqual(['team', 'host'])
    expect(found[0].source).toBe(`${join(dir, 'a', 'config.json')} (registry.example.com/team)`)
    expect((await keyring.lookup(parseImageName('localhost:5000/podctl/busybox:1.36'))).map((c) => c.auth.username)).toEqual(['local'])
    expect(await keyring.lookup(parseImageName('busybox'))).toEqual([])
  })
})

describe('credentialsFromFlags', () => {
  test('--creds USER:PASSWORD splits at the first colon', async () => {
    expect(await credentialsFromFlags({creds: 'alice:pa:ss'})).toEqual({auth: {username: 'alice', password: 'pa:ss'}, source: '--creds'})
  })

  test('--creds USER asks on a terminal, refuses without one', async () => {
    const asked: string[] = []
    const prompt = async (question: string) => {
      asked.push(question)
      return 'typed'
    }

    expect(await credentialsFromFlags({creds: 'alice'}, {isTTY: true, prompt})).toEqual({
      auth: {username: 'alice', password: 'typed'},
      source: '--creds',
    })
    expect(asked).toEqual(['Password for alice: '])
    await expect(credentialsFromFlags({creds: 'alice'}, {isTTY: false, prompt})).rejects.toThrow(/stdin is not a terminal/)
  })

  test('--auth must be base64 of USER:PASSWORD and is passed through as "auth"', async () => {
    expect(await credentialsFromFlags({auth: b64('u:p')})).toEqual({auth: {auth: b64('u:p')}, source: '--auth'})
    await expect(credentialsFromFlags({auth: 'not base64!'})).rejects.toThrow(UsageError)
    await expect(credentialsFromFlags({auth: b64('nocolon')})).rejects.toThrow(/--auth is not base64 of USER:PASSWORD/)
  })

  test('bad input names the flag, never the secret', async () => {
    await expect(credentialsFromFlags({creds: ':hunter2'})).rejects.toThrow(/^--creds has an empty username/)
    await credentialsFromFlags({creds: ':hunter2'}).catch((error: Error) => expect(error.message).not.toContain('hunter2'))
    await expect(credentialsFromFlags({creds: 'a:b', auth: b64('u:p')})).rejects.toThrow(/pass only one/)
  })

  test('neither flag → undefined (the docker config lookup applies)', async () => {
    expect(await credentialsFromFlags({})).toBeUndefined()
    expect(decodeAuth(b64('user:'))).toEqual({username: 'user', password: ''})
  })
})

describe('checkCredentialArgv', () => {
  const check = (argv: string[]) => () => checkCredentialArgv(argv, namesRegistryHost, 'an image with a registry host')

  it('lets well-formed command lines through', () => {
    expect(check(['--creds', 'a:b', 'localhost:5000/app'])).not.toThrow()
    expect(check(['busybox', '--creds', 'a:b'])).not.toThrow()
    expect(check(['--creds=a:b', '--policy', 'Always', 'busybox'])).not.toThrow()
    expect(check(['--', '-creds'])).not.toThrow()
    expect(check(['--creds'])).not.toThrow()
  })

  it('refuses one-dash credential flags and a bare word after the value, quoting neither', () => {
    expect(check(['-creds', 'a:pw'])).toThrow(/^-creds has one dash/)
    expect(check(['--creds', 'a:p', 'w', 'localhost:5000/app'])).toThrow(/after the --creds value/)
    for (const argv of [
      ['-creds', 'a:pw'],
      ['--creds', 'a:p', 'w'],
    ]) {
      try {
        check(argv)()
      } catch (error) {
        expect((error as Error).message).not.toMatch(/a:p|\bw\b.*not shown/)
      }
    }
  })

  it('knows a reference that names its registry', () => {
    expect(['localhost:5000/a', 'registry.example.com/team/app:v1', 'localhost/a'].every(namesRegistryHost)).toBe(true)
    expect(['busybox', 'library/busybox', 'pw', 'a:b'].some(namesRegistryHost)).toBe(false)
  })
})
