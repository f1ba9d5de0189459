import {mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {agentUnit, type AgentUnitRequest, programOf} from '../../../src/lib/local-kubelet/agent-unit.js'
import {splitExecStart, unitValue} from '../../support/systemd-exec.js'

// A package without README.md: no Documentation= line from it (the package's own is tested below).
const work = mkdtempSync(join(tmpdir(), 'podctl-agent-unit-'))
const manifests = join(work, 'my manifests')
mkdirSync(manifests)
mkdirSync(join(work, 'pkg', 'bin'), {recursive: true})
afterAll(() => rmSync(work, {recursive: true, force: true}))

const script = join(work, 'pkg', 'bin', 'run.js')
const endpoint = 'unix:///run/containerd/containerd.sock'
const watch = {pods: [], manifests: [], labels: [], all: false, quiet: false, force: false}
function request(overrides: Partial<AgentUnitRequest> = {}): AgentUnitRequest {
  return {
    name: 'podctl',
    execPath: '/usr/bin/node',
    script: join(work, 'pkg', 'bin', 'run.js'),
    cwd: work,
    endpoint: 'unix:///run/containerd/containerd.sock',
    after: [],
    runtimeUnit: 'containerd.service',
    watch: {...watch, manifests: ['my manifests']},
    ...overrides,
  }
}

describe('agentUnit', () => {
  it('renders the whole unit: absolute ExecStart, the runtime service, restart and the stop that leaves pods', () => {
    const {unit, path, execStart} = agentUnit(request())
    expect(path).toBe('/etc/systemd/system/podctl.service')
    expect(execStart).toEqual([
      '/usr/bin/node',
      join(work, 'pkg', 'bin', 'run.js'),
      'sync',
      '--watch',
      '-f',
      manifests,
      '--runtime-endpoint',
      'unix:///run/containerd/containerd.sock',
    ])
    expect(unit).toBe(`# podctl.service: podctl supervising pods as a node agent (podctl sync --watch), written by \`podctl unit\`.
# Install: podctl unit ... > /etc/systemd/system/podctl.service && systemctl daemon-reload && systemctl enable --now podctl
# "systemctl stop podctl" stops the supervision and leaves the pods running; "podctl kill" removes pods.

[Unit]
Description=podctl: podctl node agent (sync --watch) for the manifests in ${manifests}
After=network-online.target containerd.service
Wants=network-online.target containerd.service
# Never give up restarting, as the kubelet unit.
StartLimitIntervalSec=0

[Service]
Type=exec
ExecStart=/usr/bin/node ${script} sync --watch -f "${manifests}" --runtime-endpoint ${endpoint}
Restart=always
RestartSec=10s
# Exit 2 is a usage error (a bad flag): restarting cannot fix it.
RestartPreventExitStatus=2
# The stop signal goes to podctl alone; on SIGTERM it stops supervising and leaves the pods running.
KillMode=mixed
KillSignal=SIGTERM
TimeoutStopSec=90s

[Install]
WantedBy=multi-user.target
`)
    expect(splitExecStart(unitValue(unit, 'ExecStart')!)).toEqual(execStart)
  })

  it('passes every sync --watch flag given, with absolute roots, and the image endpoint when it differs', () => {
    const {execStart, unit} = agentUnit(
      request({
        name: 'edge',
        imageEndpoint: 'unix:///run/images.sock',
        watch: {
          ...watch,
          namespace: 'ci',
          labels: ['app=x'],
          parallel: 2,
          podDirRoot: 'pods',
          podLogsRoot: '/l',
          claimsRoot: 'claims',
          metricsAddress: '127.0.0.1:9100',
          quiet: true,
          force: true,
        },
      }),
    )
    expect(execStart.slice(2)).toEqual([
      'sync',
      '--watch',
      '-n',
      'ci',
      '-l',
      'app=x',
      '--parallel',
      '2',
      '--pod-logs-root',
      '/l',
      '--pod-dir-root',
      join(work, 'pods'),
      '--claims-root',
      join(work, 'claims'),
      '--metrics-address',
      '127.0.0.1:9100',
      '--quiet',
      '--force',
      '--runtime-endpoint',
      'unix:///run/containerd/containerd.sock',
      '--image-endpoint',
      'unix:///run/images.sock',
    ])
    expect(unitValue(unit, 'Description')).toBe('edge: podctl node agent (sync --watch) for the pods labelled app=x of namespace ci')
    expect(unit).toMatch(/^# edge\.service: /)
  })

  it('takes --after instead of the runtime service', () => {
    const {unit} = agentUnit(request({endpoint: 'unix:///run/k.sock', after: ['k3s.service', 'k3s.service', 'data.mount']}))
    expect(unitValue(unit, 'After')).toBe('network-online.target k3s.service data.mount')
    expect(unitValue(unit, 'Wants')).toBe('network-online.target k3s.service data.mount')
  })

  it('wants no runtime unit when none was found (a runtime outside systemd)', () => {
    const {unit} = agentUnit(request({endpoint: 'unix:///run/podctl-lab/containerd.sock', runtimeUnit: undefined}))
    expect(unitValue(unit, 'After')).toBe('network-online.target')
    expect(unitValue(unit, 'Wants')).toBe('network-online.target')
  })

  it('names the flag of what it refuses', () => {
    expect(() => agentUnit(request({watch: {...watch, manifests: ['nope']}}))).toThrow(
      `-f nope: no such file or directory (${join(work, 'nope')}); give an existing manifest file or directory`,
    )
    expect(() => agentUnit(request({watch: {...watch, manifests: ['-']}}))).toThrow(
      '-f -: a service has no stdin; give a manifest file or directory',
    )
    expect(() => agentUnit(request({name: 'my agent'}))).toThrow('--name: "my agent" is not a unit name')
    expect(() => agentUnit(request({after: ['containerd']}))).toThrow(
      '--after: "containerd" is not a unit name; give one with its type, e.g. --after containerd.service',
    )
  })

  it('finds the README of a package run through a link (npm install -g puts one in /usr/bin)', () => {
    mkdirSync(join(work, 'linked', 'bin'), {recursive: true})
    mkdirSync(join(work, 'usr-bin'))
    writeFileSync(join(work, 'linked', 'README.md'), '# podctl\n')
    writeFileSync(join(work, 'linked', 'bin', 'run.js'), '')
    symlinkSync(join(work, 'linked', 'bin', 'run.js'), join(work, 'usr-bin', 'podctl'))
    const {unit, execStart} = agentUnit(request({script: join(work, 'usr-bin', 'podctl')}))
    expect(execStart[1]).toBe(join(work, 'usr-bin', 'podctl'))
    expect(unitValue(unit, 'Documentation')).toBe(`file://${join(work, 'linked', 'README.md')}`)
  })

  it("links the package's README as Documentation", () => {
    const {unit} = agentUnit(request({script: join(process.cwd(), 'bin', 'run.js')}))
    expect(unitValue(unit, 'Documentation')).toBe(`file://${join(process.cwd(), 'README.md').replaceAll(' ', '%%20')}`)
  })
})

describe('programOf', () => {
  it('is the single executable alone, or node and the absolute script', () => {
    expect(programOf('/usr/local/bin/podctl', '/usr/local/bin/podctl')).toEqual(['/usr/local/bin/podctl'])
    expect(programOf('/usr/local/bin/podctl', undefined)).toEqual(['/usr/local/bin/podctl'])
    expect(programOf('/usr/bin/node', '/opt/podctl/bin/run.js')).toEqual(['/usr/bin/node', '/opt/podctl/bin/run.js'])
  })
})
