// Messages between the main thread (runner.ts) and the webhook worker (worker.ts).
import type { LogLevel } from '../../config.ts'
import type { AttemptResult, DeliveryJob } from './send.ts'
import type { ChatSettings } from '../integrations/delivery.ts'

export interface WorkerSettings {
  /** `claim`: the worker runs the loop on its own connections (Postgres). `send`: it only sends (PGlite). */
  mode: 'claim' | 'send'
  databaseUrl?: string
  owner: number
  /** Raw bytes of the sealing key (Secrets.sealingKey): a CryptoKey cannot be posted to a worker. */
  sealingKey: Uint8Array
  allowPrivate: boolean
  retryScale: number
  dnsResolver: string | undefined
  logLevel: LogLevel
  sentBy: string
  pollMs?: number
  /** Attempts on the wire at once (loop.ts `maxSending`). */
  maxSending?: number
  /** What the chat queue needs where the loop runs (the worker, on Postgres). */
  chat: ChatSettings
}

export type ToWorker =
  | { type: 'start'; settings: WorkerSettings }
  | { type: 'send'; id: number; job: DeliveryJob }
  | { type: 'stop' }

export type ToMain =
  | { type: 'ready' }
  | { type: 'result'; id: number; result: AttemptResult }
  | { type: 'fatal'; error: string }
  | { type: 'stopped' }
