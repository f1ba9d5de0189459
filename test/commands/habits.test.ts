/** crictl's habits: global flags before the command, -h and help everywhere, -v, crictl's command names. */
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {endpointEnv, podctl, ROOT} from '../support/podctl.js'
import {socketDir, startFakeRuntime, versionHandler} from '../support/fake-runtime.js'

const dir = socketDir()
const socket = join(dir, 'cri.sock')
const env = endpointEnv()
let stop: () => Promise<void>

type Callback = (error: null, response: unknown) => void

const sandbox = {
  id: 'aaa111',
  metadata: {name: 'web', namespace: 'default', uid: 'u1', attempt: 0},
  state: 'SANDBOX_READY',
  createdAt: '1',
}

beforeAll(async () => {
  const runtime = {
    version: versionHandler,
    listPodSandbox: (_call: unknown, cb: Callback) => cb(null, {items: [sandbox]}),
    podSandboxStatus: (_call: unknown, cb: Callback) => cb(null, {status: sandbox, info: {}}),
    listContainers: (_call: unknown, cb: Callback) =>
      cb(null, {
        containers: [
          {id: 'ccc333', podSandboxId: 'aaa111', metadata: {name: 'app', attempt: 0}, state: 'CONTAINER_RUNNING', createdAt: '3'},
        ],
      }),
  }
  const images = {
    listImages: (_call: unknown, cb: Callback) =>
      cb(null, {images: [{id: 'sha256:'.padEnd(71, '1'), repoTags: ['localhost:5000/app:v1']}]}),
  }
  stop = await startFakeRuntime(socket, runtime as never, images as never)
})

afterAll(async () => {
  await stop()
})

describe('global flags before the command', () => {
  it('-r ENDPOINT ps, --runtime-endpoint=ENDPOINT pods, -D version, -t 5s pods', async () => {
    const [ps, pods, version, timeout] = await Promise.all([
      podctl(['-r', socket, 'ps', '-q'], {env}),
      podctl([`--runtime-endpoint=${socket}`, 'pods', '-q'], {env}),
      podctl(['-D', '-r', socket, 'version', '-o', 'json'], {env}),
      podctl(['-t', '5s', '-r', socket, 'pods', '-q'], {env}),
    ])
    expect(ps).toMatchObject({code: 0, stdout: 'ccc333\n', stderr: ''})
    expect(pods).toMatchObject({code: 0, stdout: 'aaa111\n', stderr: ''})
    expect(version.code).toBe(0)
    expect(JSON.parse(version.stdout).runtime.runtimeName).toBeTruthy()
    expect(version.stderr).toMatch(/^debug: runtime endpoint .* \(from flag\)$/m)
    expect(timeout).toMatchObject({code: 0, stdout: 'aaa111\n'})
  })

  it('-c FILE before the command reads the endpoint from that crictl config', async () => {
    const config = join(mkdtempSync(join(tmpdir(), 'podctl-habits-')), 'crictl.yaml')
    writeFileSync(config, `runtime-endpoint: unix://${socket}\n`)
    const result = await podctl(['-c', config, 'pods', '-q'], {env})
    expect(result).toMatchObject({code: 0, stdout: 'aaa111\n', stderr: ''})
  })

  it('in ps, -r after the command is --resolve-image-path, as in crictl', async () => {
    const result = await podctl(['-r', socket, 'ps', '-r', '-q'], {env})
    expect(result).toMatchObject({code: 0, stdout: 'ccc333\n'})
  })

  it('a flag value is never taken for the command', async () => {
    const result = await podctl(['-t', 'pods', 'pods'], {env})
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stderr).toBe('Error: --timeout "pods" is not a duration; use e.g. 10s, 500ms or 2m\n')
  })

  it("a command's own flags before it move behind it with their values: -r EP --name web -q pods", async () => {
    const [pods, unknown] = await Promise.all([
      podctl(['-r', socket, '--name', 'web', '-q', 'pods'], {env}),
      podctl(['-r', socket, '--keep-on-failure', 'pods'], {env}),
    ])
    expect(pods).toMatchObject({code: 0, stdout: 'aaa111\n', stderr: ''})
    // A flag the command does not have is named, not taken for the command.
    expect(unknown.code).toBe(ExitCode.USAGE)
    expect(unknown.stderr).toMatch(/^Error: Nonexistent flag: --keep-on-failure\b/)
  })

  it('bin/dev.js reorders the same way', async () => {
    const [pods, named] = await Promise.all([
      podctl(['-r', socket, 'pods', '-q'], {env, entry: join(ROOT, 'bin', 'dev.js')}),
      podctl(['-r', socket, '--name', 'web', 'pods', '-q'], {env: {...env, NODE_ENV: 'production'}, entry: join(ROOT, 'bin', 'dev.js')}),
    ])
    expect(pods).toMatchObject({code: 0, stdout: 'aaa111\n'})
    expect(named).toMatchObject({code: 0, stdout: 'aaa111\n'})
  })
})

describe('help and version', () => {
  it('-h, help, help COMMAND, COMMAND -h and -h COMMAND', async () => {
    const [h, help, helpPull, pullH, hPull] = await Promise.all([
      podctl(['-h'], {env}),
      podctl(['help'], {env}),
      podctl(['help', 'pull'], {env}),
      podctl(['pull', '-h'], {env}),
      podctl(['-h', 'pull'], {env}),
    ])
    for (const root of [h, help]) {
      expect(root.code).toBe(0)
      expect(root.stdout).toContain('COMMANDS')
      expect(root.stdout).toMatch(/^ {2}pods +/m)
    }

    for (const pull of [helpPull, pullH, hPull]) {
      expect(pull.code).toBe(0)
      expect(pull.stderr).toBe('')
      expect(pull.stdout).toContain('$ podctl pull IMAGE...')
    }
  })

  it('-h and --help list the global flags under the commands', async () => {
    const [h, help] = await Promise.all([podctl(['-h'], {env}), podctl(['--help'], {env})])
    expect(h.code).toBe(0)
    expect(help.stdout).toBe(h.stdout)
    const globals = h.stdout.slice(h.stdout.indexOf('\nGLOBAL FLAGS\n'))
    expect(h.stdout.indexOf('\nCOMMANDS\n')).toBeLessThan(h.stdout.indexOf('\nGLOBAL FLAGS\n'))
    expect(globals).toMatch(/^ {2}-r, --runtime-endpoint=<value> +CRI runtime endpoint/m)
    expect(globals).toMatch(/^ {2}-i, --image-endpoint=<value> +CRI image endpoint/m)
    expect(globals).toMatch(/^ {6}--connect-timeout=DURATION +How long/m)
    expect(globals).toMatch(/^ {2}-D, --debug +Print each runtime call/m)
    expect(globals).toMatch(/^ {6}--\[no-\]color +Colour output/m)
  })

  it('a first flag without a short form lines up with the flags under it', async () => {
    const result = await podctl(['stats', '--help'], {env})
    const flags = result.stdout.split('\nFLAGS\n')[1].split('\n')
    expect(flags[0]).toMatch(/^ {6}--id=<value> {14}Only containers whose ID/)
    expect(flags[1]).toMatch(/^ {2}-p, --pod=<value> {13}Only containers of this pod/)
  })

  it('-v and --version print the version', async () => {
    const [v, version] = await Promise.all([podctl(['-v'], {env}), podctl(['--version'], {env})])
    expect(v.code).toBe(0)
    expect(v.stdout).toMatch(/^podctl\/\d+\.\d+\.\d+ /)
    expect(version.stdout).toBe(v.stdout)
  })

  it('a command without its required argument shows its usage on stderr and exits 2', async () => {
    const result = await podctl(['inspect'], {env})
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain('USAGE\n  $ podctl inspect REF...')
    expect(result.stderr).toMatch(/^Error: Missing 1 required arg: ref\b.*\n$/m)
  })
})

describe('did you mean', () => {
  it('an unknown command names the nearest one, exit 2, in both entries', async () => {
    const [bundled, unbundled] = await Promise.all([
      podctl(['pdos'], {env}),
      podctl(['pdos'], {env: {...env, NODE_ENV: 'production'}, entry: join(ROOT, 'bin', 'dev.js')}),
    ])
    for (const result of [bundled, unbundled]) {
      expect(result).toMatchObject({code: ExitCode.USAGE, stdout: ''})
      expect(result.stderr).toBe('Error: unknown command "pdos"; did you mean pods? (podctl --help lists the commands)\n')
    }
  })

  it('an unknown flag names the nearest flag of the command', async () => {
    const result = await podctl(['-r', socket, 'pods', '--namepsace', 'x'], {env})
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stderr).toBe('Error: Nonexistent flag: --namepsace (did you mean --namespace?); see --help\n')
  })
})

describe('an empty list after an exact --name', () => {
  it('hints on stderr that names are exact and how to glob, never in -o json', async () => {
    const [ps, psAll, pods, json, glob] = await Promise.all([
      podctl(['-r', socket, 'ps', '--name', 'ap'], {env}),
      podctl(['-r', socket, 'ps', '-a', '--name', 'ap'], {env}),
      podctl(['-r', socket, 'pods', '--name', 'we'], {env}),
      podctl(['-r', socket, 'ps', '--name', 'ap', '-o', 'json'], {env}),
      podctl(['-r', socket, 'ps', '--name', 'ap*', '-q'], {env}),
    ])
    expect(ps.code).toBe(0)
    expect(ps.stdout).toMatch(/^CONTAINER +IMAGE/)
    expect(ps.stderr).toBe(
      "--name matches whole names only; to match names that start with it, use --name 'ap*' (and -a for containers that are not running)\n",
    )
    expect(psAll.stderr).toBe("--name matches whole names only; to match names that start with it, use --name 'ap*'\n")
    expect(pods.stderr).toBe("--name matches whole names only; to match names that start with it, use --name 'we*'\n")
    expect(json).toMatchObject({code: 0, stderr: ''})
    expect(JSON.parse(json.stdout)).toEqual({containers: []})
    expect(glob).toMatchObject({code: 0, stdout: 'ccc333\n', stderr: ''})
  })
})

describe('no hint where a glob would list nothing', () => {
  it('an empty namespace, a name no pod starts with, or a value that is no name at all gets no hint', async () => {
    const results = await Promise.all([
      podctl(['-r', socket, 'pods', '-n', 'demo'], {env}),
      podctl(['-r', socket, 'pods', '-n', '../etc'], {env}),
      podctl(['-r', socket, 'pods', '--name', 'zz'], {env}),
      podctl(['-r', socket, 'ps', '-a', '-n', 'demo'], {env}),
      podctl(['-r', socket, 'ps', '--name', 'zz', '-n', 'default'], {env}),
    ])
    for (const result of results) {
      expect(result.code).toBe(0)
      expect(result.stdout).toMatch(/^(POD ID|CONTAINER) /)
      expect(result.stderr).toBe('')
    }

    // Both given, the namespace's glob is what lists the pod: both globs are named.
    const both = await podctl(['-r', socket, 'pods', '--name', 'we', '-n', 'def'], {env})
    expect(both.stderr).toBe(
      "--name and --namespace match whole names only; to match names that start with it, use --name 'we*' --namespace 'def*'\n",
    )
  })
})

describe('detach keys', () => {
  it('a --detach-keys that is not a key is a usage error naming the flag, for exec and attach', async () => {
    const [exec, attach] = await Promise.all([
      podctl(['-r', socket, 'exec', '-it', '--detach-keys', 'ctrl-1', 'ccc333', '--', 'sh'], {env}),
      podctl(['-r', socket, 'attach', '-it', '--detach-keys', 'ctrl-1', 'ccc333'], {env}),
    ])
    for (const result of [exec, attach]) {
      expect(result.code).toBe(ExitCode.USAGE)
      expect(result.stderr).toMatch(/^Error: --detach-keys "ctrl-1": "ctrl-1" is not a key; use e\.g\. ctrl-p,ctrl-q\b/)
    }
  })
})

describe('a pod in another namespace', () => {
  it('logs POD/CONTAINER says which namespace has the pod and what to add', async () => {
    const [logs, status] = await Promise.all([
      podctl(['-r', socket, 'logs', 'web/app', '-n', 'demo'], {env}),
      podctl(['-r', socket, 'status', 'web', '-n', 'demo'], {env}),
    ])
    for (const result of [logs, status]) {
      expect(result.code).toBe(ExitCode.NOT_FOUND)
      expect(result.stderr).toBe('Error: pod "web" not found in namespace demo; it exists in default: add -n default\n')
    }
  })
})

describe("crictl's command names", () => {
  it('img and image list images', async () => {
    const [img, image] = await Promise.all([podctl(['-r', socket, 'img', '-q'], {env}), podctl(['image', '-q', '-r', socket], {env})])
    expect(img).toMatchObject({code: 0, stdout: `${'sha256:'.padEnd(71, '1')}\n`})
    expect(image.stdout).toBe(img.stdout)
  })

  it('inspectp inspects a pod', async () => {
    const result = await podctl(['-r', socket, 'inspectp', 'aaa111', '--template', '{{.status.metadata.name}}'], {env})
    expect(result).toMatchObject({code: 0, stdout: 'web\n', stderr: ''})
  })
})
