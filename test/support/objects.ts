import {readFileSync} from 'node:fs'

import {ROOT} from './podctl.js'

/**
 * A fixture of test/fixtures with every document moved into `namespace` (the test's own), the
 * text otherwise unchanged, so YAML 1.1 details such as `defaultMode: 0400` stay as written.
 */
export function fixtureIn(path: string, namespace: string): string {
  const text = readFileSync(`${ROOT}test/fixtures/${path}`, 'utf8')
  return text.replaceAll(/^ {2}namespace: .*\n/gm, '').replaceAll(/^metadata:\n/gm, `metadata:\n  namespace: ${namespace}\n`)
}

/** Mount points below a directory in the host's /proc/mounts. */
export function hostMountsUnder(dir: string): string[] {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1])
    .filter((point): point is string => point !== undefined && point.startsWith(dir))
}
