import {existsSync} from 'node:fs'
import {describe, expect, it} from 'vitest'

import {BaseCommand} from '../../../src/lib/base-command.js'
import {decide} from '../../../src/lib/crictl/front.js'
import {CRICTL_COMMANDS} from '../../../src/lib/crictl/command-table.js'
import {podctlFlagName, toPodctlArgv, TRANSLATIONS, UnsupportedFlagError} from '../../../src/lib/crictl/translate.js'

/** The podctl argv a crictl command line runs as. */
function translate(argv: string[]): string[] {
  const outcome = decide(argv, '0.1.0')
  if (outcome.kind !== 'run') throw new Error(`crictl ${argv.join(' ')} did not run: ${JSON.stringify(outcome)}`)
  return toPodctlArgv(outcome.invocation, {})
}

describe('crictl command lines as podctl command lines', () => {
  it.each([
    [
      ['ps', '-l'],
      ['ps', '--latest'],
    ],
    [
      ['pods', '-l'],
      ['pods', '--latest'],
    ],
    [
      ['ps', '-n', '3', '-q'],
      ['ps', '--last=3', '--quiet'],
    ],
    [
      ['ps', '-v'],
      ['ps', '--verbose'],
    ],
    [
      ['pods', '-v', '-s', 'ready'],
      ['pods', '--state=ready', '--verbose'],
    ],
    [
      ['rmi', '-q'],
      ['rmi', '--prune'],
    ],
    [
      ['rmi', '-a'],
      ['rmi', '--all'],
    ],
    [
      ['run', 'c.json', 'p.json'],
      ['run', '--container-config=c.json', '--pod-config=p.json'],
    ],
    [
      ['run', '-r', 'kata', '-t', '30s', 'c.json', 'p.json'],
      ['run', '--runtime-handler=kata', '--timeout=30000ms', '--container-config=c.json', '--pod-config=p.json'],
    ],
    [
      ['runp', '-r', 'test-handler', 'p.json'],
      ['runp', '--runtime-handler=test-handler', 'p.json'],
    ],
    [
      ['exec', 'abc', 'echo', 'hi'],
      ['exec', 'abc', '--', 'echo', 'hi'],
    ],
    [
      ['exec', '-s', 'abc', 'echo', 'hi'],
      ['exec', '--sync', 'abc', '--', 'echo', 'hi'],
    ],
    [
      ['exec', '-it', 'abc', 'sh'],
      ['exec', '--interactive', '--tty', 'abc', '--', 'sh'],
    ],
    [
      ['exec', '--timeout', '5', 'abc', 'ls', '-l'],
      ['exec', '--timeout=5s', 'abc', '--', 'ls', '-l'],
    ],
    [
      ['attach', '-i', 'abc'],
      ['attach', '--interactive', 'abc'],
    ],
    [
      ['stop', '-t', '10', 'abc'],
      ['stop', '--timeout=10s', 'abc'],
    ],
    [
      ['inspectp', '-o', 'json', 'web'],
      ['inspect', 'pod', '--output=json', 'web'],
    ],
    [
      ['inspecti', 'busybox'],
      ['inspect', 'image', 'busybox'],
    ],
    [
      ['img', '-q'],
      ['images', '--quiet'],
    ],
    [['event'], ['events']],
    [
      ['update', '--cpu-share', '512', 'abc'],
      ['update', '--cpu-shares=512', 'abc'],
    ],
    [
      ['config', '--set', 'debug=true,timeout=5'],
      ['config', '--set=debug=true', '--set=timeout=5'],
    ],
    [
      ['logs', '--tail', '5', 'abc'],
      ['logs', '--tail=5', 'abc'],
    ],
    [
      ['rm', 'abc', '-f'],
      ['rm', '--', 'abc', '-f'],
    ],
  ])('crictl %j is podctl %j', (crictl, podctl) => {
    expect(translate(crictl)).toEqual(podctl)
  })

  it("puts the app's flags behind the command, long, and leaves crictl's defaults to podctl", () => {
    expect(translate(['-r', 'unix:///x.sock', '-i', 'unix:///i.sock', '-t', '5s', '-D', 'ps', '--label', 'a=b,c=d'])).toEqual([
      'ps',
      '--runtime-endpoint=unix:///x.sock',
      '--image-endpoint=unix:///i.sock',
      '--timeout=5000ms',
      '--debug',
      '--label=a=b',
      '--label=c=d',
    ])
    expect(translate(['-c', '/etc/other.yaml', '--timeout=0', 'info'])).toEqual(['info', '--config=/etc/other.yaml'])
    // exec, stop and run: podctl's --timeout is the command's own limit there, so crictl's connection timeout stays out.
    expect(translate(['-t', '5s', 'stop', 'abc'])).toEqual(['stop', 'abc'])
  })

  it("takes pull's --creds and --auth from CRICTL_CREDS and CRICTL_AUTH when not given, as urfave does", () => {
    const outcome = decide(['pull', 'busybox'], '0.1.0')
    if (outcome.kind !== 'run') throw new Error('pull did not run')
    expect(toPodctlArgv(outcome.invocation, {CRICTL_CREDS: 'me:secret', CRICTL_AUTH: ''})).toEqual(['pull', '--creds=me:secret', 'busybox'])
    expect(toPodctlArgv(outcome.invocation, {})).toEqual(['pull', 'busybox'])
  })

  it('refuses, as crictl would fail, an empty runtime endpoint and the flags podctl cannot honour', () => {
    expect(decide(['-r=', 'ps'], '0.1.0')).toMatchObject({kind: 'exit', exit: 1, fatal: '--runtime-endpoint is not set'})
    const invocation = decide(['run', '--username', 'me', 'c.json', 'p.json'], '0.1.0')
    expect(invocation.kind).toBe('run')
    if (invocation.kind !== 'run') return
    expect(() => toPodctlArgv(invocation.invocation)).toThrow(UnsupportedFlagError)
    expect(() => toPodctlArgv(invocation.invocation)).toThrow('crictl run --username is not supported: podctl asks for no password')
  })
})

/** podctl flags other helpers add on their branches (issue 20); checked once they exist. */
const PENDING_FLAGS: Readonly<Record<string, readonly string[]>> = {ps: ['verbose'], pods: ['verbose']}

describe('every crictl flag maps to a flag the podctl command has', () => {
  for (const command of CRICTL_COMMANDS.filter(({name}) => name !== 'help')) {
    const translation = TRANSLATIONS[command.name]
    const file = new URL(`../../../src/commands/${translation?.to[0]}.ts`, import.meta.url)
    // runtime-config, metricsp and checkpoint come with another helper's branch; checked once the command exists.
    const test = existsSync(file) ? it : it.skip
    test(`crictl ${command.name} → podctl ${translation?.to.join(' ')}`, async () => {
      expect(translation, 'a translation for every crictl command').toBeDefined()
      const {default: podctl} = (await import(file.href)) as {default: typeof BaseCommand}
      const flags = new Set(Object.keys({...BaseCommand.baseFlags, ...podctl.baseFlags, ...podctl.flags}))
      const missing = command.flags
        .map((flag) => podctlFlagName(command.name, flag.name))
        .filter((name): name is string => name !== undefined)
        .filter((name) => !flags.has(name) && !PENDING_FLAGS[translation.to[0]]?.includes(name))
      expect(missing).toEqual([])
    })
  }
})
