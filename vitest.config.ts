import {defineConfig} from 'vitest/config'

/**
 * End-to-end files that start a stand-in kubelet on the lab's runtime socket. While one runs, every
 * podctl that creates pods on the lab is refused (exit 17) — that is what they test — so they run
 * after everything else, one file at a time (each in a group of its own).
 */
const BESIDE_KUBELET = ['test/e2e/kubelet-guard.test.ts', 'test/e2e/static-pods.test.ts']

/**
 * The cross-runtime suite: what every runtime of the lab must do alike (run, kill, sync, probes,
 * logs, exec, streams, the crictl personality, and what users see of images, pods and stats). CI
 * runs it on each runtime (`PODCTL_LAB_RUNTIME=crio npm run test:runtimes`); `npm test` runs it
 * with the rest on the default runtime.
 */
const RUNTIMES_SUITE = [
  'test/e2e/lab-fresh.test.ts',
  'test/e2e/run.test.ts',
  'test/e2e/run-concurrent.test.ts',
  'test/e2e/run-late-signal.test.ts',
  'test/e2e/kill.test.ts',
  'test/e2e/kill-record.test.ts',
  'test/e2e/sync.test.ts',
  'test/e2e/sync-supervise.test.ts',
  'test/e2e/sync-workers.test.ts',
  'test/e2e/sync-status.test.ts',
  'test/e2e/probes.test.ts',
  'test/e2e/logs.test.ts',
  'test/e2e/exec.test.ts',
  'test/e2e/streams.test.ts',
  'test/e2e/pull.test.ts',
  'test/e2e/ps.test.ts',
  'test/e2e/pods.test.ts',
  'test/e2e/stats.test.ts',
  'test/e2e/inspect.test.ts',
  'test/e2e/status-pod.test.ts',
  'test/e2e/sandbox-commands.test.ts',
  'test/e2e/volumes.test.ts',
  'test/e2e/crictl-e2e.test.ts',
  'test/e2e/crictl-front.test.ts',
  'test/e2e/crictl-surface.test.ts',
  'test/e2e/crictl-text.test.ts',
  'test/e2e/crictl-configs.test.ts',
]

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
      {extends: true, test: {name: 'podctl', include: ['test/**/*.test.ts'], exclude: [...BESIDE_KUBELET, ...RUNTIMES_SUITE]}},
      {extends: true, test: {name: 'runtimes', include: RUNTIMES_SUITE}},
      ...BESIDE_KUBELET.map((file, index) => ({
        extends: true as const,
        test: {name: `beside a kubelet ${index + 1}`, include: [file], sequence: {groupOrder: index + 1}},
      })),
    ],
  },
})
