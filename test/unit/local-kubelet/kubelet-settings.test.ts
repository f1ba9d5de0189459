import {mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {kubeletSettings, parseFlags} from '../../../src/lib/local-kubelet/kubelet-settings.js'
import {processesNamed} from '../../../src/lib/local-kubelet/processes.js'
import {parsePeerInodes} from '../../../src/lib/local-kubelet/socket-peers.js'

const scratch = mkdtempSync(join(tmpdir(), 'podctl-kubelet-settings-'))
afterAll(() => rmSync(scratch, {recursive: true, force: true}))

/** A /proc entry as the kernel shows it: comm, cmdline (NUL-separated), stat, root and cwd links. */
function procEntry(proc: string, {pid, comm, argv, state = 'S'}: {pid: number; comm: string; argv: string[]; state?: string}): void {
  const dir = join(proc, String(pid))
  mkdirSync(dir, {recursive: true})
  writeFileSync(join(dir, 'comm'), `${comm}\n`)
  writeFileSync(join(dir, 'cmdline'), `${argv.join('\0')}\0`)
  writeFileSync(join(dir, 'stat'), `${pid} (${comm}) ${state} 1 ${pid} ${pid} 0 -1`)
  symlinkSync('/', join(dir, 'root'))
  symlinkSync('/etc', join(dir, 'cwd'))
}

describe('processesNamed', () => {
  it('finds the live processes with that command name, not zombies, not other names', () => {
    const proc = join(scratch, 'proc')
    procEntry(proc, {pid: 40, comm: 'kubelet', argv: ['/usr/bin/kubelet', '--config=/var/lib/kubelet/config.yaml']})
    procEntry(proc, {pid: 41, comm: 'kubelet', argv: ['kubelet'], state: 'Z'})
    procEntry(proc, {pid: 42, comm: 'containerd', argv: ['containerd']})
    mkdirSync(join(proc, 'self'))
    expect(processesNamed('kubelet', {procRoot: proc})).toEqual([
      {pid: 40, argv: ['/usr/bin/kubelet', '--config=/var/lib/kubelet/config.yaml'], root: '', cwd: '/etc'},
    ])
  })
})

describe('parseFlags', () => {
  it("reads pflag's --name=value and --name value forms, later ones winning", () => {
    const flags = parseFlags(['--config=/a.yaml', '--root-dir', '/data/kubelet', '--fail-swap-on', '--v=2', '--config', '/b.yaml'])
    expect(Object.fromEntries(flags)).toEqual({config: '/b.yaml', 'root-dir': '/data/kubelet', 'fail-swap-on': '', v: '2'})
  })
})

describe('kubeletSettings', () => {
  const kubelet = (argv: string[]) => ({pid: 1, argv: ['/usr/bin/kubelet', ...argv], root: '', cwd: scratch})

  it('takes the endpoint and static pod path from --config (relative to its working directory), flags winning over it', async () => {
    writeFileSync(
      join(scratch, 'config.yaml'),
      'kind: KubeletConfiguration\ncontainerRuntimeEndpoint: unix:///run/crio/crio.sock\nstaticPodPath: /etc/kubernetes/manifests\n',
    )
    expect(await kubeletSettings(kubelet(['--config', 'config.yaml']))).toEqual({
      endpoint: 'unix:///run/crio/crio.sock',
      endpointSource: 'config',
      configFile: 'config.yaml',
      rootDir: '/var/lib/kubelet',
      staticPodPath: '/etc/kubernetes/manifests',
      staticPodSource: 'config',
      nodeName: hostname().toLowerCase(),
      problems: [],
    })
    const flagged = await kubeletSettings(
      kubelet([
        '--config',
        'config.yaml',
        '--container-runtime-endpoint=/run/k.sock',
        '--pod-manifest-path',
        '/srv/pods',
        '--hostname-override=NODE-7',
      ]),
    )
    expect(flagged).toMatchObject({
      endpoint: '/run/k.sock',
      endpointSource: 'flag',
      staticPodPath: '/srv/pods',
      staticPodSource: 'flag',
      nodeName: 'node-7',
    })
  })

  it("falls back to the kubelet's defaults and says what it could not read", async () => {
    expect(await kubeletSettings(kubelet(['--config', '/nonexistent/config.yaml']))).toMatchObject({
      endpoint: 'unix:///run/containerd/containerd.sock',
      endpointSource: 'default',
      staticPodPath: undefined,
      problems: ['its --config /nonexistent/config.yaml cannot be read (ENOENT)'],
    })
    expect((await kubeletSettings(kubelet(['--container-runtime=docker']))).endpoint).toBe('unix:///var/run/dockershim.sock')
  })
})

describe('parsePeerInodes', () => {
  it("takes the peer inodes of the connections accepted on the socket from ss -xnH's lines", () => {
    const output = [
      'u_str ESTAB 0 0 /run/containerd/containerd.sock 9227 * 8784',
      'u_str ESTAB 0 0 /run/containerd/containerd.sock 9230 * 8790',
      'u_str ESTAB 0 0 /run/other.sock 9300 * 8800',
      'u_str LISTEN 0 4096 /run/containerd/containerd.sock 100 * 0',
      '',
    ].join('\n')
    expect([...parsePeerInodes(output, '/run/containerd/containerd.sock')]).toEqual(['8784', '8790'])
  })
})
