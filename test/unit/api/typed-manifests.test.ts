import {execFile} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {afterAll, describe, expect, it} from 'vitest'

import {ROOT} from '../../support/podctl.js'

const run = promisify(execFile)
const work = mkdtempSync(join(tmpdir(), 'podctl-typed-manifests-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

describe('runPod with typed objects of @kubernetes/client-node', () => {
  it('type-checks V1Pod, V1Deployment, a path and a literal under tsc --strict, without casts', async () => {
    // A consumer's usual settings; skipLibCheck because client-node's own .d.ts need @types/ws, not because of podctl's.
    const tsconfig = {
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2023', 'ESNext.Disposable'],
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules/@types')],
        strict: true,
        skipLibCheck: true,
        noEmit: true,
      },
      files: [join(ROOT, 'test/fixtures/api/typed-manifests.ts')],
    }
    writeFileSync(join(work, 'tsconfig.json'), JSON.stringify(tsconfig))
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
    const result = await run(process.execPath, [tsc, '-p', work], {cwd: ROOT}).then(
      ({stdout}) => ({code: 0, stdout}),
      (error: {code: number; stdout: string}) => ({code: error.code, stdout: error.stdout}),
    )
    expect(result).toEqual({code: 0, stdout: ''})
  }, 120_000)
})
