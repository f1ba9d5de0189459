import {readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {GRPC_LAZY_REQUIRES} from '../../../scripts/bundle/grpc-patches.mjs'
import {lazyRequire} from '../../../scripts/bundle/oclif-patches.mjs'

const grpcSrc = join(dirname(createRequire(import.meta.url).resolve('@grpc/grpc-js/package.json')), 'build', 'src')

describe("the bundle's grpc-js patches", () => {
  it('find each lazy require once in the installed @grpc/grpc-js', () => {
    for (const [file, specifiers] of Object.entries(GRPC_LAZY_REQUIRES)) {
      let source = readFileSync(join(grpcSrc, file), 'utf8')
      for (const specifier of specifiers) source = lazyRequire(source, specifier, file)
      expect(source.match(/ = __podctlLazyModule\(\(\) => /g), file).toHaveLength(specifiers.length)
    }
  })

  it('leave the server side to the modules made lazy: no other client module requires it', () => {
    const lazy = new Set(GRPC_LAZY_REQUIRES['index.js'])
    const eager = ['index.js', 'channelz.js', 'client.js', 'channel.js', 'internal-channel.js', 'load-balancer-pick-first.js']
    for (const file of eager) {
      let source = readFileSync(join(grpcSrc, file), 'utf8')
      for (const specifier of GRPC_LAZY_REQUIRES[file] ?? []) source = lazyRequire(source, specifier, file)
      for (const specifier of lazy)
        expect(source, `${file} requires ${specifier}`).not.toMatch(new RegExp(`^(const|var) \\w+ = require\\("${specifier}"\\);$`, 'm'))
    }
  })
})
