import {defineConfig} from 'vitest/config'

/**
 * End-to-end files that start a stand-in kubelet on the lab's runtime socket. While one runs, every
 * podctl that creates pods on the lab is refused (exit 17) — that is what they test — so they run
 * after everything else, one file at a time (each in a group of its own).
 */
const BESIDE_KUBELET = ['test/e2e/kubelet-guard.test.ts', 'test/e2e/static-pods.test.ts']

export default defineConfig({
  test: {
    // End-to-end tests start real pods; give the runtime time, and keep two files in flight at most
    // (two cores) so timings stay honest.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      {extends: true, test: {name: 'podctl', include: ['test/**/*.test.ts'], exclude: BESIDE_KUBELET}},
      ...BESIDE_KUBELET.map((file, index) => ({
        extends: true as const,
        test: {name: `beside a kubelet ${index + 1}`, include: [file], sequence: {groupOrder: index + 1}},
      })),
    ],
  },
})
