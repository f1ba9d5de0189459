#!/usr/bin/env node
// Records what a reference crictl prints for each case of test/support/crictl-fixtures.ts
// (CRICTL_CASES) against the fixture runtime, into test/fixtures/crictl-golden/NAME.out.
// test/commands/crictl-json.test.ts then checks that podctl, as crictl, prints the same bytes,
// with no crictl needed in CI. Usage: node scripts/crictl-golden.mjs /path/to/crictl
// (crictl v1.29.0; the files say which crictl recorded them in README.md there). Run it again
// after changing the fixtures or the cases.
import {execFile, execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const OUT = join(ROOT, 'test', 'fixtures', 'crictl-golden')
const crictl = process.argv[2]
if (!crictl) throw new Error('usage: node scripts/crictl-golden.mjs /path/to/crictl   (the reference crictl v1.29.0)')

/** Compiles the fixture module (TypeScript, with the fake runtime) to one this script can import. */
async function loadFixtures(dir) {
  const {rolldown} = await import('rolldown')
  const bundle = await rolldown({
    input: join(ROOT, 'test', 'support', 'crictl-fixtures.ts'),
    platform: 'node',
    external: (id) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('\0'),
    resolve: {extensionAlias: {'.js': ['.ts', '.js']}},
    logLevel: 'warn',
  })
  const file = join(dir, 'crictl-fixtures.mjs')
  await bundle.write({file, format: 'esm'})
  await bundle.close()
  return import(pathToFileURL(file).href)
}

// Next to the sources (not in /tmp) so the compiled module resolves grpc-js from node_modules.
const work = join(ROOT, 'test', '.crictl-golden-work')
rmSync(work, {recursive: true, force: true})
mkdirSync(work, {recursive: true})
const socketDir = mkdtempSync(join(tmpdir(), 'crictl-golden-'))
const socket = join(socketDir, 'cri.sock')
// An empty config file: nothing from the machine's /etc/crictl.yaml changes what is recorded.
writeFileSync(join(socketDir, 'crictl.yaml'), '')
const {startCrictlFixtureRuntime, CRICTL_CASES} = await loadFixtures(work)
const stop = await startCrictlFixtureRuntime(socket)
const version = execFileSync(crictl, ['--version'], {encoding: 'utf8'}).trim()
const failures = []
try {
  mkdirSync(OUT, {recursive: true})
  for (const {name, crictl: argv, tz} of CRICTL_CASES) {
    const endpoint = `unix://${socket}`
    const args = ['--config', join(socketDir, 'crictl.yaml'), '-r', endpoint, '-i', endpoint, '-t', '10s', ...argv]
    // The fixture runtime answers asynchronously in this process: run crictl without blocking it.
    const result = await new Promise((resolve) => {
      execFile(crictl, args, {env: {PATH: process.env.PATH, TZ: tz ?? 'UTC', HOME: socketDir}}, (error, stdout, stderr) =>
        resolve({code: error ? (error.code ?? 1) : 0, stdout, stderr}),
      )
    })
    if (result.code === 0) {
      writeFileSync(join(OUT, `${name}.out`), result.stdout)
    } else {
      failures.push(`${name}: crictl ${argv.join(' ')} exited ${result.code}: ${result.stderr.trim()}`)
    }
  }

  const readme = [
    '# What the reference crictl printed',
    '',
    `Recorded by \`node scripts/crictl-golden.mjs /path/to/crictl\` with ${version}, against the fixture`,
    'runtime of test/support/crictl-fixtures.ts (TZ=UTC unless the case names a zone). One file per case of CRICTL_CASES; outputs only.',
    '',
  ]
  writeFileSync(join(OUT, 'README.md'), readme.join('\n'))
} finally {
  await stop()
  rmSync(work, {recursive: true, force: true})
  rmSync(socketDir, {recursive: true, force: true})
}

if (failures.length > 0) throw new Error(`crictl failed, nothing is recorded for these cases:\n${failures.join('\n')}`)

console.log(`recorded ${CRICTL_CASES.length} cases with ${version} into ${OUT}`)
