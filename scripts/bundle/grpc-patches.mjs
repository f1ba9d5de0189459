// A start-up cost of @grpc/grpc-js that the bundle avoids: its index loads the server side (Server,
// its credentials and interceptors, ORCA load reports, the experimental API) on every start, and a
// CRI client never uses it. Inside the bundle only (node_modules is untouched), those requires load
// on first use, with the checks of the oclif patches: if grpc-js's source changes, the build fails.
import {sourcePatches} from './oclif-patches.mjs'

/** file (below @grpc/grpc-js/build/src/) → modules it `require`s at load that a client never reads. */
export const GRPC_LAZY_REQUIRES = {
  'index.js': ['./server', './server-credentials', './server-interceptors', './orca', './experimental'],
  // ORCA metrics are read only while a weighted round-robin policy is picking, never with pick_first.
  'load-balancer-weighted-round-robin.js': ['./orca'],
}

/** A rolldown plugin applying GRPC_LAZY_REQUIRES; the build fails if any of those files was never bundled. */
export function grpcPatches() {
  return sourcePatches({name: 'podctl-grpc-patches', packageDir: '@grpc/grpc-js/build/src', lazyRequires: GRPC_LAZY_REQUIRES})
}
