import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync} from 'node:fs'
import {availableParallelism, tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {fixtureIn, hostMountsUnder} from '../support/objects.js'
import {podctl} from '../support/podctl.js'

/**
 * Volumes written the kubelet's way under <pod dir>/volumes/kubernetes.io~<plugin>/<name>: what the
 * container sees (files, modes, the ..data symlink, tmpfs mounts), what reached the runtime
 * (mounts, propagation, read-only) and that kill leaves neither mounts nor directories behind.
 */
const client = labClient()
const namespace = uniqueNamespace('e2e-volumes')
const work = mkdtempSync(join(tmpdir(), 'podctl-volumes-'))
const podDirRoot = join(work, 'pods')
const claimsRoot = join(work, 'claims')
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: podDirRoot, PODCTL_CLAIMS_ROOT: claimsRoot})

function run(args: string[], input?: string) {
  return podctl(args, {env, input})
}

async function exec(pod: string, container: string, script: string): Promise<string> {
  const result = await run(['exec', '-n', namespace, `${pod}/${container}`, '--', 'sh', '-c', script])
  expect(result.code, result.stderr).toBe(0)
  return result.stdout
}

async function runFixture(path: string, args: string[] = []) {
  const result = await run(['run', '-f', '-', '-o', 'json', ...args], fixtureIn(path, namespace))
  expect(result.code, result.stderr).toBe(0)
  return {...result, pod: JSON.parse(result.stdout).pods[0]}
}

async function kill(pod: string) {
  const result = await run(['kill', '-n', namespace, pod, '--grace-period', '0'])
  expect(result.code, result.stderr).toBe(0)
}

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  for (const point of hostMountsUnder(work)) execFileSync('umount', ['-l', point])
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
  rmSync(work, {recursive: true, force: true})
})

describe('configMap volumes', () => {
  it('every key as a file behind ..data, items at their path and mode, a subPath file, read-only', async () => {
    const {pod} = await runFixture('objects/configmap-volume.yaml')
    const base = `${podDirRoot}/${pod.uid}/volumes/kubernetes.io~configmap`
    const listing = await exec('configmap-volume-pod', 'test-container', 'ls -la /etc/config/ /etc/items/nested/')
    expect(listing).toMatch(/^drwxrwxrwx .* \.$/m)
    expect(listing).toMatch(/ \.\.data -> \.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\d+$/m)
    for (const key of ['game.properties', 'ui.properties', 'logo.bin']) expect(listing).toContain(` ${key} -> ..data/${key}`)
    expect(listing).toMatch(/^-r-------- .* ui\.conf$/m)
    expect(
      await exec(
        'configmap-volume-pod',
        'test-container',
        'stat -c %a /etc/items/..data/nested/ui.conf /etc/config/..data/game.properties',
      ),
    ).toBe('400\n644\n')
    expect(await exec('configmap-volume-pod', 'test-container', 'cat /etc/app.properties')).toBe('enemies=aliens\nlives=3\n')
    expect(await exec('configmap-volume-pod', 'test-container', 'od -An -tx1 /etc/config/logo.bin')).toMatch(/^\s*00 01 02 03 04\s*$/)
    expect(await run(['exec', '-n', namespace, 'configmap-volume-pod/test-container', '--', 'touch', '/etc/config/x'])).toMatchObject({
      code: 1,
    })

    const inspect = JSON.parse((await run(['inspect', '-n', namespace, 'configmap-volume-pod/test-container'])).stdout)
    const mounts = inspect.status.mounts.filter((mount: {containerPath: string}) => /^\/etc\/(config|items|app)/.test(mount.containerPath))
    expect(mounts).toEqual([
      expect.objectContaining({
        containerPath: '/etc/config',
        hostPath: `${base}/config-volume`,
        readonly: true,
        propagation: 'PROPAGATION_PRIVATE',
      }),
      expect.objectContaining({containerPath: '/etc/items', hostPath: `${base}/items-volume`, readonly: true}),
      // A subPath through a key's symlink: the file itself, resolved inside the volume.
      expect.objectContaining({
        containerPath: '/etc/app.properties',
        hostPath: expect.stringMatching(/\/config-volume\/\.\.\d{4}_.*\/game\.properties$/),
      }),
    ])
    await kill('configmap-volume-pod')
    expect(existsSync(`${podDirRoot}/${pod.uid}`)).toBe(false)
  })
})

describe('the downward API', () => {
  it('in env (status.podIP after the sandbox exists, resourceFieldRef with divisor) and in files (labels as key="value")', async () => {
    const {pod} = await runFixture('objects/downward-api.yaml')
    const name = 'kubernetes-downwardapi-volume-example'
    const vars = await exec(name, 'client-container', 'env')
    expect(vars).toContain(`MY_POD_IP=${pod.ip}\n`)
    expect(vars).toContain(`MY_POD_IPS=${pod.ip}\n`)
    expect(vars).toContain(`MY_POD_NAME=${name}\n`)
    expect(vars).toContain(`MY_POD_NAMESPACE=${namespace}\n`)
    expect(vars).toContain(`MY_POD_UID=${pod.uid}\n`)
    expect(vars).toContain('MY_POD_SERVICE_ACCOUNT=default\n')
    expect(vars).toContain('MY_RACK=rack-22\n')
    expect(vars).toContain('MY_CPU_LIMIT=250\n')
    expect(vars).toContain('MY_MEM_REQUEST=32\n')
    expect(vars).toMatch(/^MY_STORAGE_LIMIT=\d+$/m)
    expect(vars).toMatch(/^MY_HOST_IP=[\d.:a-f]+$/m)
    expect(await exec(name, 'client-container', 'cat /etc/podinfo/labels; echo; cat /etc/podinfo/annotations')).toBe(
      'cluster="test-cluster1"\nrack="rack-22"\nzone="us-est-coast"\nbuild="two"\nbuilder="john-doe"',
    )
    expect(await exec(name, 'client-container', 'cat /etc/podinfo/cpu_limit; echo; cat /etc/podinfo/mem_request')).toBe('250\n32')
    await kill(name)
  })

  it('a limit the container does not set is the node’s allocatable, as the kubelet reports it', async () => {
    const field = (name: string, resource: string) => `{name: ${name}, valueFrom: {resourceFieldRef: {resource: ${resource}}}}`
    const manifest = `apiVersion: v1
kind: Pod
metadata: {name: unlimited, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: app
    image: ${lab().busybox}
    command: [sleep, "3600"]
    env: [${field('MEMORY', 'limits.memory')}, ${field('CPU', 'limits.cpu')}, ${field('STORAGE', 'limits.ephemeral-storage')}]
`
    expect((await run(['run', '-f', '-', '-q'], manifest)).code).toBe(0)
    const vars = await exec('unlimited', 'app', 'echo $MEMORY $CPU $STORAGE')
    // Capacity less the default hard eviction thresholds: memory.available<100Mi, nodefs.available<10% (a float32 0.1).
    const memTotal = BigInt(/^MemTotal:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'))![1]) * 1024n
    const hugePages = readdirSync('/sys/kernel/mm/hugepages').reduce(
      (sum, size) =>
        sum + BigInt(readFileSync(`/sys/kernel/mm/hugepages/${size}/nr_hugepages`, 'utf8').trim()) * BigInt(/\d+/.exec(size)![0]) * 1024n,
      0n,
    )
    const fs = statfsSync(podDirRoot)
    const disk = BigInt(fs.blocks) * BigInt(fs.bsize)
    const storage = disk - BigInt(Math.trunc(Number(disk) * Math.fround(0.1)))
    expect(vars).toBe(`${memTotal - 100n * 1024n * 1024n - hugePages} ${availableParallelism()} ${storage}\n`)
    await kill('unlimited')
  })
})

describe('projected volumes', () => {
  it('combine Secrets, a ConfigMap and the downward API on a tmpfs; the serviceAccountToken source is skipped with a warning', async () => {
    const result = await runFixture('objects/projected.yaml')
    expect(result.stderr).toContain(
      'volume all-in-one: the serviceAccountToken source is skipped (there is no API server to issue a token)',
    )
    const files = await exec(
      'test-projected-volume',
      'test-projected-volume',
      'cd /projected-volume && cat my-group/my-username; echo; cat pass; echo; cat my-group/my-config; echo; cat labels; echo; ls -A',
    )
    expect(files).toBe('admin\n1f2d1e2e67df\nmode=projected\napp="projected"\n..2' + files.split('\n..2')[1])
    expect(files).not.toMatch(/^token$/m)
    expect(await exec('test-projected-volume', 'test-projected-volume', 'grep " /projected-volume " /proc/mounts')).toMatch(/^tmpfs /)
    await kill('test-projected-volume')
    expect(hostMountsUnder(podDirRoot)).toEqual([])
  })
})

describe('emptyDir, subPathExpr, mountPropagation and bound claims', () => {
  it('a claim without --volume is its claim directory; another source without --volume is refused in the words of the issue', async () => {
    const manifest = fixtureIn('objects/emptydir-subpath.yaml', namespace)
    const result = await run(['run', '-f', '-', '--dry-run', '-o', 'json'], manifest)
    expect(result.code, result.stderr).toBe(0)
    const data = JSON.parse(result.stdout).pods[0].volumes.find((volume: {name: string}) => volume.name === 'data')
    expect(data).toMatchObject({type: 'persistentVolumeClaim', hostPath: `${claimsRoot}/${namespace}/my-claim`})
    expect(existsSync(claimsRoot)).toBe(false)
    const nfs = await run(
      ['run', '-f', '-', '--dry-run'],
      manifest.replace(/persistentVolumeClaim:\n\s+claimName: my-claim/, 'nfs: {server: nfs.local, path: /x}'),
    )
    expect(nfs.code).toBe(ExitCode.USAGE)
    expect(nfs.stderr).toBe('Error: <stdin>: volume data (nfs) needs --volume data=DIR on a single node\n')
  })

  it('Memory emptyDir is a tmpfs of sizeLimit, subPathExpr expands the env, the claim is the bound directory', async () => {
    const claim = join(work, 'claim')
    mkdirSync(claim)
    // HostToContainer needs a host path on a shared mount (the lab's / is private): a shared bind mount of our own.
    const share = join(work, 'share')
    mkdirSync(share)
    execFileSync('mount', ['--bind', share, share])
    execFileSync('mount', ['--make-rshared', share])
    const manifest = fixtureIn('objects/emptydir-subpath.yaml', namespace).replace('path: /tmp', `path: ${share}`)
    const result = await run(['run', '-f', '-', '-o', 'json', '--volume', `data=${claim}`], manifest)
    expect(result.code, result.stderr).toBe(0)
    const pod = JSON.parse(result.stdout).pods[0]
    const dir = `${podDirRoot}/${pod.uid}/volumes`
    expect(await exec('pod1', 'container1', 'grep " /cache " /proc/mounts')).toMatch(/^tmpfs \/cache tmpfs rw.*size=65536k/)
    expect(hostMountsUnder(podDirRoot)).toEqual([`${dir}/kubernetes.io~empty-dir/cache-volume`])
    // The container wrote /logs/hello.txt into the volume's pod1/ subdirectory, and its claim file into the bound directory.
    await expect.poll(() => existsSync(`${dir}/kubernetes.io~empty-dir/workdir1/pod1/hello.txt`)).toBe(true)
    // The shell creates the file before it writes to it: wait for the content, not the file.
    const claimed = join(claim, 'claimed.txt')
    await expect.poll(() => (existsSync(claimed) ? readFileSync(claimed, 'utf8') : undefined)).toBe('claimed\n')

    const inspect = JSON.parse((await run(['inspect', '-n', namespace, 'pod1/container1'])).stdout)
    const byPath = Object.fromEntries(inspect.status.mounts.map((mount: {containerPath: string}) => [mount.containerPath, mount]))
    expect(byPath['/logs']).toMatchObject({hostPath: `${dir}/kubernetes.io~empty-dir/workdir1/pod1`})
    expect(byPath['/host']).toMatchObject({hostPath: share, propagation: 'PROPAGATION_HOST_TO_CONTAINER'})
    expect(byPath['/data']).toMatchObject({hostPath: claim, readonly: false})

    await kill('pod1')
    expect(hostMountsUnder(podDirRoot)).toEqual([])
    expect(existsSync(`${podDirRoot}/${pod.uid}`)).toBe(false)
    expect(readdirSync(claim)).toEqual(['claimed.txt'])
    execFileSync('umount', [share])
  })
})
