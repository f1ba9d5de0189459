#!/usr/bin/env node
// Records what the reference crictl v1.37.0 prints for command lines that never change the runtime
// (help, usage, flag errors, commands without their arguments) into test/fixtures/crictl/reference.json,
// which test/unit/crictl/*.test.ts compare podctl's crictl front with byte for byte. Timestamps of
// logrus lines are replaced by TIME, and the program's directory (where crictl looks for crictl.yaml
// when /etc/crictl.yaml is missing) by PROGRAM_DIR. No case runs `config`'s Action, which would
// write the config file.
//
//   CRICTL=/var/cache/podctl-lab/bin/crictl-v1.37.0/crictl CONTAINER_RUNTIME_ENDPOINT=unix:///… node scripts/record-crictl-fixtures.mjs
import {spawnSync} from 'node:child_process'
import {dirname} from 'node:path'
import {writeFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

const crictl = process.env.CRICTL ?? '/var/cache/podctl-lab/bin/crictl-v1.37.0/crictl'
const out = fileURLToPath(new URL('../test/fixtures/crictl/reference.json', import.meta.url))

const commands = [
  'attach',
  'create',
  'exec',
  'version',
  'images',
  'inspect',
  'inspecti',
  'imagefsinfo',
  'inspectp',
  'logs',
  'port-forward',
  'ps',
  'pull',
  'run',
  'runp',
  'rm',
  'rmi',
  'rmp',
  'pods',
  'start',
  'info',
  'stop',
  'stopp',
  'update',
  'config',
  'stats',
  'statsp',
  'metricdescs',
  'metricsp',
  'completion',
  'checkpoint',
  'runtime-config',
  'events',
  'update-runtime-config',
  'help',
]
/** Commands whose missing or extra arguments are answered before any runtime call changes anything. */
const withoutArgs = [
  'attach',
  'create',
  'exec',
  'inspect',
  'inspecti',
  'inspectp',
  'logs',
  'port-forward',
  'pull',
  'run',
  'runp',
  'rm',
  'rmi',
  'rmp',
  'start',
  'stop',
  'stopp',
  'update',
  'checkpoint',
]
const cases = [
  [],
  ['help'],
  ['h'],
  ['-h'],
  ['--help'],
  ['--help=false'],
  ['--version'],
  ['-v'],
  ['--invalid'],
  ['-invalid'],
  ['--timeout'],
  ['--timeout', 'abc', 'ps'],
  ['-D=maybe', 'ps'],
  ['foo'],
  ['help', 'foo'],
  ['-h', 'ps'],
  ['help', 'help'],
  ['---x'],
  ['-=x'],
  ['ps', '--bogus'],
  ['ps', '-x'],
  ['ps', '-n', 'abc'],
  ['ps', '-n'],
  ['ps', '-h', 'foo'],
  ['ps', 'help'],
  ['ps', 'help', 'foo'],
  ['ps', 'help', 'help'],
  ['ps', 'h'],
  ['ps', 'extra'],
  ['pods', 'extra'],
  ['info', 'extra'],
  ['images', 'a', 'b'],
  ['stats', 'a', 'b'],
  ['statsp', 'a', 'b'],
  ['logs', 'a', 'b'],
  ['attach', 'a', 'b'],
  ['exec', 'abc'],
  ['exec', '-it'],
  ['exec', '-ix'],
  ['exec', '--timeout=x', 'a', 'b'],
  ['run', 'a'],
  ['create', 'a', 'b'],
  ['completion', 'a', 'b'],
  ['rm', '-h'],
  ['rm', '--help'],
  ['exec', '-h'],
  ['config', '-h'],
  ['completion', '-h'],
  ['metricsp', 'extra'],
  ['events', 'extra'],
  ['version', '-h'],
  ['-c'],
  ['-r=', 'ps', '-h'],
  ['rmi', '-q=x'],
  ...commands.map((command) => ['help', command]),
  ...commands.map((command) => [command, '-h']),
  ...commands.map((command) => [command, '--no-such-flag']),
  ...withoutArgs.map((command) => [command]),
]

const env = {...process.env, NO_COLOR: '1'}
delete env.CRI_CONFIG_FILE
const recorded = cases.map((args) => {
  const result = spawnSync(crictl, args, {env, encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe']})
  const stderr = result.stderr.replaceAll(/time="[^"]+"/g, 'time="TIME"').replaceAll(dirname(crictl), 'PROGRAM_DIR')
  return {args, stdout: result.stdout, stderr, exit: result.status}
})
writeFileSync(out, `${JSON.stringify(recorded, null, 1)}\n`)
console.error(`recorded ${recorded.length} command lines into ${out}`)
