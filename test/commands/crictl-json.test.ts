/**
 * Issues 20 and 34: as crictl, podctl prints crictl v1.37's JSON and YAML byte for byte. The expected
 * bytes are what the reference crictl v1.37.0 printed for the same cases against the same fixture
 * runtime (test/fixtures/crictl-golden/, recorded by scripts/crictl-golden.mjs), so no crictl is
 * needed here. protojson puts one or two spaces after a key's colon depending on the crictl binary
 * (its detrand): both sides are compared with one.
 */
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {CRICTL_CASES, oneSpaceAfterKeys, startCrictlFixtureRuntime} from '../support/crictl-fixtures.js'
import {socketDir} from '../support/fake-runtime.js'
import {podctl, ROOT} from '../support/podctl.js'

const GOLDEN = join(ROOT, 'test', 'fixtures', 'crictl-golden')
const dir = socketDir()
const socket = join(dir, 'cri.sock')
// TZ=UTC as when the files were recorded: crictl writes inspect's timestamps in local time.
const env = {PODCTL_PERSONALITY: 'crictl', TZ: 'UTC', CONTAINER_RUNTIME_ENDPOINT: undefined, CRI_CONFIG_FILE: undefined}
// An empty config file, as the recorder used: nothing from the machine's /etc/crictl.yaml, and no warning that it is missing.
const config = join(dir, 'crictl.yaml')
let stop: () => Promise<void>

beforeAll(async () => {
  writeFileSync(config, '')
  stop = await startCrictlFixtureRuntime(socket)
})

afterAll(async () => {
  await stop()
})

describe('as crictl, podctl prints what crictl v1.37.0 printed for the same runtime answers', () => {
  it.each(CRICTL_CASES.map((c) => [c.name, c] as const))('%s', async (name, {crictl, tz}) => {
    const result = await podctl(['--config', config, '-r', `unix://${socket}`, ...crictl], {env: {...env, TZ: tz ?? 'UTC'}})
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(oneSpaceAfterKeys(result.stdout)).toBe(oneSpaceAfterKeys(readFileSync(join(GOLDEN, `${name}.out`), 'utf8')))
  })

  it("podctl's own mode keeps its own JSON", async () => {
    const result = await podctl(['-r', `unix://${socket}`, 'pods', '-o', 'json'], {env: {...env, PODCTL_PERSONALITY: 'podctl'}})
    expect(result.code).toBe(0)
    expect(result.stdout).not.toBe(readFileSync(join(GOLDEN, 'pods-json.out'), 'utf8'))
    expect(JSON.parse(result.stdout).items).toHaveLength(8)
  })
})
