/** What every handle of one connection shares: the client and the node's directories, as the CLI's flags give them. */
import type {CriClient} from '../cri/client.js'

export interface ApiContext {
  client: CriClient
  /** --pod-logs-root: the pods' log directories. */
  podLogsRoot: string
  /** --pod-dir-root: the pods' host directories (volumes, /etc/hosts, the recorded manifest). */
  podDirRoot: string
  /** --claims-root: the PersistentVolumeClaims' directories. */
  claimsRoot: string
}
