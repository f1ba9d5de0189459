import {mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {findRuntimeUnit, serviceOf} from '../../../src/lib/local-kubelet/runtime-unit.js'

/**
 * Fixture trees shaped like /proc (net/unix, PID/fd links, PID/cgroup) and like systemd's unit
 * directories: the lab's own runtime runs outside systemd, so the lookup's other cases live here.
 */
const work = mkdtempSync(join(tmpdir(), 'podctl-runtime-unit-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

const HEADER = 'Num       RefCount Protocol Flags    Type St Inode Path'
const socketLine = (inode: number, path: string, flags = '00010000') =>
  `0000000000000000: 00000002 00000000 ${flags} 0001 01 ${inode} ${path}`

interface Proc {
  pid: number
  cgroup: string
  /** Socket inodes among its file descriptors. */
  sockets: number[]
}

let trees = 0
function host(unix: string[], procs: Proc[], units: Record<string, string> = {}) {
  const root = join(work, String(trees++))
  const procRoot = join(root, 'proc')
  mkdirSync(join(procRoot, 'net'), {recursive: true})
  writeFileSync(join(procRoot, 'net', 'unix'), [HEADER, ...unix, ''].join('\n'))
  for (const {pid, cgroup, sockets} of procs) {
    mkdirSync(join(procRoot, String(pid), 'fd'), {recursive: true})
    writeFileSync(join(procRoot, String(pid), 'cgroup'), cgroup)
    symlinkSync('/dev/null', join(procRoot, String(pid), 'fd', '0'))
    for (const [index, inode] of sockets.entries()) symlinkSync(`socket:[${inode}]`, join(procRoot, String(pid), 'fd', String(index + 3)))
  }

  const unitDir = join(root, 'units')
  mkdirSync(unitDir)
  for (const [name, text] of Object.entries(units)) writeFileSync(join(unitDir, name), text)
  return {procRoot, unitDirs: [unitDir]}
}

const SOCKET = '/run/k8s/containerd.sock'

describe('findRuntimeUnit', () => {
  it("names the service of the process listening on the socket, whatever the socket's file is called", () => {
    const options = host(
      [socketLine(500, '/run/containerd/containerd.sock'), socketLine(700, SOCKET), socketLine(701, SOCKET, '00000000')],
      [
        {pid: 10, cgroup: '0::/system.slice/containerd.service\n', sockets: [500]},
        {pid: 20, cgroup: '0::/system.slice/k8s-runtime.service\n', sockets: [700]},
        // A client connected to it (not listening): not the runtime.
        {pid: 30, cgroup: '0::/system.slice/other.service\n', sockets: [701]},
      ],
    )
    expect(findRuntimeUnit(`unix://${SOCKET}`, options)).toEqual({
      unit: 'k8s-runtime.service',
      how: `the service of pid 20, which listens on ${SOCKET}`,
    })
  })

  it("names none for a runtime outside systemd (the lab's containerd), saying why", () => {
    const options = host([socketLine(700, SOCKET)], [{pid: 20, cgroup: '9:name=systemd:/\n0::/\n', sockets: [700]}], {
      'containerd.service': '[Service]\nExecStart=/usr/bin/containerd\n',
    })
    expect(findRuntimeUnit(SOCKET, options)).toEqual({
      unit: undefined,
      why: `pid 20 listens on ${SOCKET} outside any system service, and no systemd .socket unit has ListenStream=${SOCKET}`,
    })
  })

  it('names none when nothing listens there, even with containerd.service installed for another socket', () => {
    const options = host(
      [socketLine(500, '/run/containerd/containerd.sock')],
      [{pid: 10, cgroup: '0::/system.slice/containerd.service\n', sockets: [500]}],
    )
    expect(findRuntimeUnit(SOCKET, options)).toEqual({
      unit: undefined,
      why: `no process podctl can see listens on ${SOCKET}, and no systemd .socket unit has ListenStream=${SOCKET}`,
    })
  })

  it('names the .socket unit whose ListenStream= is the path when only systemd holds it (socket activation)', () => {
    const options = host([socketLine(700, SOCKET)], [{pid: 1, cgroup: '0::/init.scope\n', sockets: [700]}], {
      'other.socket': '[Socket]\nListenStream=/run/other.sock\n',
      'runtime.socket': '[Socket]\nListenStream=/run/elsewhere.sock\nListenStream=\nListenStream=%t/k8s/containerd.sock\n',
      'reset.socket': `[Socket]\nListenStream=${SOCKET}\nListenStream=\n`,
    })
    expect(findRuntimeUnit(SOCKET, options)).toEqual({unit: 'runtime.socket', how: `the socket unit whose ListenStream= is ${SOCKET}`})
  })
})

describe('serviceOf', () => {
  it('is the deepest .service of the systemd cgroup, none outside system services', () => {
    expect(serviceOf('0::/system.slice/crio.service\n')).toBe('crio.service')
    expect(serviceOf('0::/system.slice/containerd.service/runtime\n')).toBe('containerd.service')
    expect(serviceOf('4:memory:/x.service\n1:name=systemd:/system.slice/docker.service\n0::/\n')).toBe('docker.service')
    expect(serviceOf('0::/init.scope\n')).toBeUndefined()
    expect(serviceOf('0::/user.slice/user-0.slice/session-3.scope\n')).toBeUndefined()
    expect(serviceOf('0::/user.slice/user-1000.slice/user@1000.service/app.slice/podman.service\n')).toBeUndefined()
    expect(serviceOf('')).toBeUndefined()
  })
})
