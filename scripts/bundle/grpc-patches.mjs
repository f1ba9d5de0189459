// A start-up cost of @grpc/grpc-js that the bundle avoids: its index loads the server side (Server,
// its credentials and interceptors, ORCA load reports, the experimental API) on every start, and a
// CRI client never uses it. Inside the bundle only (node_modules is untouched), those requires load
// on first use, with the checks of the oclif patches: if grpc-js's source changes, the build fails.
import {LAZY_MODULE, lazyRequire} from './oclif-patches.mjs'

/** file (below @grpc/grpc-js/build/src/) → modules it `require`s at load that a client never reads. */
export const GRPC_LAZY_REQUIRES = {
  'index.js': ['./server', './server-credentials', './server-interceptors', './orca', './experimental'],
  // ORCA metrics are read only while a weighted round-robin policy is picking, never with pick_first.
  'load-balancer-weighted-round-robin.js': ['./orca'],
}

const GRPC_SRC = /[\\/]node_modules[\\/]@grpc[\\/]grpc-js[\\/]build[\\/]src[\\/](.+)$/

/** A rolldown plugin applying GRPC_LAZY_REQUIRES; buildEnd fails if any of those files was never bundled. */
export function grpcPatches() {
  const applied = new Set()
  return {
    name: 'podctl-grpc-patches',
    transform: {
      filter: {id: /[\\/]@grpc[\\/]grpc-js[\\/]build[\\/]src[\\/]/},
      handler(code, id) {
        const file = GRPC_SRC.exec(id)?.[1].replaceAll('\\', '/')
        const specifiers = file && GRPC_LAZY_REQUIRES[file]
        if (!specifiers) return null
        let out = code
        for (const specifier of specifiers) out = lazyRequire(out, specifier, `@grpc/grpc-js/build/src/${file}`)
        applied.add(file)
        return {code: `${out}\n${LAZY_MODULE}`, map: null}
      },
    },
    buildEnd(error) {
      if (error) return
      const missing = Object.keys(GRPC_LAZY_REQUIRES).filter((file) => !applied.has(file))
      if (missing.length > 0)
        throw new Error(`@grpc/grpc-js changed: ${missing.join(', ')} no longer bundled; update scripts/bundle/grpc-patches.mjs`)
    },
  }
}
