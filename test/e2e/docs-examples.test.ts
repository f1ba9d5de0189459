import {execFile, spawn} from 'node:child_process'
import {chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {afterAll, describe, expect, it} from 'vitest'

import {
  type DocBlock,
  docBlocks,
  docFiles,
  GENERATED_DOCS,
  isPodctlLine,
  namespacesIn,
  renameNamespaces,
  shellExpectation,
} from '../support/doc-examples.js'
import {PodLabel} from '../../src/lib/kube/labels.js'
import {labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {BIN, podctl, ROOT} from '../support/podctl.js'

/**
 * Issue 39 item 7: every example of README.md and docs/*.md runs on the quick start's lab as
 * written. Each doc is followed as a reader follows it, block after block in one directory: shell
 * lines run with this checkout's podctl and must exit as the doc says, Pod manifests are run (and
 * killed when the doc ends), other manifests are checked with --dry-run, .mjs examples run with
 * node against the built library, TypeScript ones type-check with tsc. A block that cannot run here
 * says so with `<!-- not-run: why -->` before its fence; those are counted and listed, never skipped
 * silently. Every namespace a doc names is replaced by one of the test's own.
 */
const run = promisify(execFile)
const client = labClient()
const work = mkdtempSync(join(tmpdir(), 'podctl-docs-examples-'))
const RUNNABLE = new Set(['sh', 'yaml', 'mjs', 'js', 'ts'])
const notRun: string[] = []
const typescript: {where: string; source: string}[] = []

afterAll(() => {
  client.close()
  rmSync(work, {recursive: true, force: true})
  console.log(`docs examples not run on the lab (${notRun.length}):\n${notRun.join('\n')}`)
})

/** A directory a doc's examples run in: podctl on PATH, examples/ copied with the test's namespaces, the library importable. */
function scratchFor(doc: string, renames: Map<string, string>): string {
  const dir = join(work, doc.replaceAll('/', '_'))
  mkdirSync(join(dir, 'bin'), {recursive: true})
  writeFileSync(join(dir, 'bin', 'podctl'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`)
  chmodSync(join(dir, 'bin', 'podctl'), 0o755)
  mkdirSync(join(dir, 'examples'))
  for (const name of readdirSync(join(ROOT, 'examples'))) {
    writeFileSync(join(dir, 'examples', name), renameNamespaces(readFileSync(join(ROOT, 'examples', name), 'utf8'), renames))
  }

  linkLibrary(dir)
  return dir
}

/** node_modules of `dir`: podctl is this checkout (its built dist), vitest and the Node types are its own. */
function linkLibrary(dir: string): void {
  mkdirSync(join(dir, 'node_modules'), {recursive: true})
  symlinkSync(ROOT, join(dir, 'node_modules', 'podctl'))
  symlinkSync(join(ROOT, 'node_modules', 'vitest'), join(dir, 'node_modules', 'vitest'))
  symlinkSync(join(ROOT, 'node_modules', '@types'), join(dir, 'node_modules', '@types'))
  writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n')
}

/** Every namespace the doc's runnable blocks and the examples they use name, each to one of the test's own. */
function namespaceRenames(blocks: DocBlock[]): Map<string, string> {
  const texts = blocks.filter((block) => !block.notRun).map((block) => block.lines.join('\n'))
  for (const name of readdirSync(join(ROOT, 'examples'))) texts.push(readFileSync(join(ROOT, 'examples', name), 'utf8'))
  const names = new Set(texts.flatMap((text) => namespacesIn(text)))
  return new Map([...names].map((name) => [name, uniqueNamespace(`doc-${name}`.slice(0, 40))]))
}

interface Outcome {
  code: number | null
  output: string
}

/**
 * One shell line in `dir`, as bash runs it. A line that runs until Ctrl-C gets SIGINT once it has
 * printed something and run 1 s more (so a slow start under load is not mistaken for running); it
 * must still be running then.
 */
function runLine(line: string, dir: string, untilCtrlC: boolean): Promise<Outcome & {stillRunning: boolean}> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    NO_COLOR: '1',
    ...labEnv(),
    PATH: `${join(dir, 'bin')}:${process.env.PATH}`,
  }
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key]
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-o', 'pipefail', '-c', line], {
      cwd: dir,
      env: env as NodeJS.ProcessEnv,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    let stillRunning = false
    let interrupt: NodeJS.Timeout | undefined
    const ctrlC = () => {
      stillRunning = true
      process.kill(-child.pid!, 'SIGINT')
    }

    const collect = (chunk: Buffer) => {
      output += chunk
      if (untilCtrlC && !interrupt) interrupt = setTimeout(ctrlC, 1000)
    }

    child.stdout.on('data', collect)
    child.stderr.on('data', collect)
    const limit = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 100_000)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(interrupt)
      clearTimeout(limit)
      // What the shell shows: a process that SIGINT ended exited 130 (128 + 2).
      resolve({code: signal === 'SIGINT' ? 130 : code, output, stillRunning})
    })
  })
}

async function runShellBlock(block: DocBlock, dir: string, renames: Map<string, string>): Promise<void> {
  for (const [offset, written] of block.lines.entries()) {
    const line = written.trim()
    if (line === '' || line.startsWith('#')) continue
    const where = `${block.where.split(':')[0]}:${block.firstLine + offset}`
    expect(isPodctlLine(line), `${where}: \`${line}\` is not a podctl command: make it one or mark the block <!-- not-run: why -->`).toBe(
      true,
    )
    const {exitCode, untilCtrlC} = shellExpectation(line)
    const result = await runLine(renameNamespaces(line.replace(/^\$ /, ''), renames), dir, untilCtrlC)
    if (untilCtrlC) {
      // Ctrl-C ends it as a user ends it: exit 0, or 130 as the shell reports SIGINT; anything else is a failure.
      expect(result.stillRunning, `${where}: \`${line}\` ended before Ctrl-C, or printed nothing:\n${result.output}`).toBe(true)
      expect([exitCode, 130], `${where}: \`${line}\` after Ctrl-C:\n${result.output}`).toContain(result.code)
    } else {
      expect(result.code, `${where}: \`${line}\`:\n${result.output}`).toBe(exitCode)
    }
  }
}

/** A manifest block: Pods run for real (killed when the doc ends), anything else is checked with --dry-run. */
async function runManifestBlock(block: DocBlock, dir: string, renames: Map<string, string>): Promise<void> {
  const file = join(dir, `block-${block.firstLine}.yaml`)
  const text = renameNamespaces(block.lines.join('\n'), renames)
  writeFileSync(file, text)
  const pods = /^kind: Pod$/m.test(text) && !/^kind: (?!Pod$)/m.test(text)
  const result = await podctl(['run', '-f', file, ...(pods ? [] : ['--dry-run'])], {env: labEnv()})
  expect(result.code, `${block.where}: podctl run -f${pods ? '' : ' --dry-run'}:\n${result.stderr}`).toBe(0)
}

async function runScriptBlock(block: DocBlock, dir: string, renames: Map<string, string>): Promise<void> {
  const file = join(dir, `block-${block.firstLine}.mjs`)
  writeFileSync(file, renameNamespaces(block.lines.join('\n'), renames))
  const result = await run(process.execPath, [file], {
    cwd: dir,
    env: {...process.env, ...labEnv()} as NodeJS.ProcessEnv,
    timeout: 110_000,
  }).then(
    ({stdout, stderr}) => ({code: 0, output: stdout + stderr}),
    (error: {code: number; stdout: string; stderr: string}) => ({code: error.code, output: `${error.stdout}${error.stderr}`}),
  )
  expect(result.code, `${block.where}: node ${block.lang} example:\n${result.output}`).toBe(0)
}

/** Runs a block by its language; TypeScript is collected for one tsc run over every doc's examples. */
async function runBlock(block: DocBlock, dir: string, renames: Map<string, string>): Promise<void> {
  switch (block.lang) {
    case 'sh': {
      return runShellBlock(block, dir, renames)
    }

    case 'yaml': {
      return runManifestBlock(block, dir, renames)
    }

    case 'ts': {
      typescript.push({where: block.where, source: block.lines.join('\n')})
      return
    }

    default: {
      return runScriptBlock(block, dir, renames)
    }
  }
}

/** The names of the manifests a doc's runnable blocks and the examples give (`name: X`): the pods it may make. */
function namesIn(blocks: DocBlock[]): Set<string> {
  const texts = blocks.filter((block) => !block.notRun).map((block) => block.lines.join('\n'))
  for (const name of readdirSync(join(ROOT, 'examples'))) texts.push(readFileSync(join(ROOT, 'examples', name), 'utf8'))
  return new Set(texts.flatMap((text) => [...text.matchAll(/\bname: *["']?([a-z0-9][a-z0-9.-]*)/g)].map((match) => match[1])))
}

/**
 * Sandboxes of the doc's pod names in namespace `default` made since `sinceMs`: an example that
 * names no namespace would leave its pod there, out of the test's reach, so a doc must name one.
 * (Only the doc's names: other files beside this one may run their own pods there.)
 */
async function leftInDefault(names: Set<string>, sinceMs: number): Promise<string[]> {
  const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {[PodLabel.namespace]: 'default'}}})
  return items
    .filter((pod) => names.has(pod.metadata?.name ?? '') && BigInt(String(pod.createdAt)) >= BigInt(sinceMs) * 1_000_000n)
    .map((pod) => `${pod.metadata?.name} (${pod.id})`)
}

/** Kills every pod of the doc's namespaces (all the test's own) and proves none is left. */
async function killPods(renames: Map<string, string>): Promise<void> {
  for (const namespace of renames.values()) {
    if ((await sandboxesIn(client, namespace)).length === 0) continue
    const killed = await podctl(['kill', '--all', '-n', namespace, '--grace-period', '0'], {env: labEnv()})
    expect(killed.code, killed.stderr).toBe(0)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  }
}

describe.each(docFiles(ROOT))('%s', (doc) => {
  const blocks = docBlocks(ROOT, doc)

  it('runs every example on the lab as written, or says why not', async () => {
    const renames = namespaceRenames(blocks)
    const dir = scratchFor(doc, renames)
    const started = Date.now()
    try {
      for (const block of blocks) {
        if (block.notRun) {
          notRun.push(`${block.where} (${block.lang || 'bare fence'}): ${block.notRun}`)
          continue
        }

        expect(
          RUNNABLE.has(block.lang),
          `${block.where}: a \`${block.lang || 'bare'}\` fence runs nowhere: make it sh, yaml, mjs or ts, or mark it <!-- not-run: why -->`,
        ).toBe(true)
        await runBlock(block, dir, renames)
      }
    } finally {
      await killPods(renames)
    }

    expect(
      await leftInDefault(namesIn(blocks), started),
      `${doc}: pods its examples left in namespace default: name a namespace (-n) in the example`,
    ).toEqual([])
  })
})

describe('TypeScript examples', () => {
  it('type-check with tsc --strict against the built library', async () => {
    const dir = join(work, 'typescript')
    mkdirSync(dir, {recursive: true})
    linkLibrary(dir)
    const compilerOptions = {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: 'ES2022',
      module: 'nodenext',
      lib: ['ES2022', 'ESNext.Disposable'],
      types: ['node'],
    }
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({compilerOptions, include: ['*.ts']}))
    for (const [index, {source}] of typescript.entries()) writeFileSync(join(dir, `example-${index}.ts`), source)
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
    const result = await run(process.execPath, [tsc, '-p', dir], {cwd: dir}).then(
      ({stdout}) => stdout,
      (error: {stdout: string}) => error.stdout,
    )
    const where = typescript.map(({where}, index) => `example-${index}.ts: ${where}`).join('\n')
    expect(result, `tsc:\n${where}`).toBe('')
  })
})

describe('docs that are not examples', () => {
  it('are named with the reason', () => {
    for (const [doc, why] of GENERATED_DOCS) notRun.push(`${doc} (every fence): ${why}`)
    expect(readdirSync(join(ROOT, 'docs'))).toEqual(
      expect.arrayContaining([...GENERATED_DOCS.keys()].map((doc) => doc.slice('docs/'.length))),
    )
  })
})
