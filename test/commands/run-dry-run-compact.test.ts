/**
 * `run --dry-run` of a 2-replica Deployment (issue 39, 8e): the text for people shows each pod's
 * sandbox config once, as `sandboxConfig`, with the calls that send it again pointing at it and the
 * fields at their protobuf default left out; `-o json|yaml` keep every request whole, as before, for
 * scripts. A dry run makes no runtime call: a missing socket proves none is made.
 */
import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'
import {parse as parseYaml} from 'yaml'

import {podctl, ROOT} from '../support/podctl.js'

const dir = mkdtempSync(join(tmpdir(), 'podctl-dry-run-'))
const env = {CONTAINER_RUNTIME_ENDPOINT: `unix://${join(dir, 'no.sock')}`, CRI_CONFIG_FILE: undefined}
const deployment = readFileSync(join(ROOT, 'test/fixtures/workloads/deployment.yaml'), 'utf8').replace('replicas: 3', 'replicas: 2')
const REF = "<the pod's sandboxConfig>"

interface Call {
  rpc: string
  request: Record<string, unknown>
}
interface Plan {
  pod: string
  sandboxConfig?: {metadata: {name: string}; logDirectory: string}
  calls: Call[]
}

const dryRun = (...args: string[]) => podctl(['run', '-f', '-', '--dry-run', '-n', 'shop', ...args], {env, input: deployment})
const request = (plan: Plan, rpc: string) => plan.calls.find((call) => call.rpc === rpc)!.request

describe('run --dry-run of a 2-replica Deployment', () => {
  it("prints each pod's sandbox config once, the calls referring to it", async () => {
    const [text, yaml] = await Promise.all([dryRun(), dryRun('-o', 'yaml')])
    expect(text.code, text.stderr).toBe(0)
    const {dryRun: flag, pods} = parseYaml(text.stdout) as {dryRun: boolean; pods: Plan[]}
    expect(flag).toBe(true)
    expect(pods).toHaveLength(2)
    for (const plan of pods) {
      expect(plan.sandboxConfig?.metadata.name).toBe(plan.pod)
      expect(request(plan, 'RuntimeService/RunPodSandbox')).toEqual({config: REF})
      expect(request(plan, 'ImageService/PullImage').sandboxConfig).toBe(REF)
      expect(request(plan, 'RuntimeService/CreateContainer').sandboxConfig).toBe(REF)
      expect(request(plan, 'ImageService/PullImage').image).toEqual({
        image: 'localhost:5000/podctl/busybox:1.36',
        annotations: "<the pod's sandboxConfig.annotations>",
      })
    }

    // One config per pod in the whole text (its log directory is in it), and far fewer lines than the requests whole.
    expect(text.stdout.match(/^\s+logDirectory: /gm)).toHaveLength(2)
    const lines = (output: string) => output.trimEnd().split('\n').length
    expect(lines(text.stdout)).toBeLessThan(lines(yaml.stdout) * 0.6)
    // Defaults are left out: no empty strings, lists or maps, no false.
    expect(text.stdout).not.toMatch(/: (""|\[\]|\{\}|false)$/m)
  })

  it('-o json and -o yaml keep every request whole, with the keys they had', async () => {
    for (const format of ['json', 'yaml']) {
      const output = await dryRun('-o', format)
      expect(output.code, output.stderr).toBe(0)
      const result = (format === 'json' ? JSON.parse(output.stdout) : parseYaml(output.stdout)) as {pods: Plan[]}
      expect(result.pods).toHaveLength(2)
      for (const plan of result.pods) {
        expect(Object.keys(plan)).toEqual(['pod', 'namespace', 'uid', 'etcHosts', 'admission', 'calls'])
        const {config} = request(plan, 'RuntimeService/RunPodSandbox') as {config: {metadata: {name: string}}}
        expect(config.metadata.name).toBe(plan.pod)
        expect(request(plan, 'ImageService/PullImage').sandboxConfig).toEqual(config)
        expect(request(plan, 'RuntimeService/CreateContainer').sandboxConfig).toEqual(config)
        expect(request(plan, 'RuntimeService/PodSandboxStatus')).toEqual({podSandboxId: '<sandbox id>', verbose: false})
      }
    }
  })
})
