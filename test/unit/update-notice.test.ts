/** No "update available" notice, from podctl or from the oclif tool its build runs. */
import {readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

const pjson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))

describe('update notices', () => {
  it('podctl ships no plugin that checks for a newer version', () => {
    const plugins: string[] = [...(pjson.oclif.plugins ?? []), ...(pjson.oclif.devPlugins ?? [])]
    expect(plugins.filter((plugin) => /update|version/.test(plugin))).toEqual([])
    expect(Object.keys(pjson.dependencies).filter((name) => name.includes('warn-if-update'))).toEqual([])
  })

  it("every script that runs the oclif tool turns its own update check off (it prints 'update available' and asks npm)", () => {
    const runs = Object.entries<string>(pjson.scripts).flatMap(([name, script]) =>
      script
        .split('&&')
        .map((step) => step.trim())
        .filter((step) => /(^|\s)oclif\s/.test(step))
        .map((step) => [name, step]),
    )
    expect(runs.length).toBeGreaterThan(0)
    for (const [name, step] of runs) expect(step, name).toMatch(/^OCLIF_SKIP_NEW_VERSION_CHECK=true oclif /)
  })
})
