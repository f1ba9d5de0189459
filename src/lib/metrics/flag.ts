import {Flags} from '@oclif/core'

/** --metrics-address, shared by the commands that run the supervisor (sync --watch, run --supervise). */
export const metricsAddressFlag = Flags.string({
  summary: "Serve the supervisor's Prometheus metrics at http://HOST:PORT/metrics (loopback unless HOST says otherwise; port 0: any).",
  helpValue: 'HOST:PORT',
})
