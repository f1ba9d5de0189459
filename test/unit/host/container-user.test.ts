import {mkdirSync, mkdtempSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {ContainerRoot} from '../../../src/lib/host/container-root.js'
import {parseGroup, parsePasswd, resolveContainerUser, userNames} from '../../../src/lib/host/container-user.js'

// Debian's own lines, and a malformed one getpwent skips.
const PASSWD = [
  'root:x:0:0:root:/root:/bin/bash',
  'daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin',
  'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin',
  'broken:x:abc:1::/:/bin/sh',
  'app:x:1234:1234:app:/home/app:/sbin/nologin',
  '',
].join('\n')
const GROUP = ['root:x:0:', 'daemon:x:1:', 'staff:x:50:', 'nogroup:x:65534:', 'app:x:1234:'].join('\n')

function rootWith(files: Record<string, string>): ContainerRoot {
  const dir = mkdtempSync(join(tmpdir(), 'podctl-user-'))
  mkdirSync(join(dir, 'etc'))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return ContainerRoot.open(dir, 'main (abc)')
}

describe('container user databases', () => {
  it('parses passwd and group lines, skipping malformed ones', () => {
    expect(parsePasswd(PASSWD).map((entry) => entry.name)).toEqual(['root', 'daemon', 'nobody', 'app'])
    expect(parsePasswd(PASSWD)[3]).toEqual({name: 'app', uid: 1234, gid: 1234, home: '/home/app'})
    expect(parseGroup(GROUP).get('staff')).toBe(50)
  })
})

describe('resolveContainerUser', () => {
  it('takes UID[:GID] as given, with the entry group and home when the uid has an entry', () => {
    using root = rootWith({'etc/passwd': PASSWD, 'etc/group': GROUP})
    expect(resolveContainerUser('1234:1234', root)).toEqual({uid: 1234, gid: 1234, home: '/home/app', name: 'app'})
    expect(resolveContainerUser('1234', root)).toEqual({uid: 1234, gid: 1234, home: '/home/app', name: 'app'})
    expect(resolveContainerUser('4321', root)).toEqual({uid: 4321, gid: 0, home: '/'})
    expect(resolveContainerUser('4321:77', root)).toEqual({uid: 4321, gid: 77, home: '/'})
  })

  it('looks names up in the container’s own /etc/passwd and /etc/group', () => {
    using root = rootWith({'etc/passwd': PASSWD, 'etc/group': GROUP})
    expect(resolveContainerUser('nobody', root)).toEqual({uid: 65_534, gid: 65_534, home: '/nonexistent', name: 'nobody'})
    expect(resolveContainerUser('daemon:staff', root)).toMatchObject({uid: 1, gid: 50})
    expect(userNames(root)(1234)).toBe('app')
    expect(userNames(root)(999)).toBe('999')
  })

  it('refuses bad input with a usage error naming the flag and the fix', () => {
    using root = rootWith({'etc/passwd': PASSWD, 'etc/group': GROUP})
    const usage = (spec: string) => {
      try {
        resolveContainerUser(spec, root)
      } catch (error) {
        return [(error as {exitCode: number}).exitCode, (error as Error).message]
      }

      return 'accepted'
    }

    expect(usage('ghost')).toEqual([2, '--user ghost: no such user in /etc/passwd of container main (abc); give a numeric UID instead'])
    expect(usage('app:ghosts')).toEqual([
      2,
      '--user …:ghosts: no such group in /etc/group of container main (abc); give a numeric GID instead',
    ])
    expect(usage('1:2:3')).toEqual([2, '--user "1:2:3": expected UID[:GID] or NAME[:GROUP] (e.g. 1000:1000 or nobody)'])
    expect(usage(':5')).toEqual([2, '--user ":5": expected UID[:GID] or NAME[:GROUP] (e.g. 1000:1000 or nobody)'])
    expect(usage('99999999999')).toEqual([2, '--user 99999999999: an ID must be between 0 and 4294967294'])
  })

  it('works without any database (a static image): numbers only', () => {
    using root = rootWith({})
    expect(resolveContainerUser('1234:1234', root)).toEqual({uid: 1234, gid: 1234, home: '/'})
    expect(() => resolveContainerUser('app', root)).toThrow(/no such user/)
  })

  it('never reads the host’s /etc/passwd through a symlink', () => {
    const dir = mkdtempSync(join(tmpdir(), 'podctl-user-'))
    mkdirSync(join(dir, 'etc'))
    symlinkSync('../../../../../../etc/passwd', join(dir, 'etc/passwd'))
    using root = ContainerRoot.open(dir, 'main (abc)')
    expect(() => resolveContainerUser('root', root)).toThrow(/symlink that leads out of the container's root/)
  })
})
